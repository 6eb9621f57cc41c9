"""Nineteen patterns as people write them, each with a text it matches: the per-step mask
and first-mask benchmark's set (``bench/mask_bench.py``), beside the seed patterns of
``bench/index_bench.py``.

Chosen where a mask is costly to make: ``key="value"`` lists (a quoted string that reads
almost every token, inside a repeat), ``.*``-led patterns (every state reads every byte),
counted repeats inside counted repeats (many states alike), and JSON Schemas as people
write them (unbounded strings, numbers, nested objects, arrays, optional fields, enums),
made into regexes by ``regex_from_schema`` with its default whitespace.
"""

from __future__ import annotations

import json

import regex

from bench.order_sample import ORDER

PATTERNS: dict[str, tuple[str, str]] = {  # name: (pattern, a text it matches)
    "kv_list": (
        r'[a-z_]+="[^"]*"(, [a-z_]+="[^"]*")*',
        'name="Ada Lovelace", role="admin", city="London"',
    ),
    "kv_two": (r'[a-z]+="[^"\n]*", [a-z]+="[^"\n]*"', 'key="value one", other="value two"'),
    "kv_counted": (r'([a-z]{1,10}="[a-z0-9 ]{0,20}"; ){1,8}', 'host="db1"; port="5432"; '),
    "dot_a": (r".*a", "the cat sat on a sofa"),
    "dot_keyword": (r".*(error|warning): [A-Za-z ]+", "at line 3 error: Missing colon"),
    "dot_digits": (r".*[0-9]{3}", "the code is 042"),
    "counted_in_counted": (r"([a-z]{2,5}[0-9]{1,3}){2,6}", "ab12cde345fg6"),
    "counted_groups": (r"(([0-9a-f]{2}:){5}[0-9a-f]{2}, ){1,4}", "00:1a:2b:3c:4d:5e, "),
    "counted_words": (r"(([A-Z][a-z]{1,10} ){1,4}[a-z]{1,8}\. ){1,3}", "The Cat sat. "),
    "csv_row": (r"([^,\n]{1,20},){3}[^,\n]{1,20}", "Ada,Lovelace,1815,London"),
    "sql": (
        r"SELECT [a-z_]+(, [a-z_]+)* FROM [a-z_]+( WHERE [a-z_]+ = [0-9]+)?;",
        "SELECT id, name FROM users WHERE id = 42;",
    ),
}

SCHEMAS: dict[str, tuple[dict, object]] = {  # name: (schema, an instance)
    "schema_person": (
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "email": {"type": "string"},
                "nickname": {"type": "string"},
            },
            "required": ["name", "age"],
        },
        {"name": "Ada", "age": 36, "email": "ada@example.org"},
    ),
    "schema_product": (
        {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "title": {"type": "string"},
                "price": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "in_stock": {"type": "boolean"},
            },
            "required": ["id", "title", "price", "tags", "in_stock"],
        },
        {"id": 7, "title": "Lamp", "price": 19.5, "tags": ["home", "light"], "in_stock": True},
    ),
    "schema_ticket": (
        {
            "type": "object",
            "properties": {
                "status": {"enum": ["open", "pending", "closed"]},
                "priority": {"enum": ["low", "medium", "high", "urgent"]},
                "assignee": {"type": ["string", "null"]},
                "summary": {"type": "string"},
            },
            "required": ["status", "priority", "assignee", "summary"],
        },
        {"status": "open", "priority": "high", "assignee": None, "summary": "Printer on fire"},
    ),
    "schema_nested": (
        {
            "type": "object",
            "properties": {
                "user": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "address": {
                            "type": "object",
                            "properties": {
                                "street": {"type": "string"},
                                "city": {"type": "string"},
                            },
                            "required": ["street", "city"],
                        },
                    },
                    "required": ["name", "address"],
                },
                "location": {"type": "array", "items": {"type": "number"}},
            },
            "required": ["user", "location"],
        },
        {
            "user": {"name": "Ada", "address": {"street": "12 Row", "city": "London"}},
            "location": [51.5, -0.12],
        },
    ),
    "schema_items": (
        {
            "type": "object",
            "properties": {
                "order": {"type": "string"},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer"},
                            "note": {"type": "string"},
                        },
                        "required": ["sku", "qty"],
                    },
                },
            },
            "required": ["order", "items"],
        },
        {"order": "A-1", "items": [{"sku": "x1", "qty": 2}, {"sku": "y2", "qty": 1}]},
    ),
    "schema_event": (
        {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "start": {"type": "string", "format": "date-time"},
                "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "online": {"type": "boolean"},
            },
            "required": ["title", "start", "attendees", "online"],
        },
        {"title": "Standup", "start": "2024-05-17T09:00:00Z", "attendees": ["ada"], "online": True},
    ),
    "schema_22_unbounded": (
        {
            "type": "object",
            "properties": {
                **{
                    name: {"type": "string"}
                    for name in (
                        "order_id",
                        "customer",
                        "email",
                        "phone",
                        "coupon",
                        "notes",
                        "created",
                    )
                },  # fmt: skip
                "status": {"enum": ["pending", "paid", "shipped", "delivered", "cancelled"]},
                "currency": {"enum": ["EUR", "USD", "GBP", "JPY"]},
                "total": {"type": "number"},
                "tax": {"type": "number"},
                "discount": {"type": "number"},
                "items_count": {"type": "integer"},
                "gift": {"type": "boolean"},
                "express": {"type": "boolean"},
                "paid": {"type": "boolean"},
                "rating": {"type": "integer"},
                "channel": {"enum": ["web", "app", "store", "phone"]},
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                        "zip": {"type": "string"},
                        "country": {"enum": ["FR", "DE", "GB", "US", "JP"]},
                    },
                    "required": ["street", "city", "zip", "country"],
                },
                "tags": {"type": "array", "items": {"type": "string"}},
                "weight_kg": {"type": "number"},
                "loyalty_points": {"type": "integer"},
            },
            "required": [
                "order_id",
                "customer",
                "email",
                "phone",
                "status",
                "currency",
                "total",
                "tax",
                "discount",
                "items_count",
                "gift",
                "express",
                "paid",
                "coupon",
                "notes",
                "created",
                "rating",
                "channel",
                "address",
                "tags",
                "weight_kg",
                "loyalty_points",
            ],  # fmt: skip
        },
        ORDER,
    ),
    "schema_optional_all": (
        {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer"},
                "c": {"type": "boolean"},
                "d": {"type": "number"},
            },
        },
        {"b": 3, "d": 1.5},
    ),
}


def mask_patterns() -> dict[str, tuple[str, str]]:
    """name -> (pattern, a matching text): ``PATTERNS`` and the ``SCHEMAS`` as regexes, each
    text checked against its pattern."""
    from fsmviz.schema.convert import regex_from_schema

    cases = dict(PATTERNS)
    for name, (schema, instance) in SCHEMAS.items():
        pattern = regex_from_schema(json.dumps(schema))
        # The regex writes the properties in the schema's order.
        instance = {key: instance[key] for key in schema["properties"] if key in instance}
        text = json.dumps(instance, separators=(", ", ": "))
        if not regex.fullmatch(pattern, text):
            text = json.dumps(instance, separators=(",", ":"))
        cases[name] = (pattern, text)
    for name, (pattern, text) in cases.items():
        if not regex.fullmatch(pattern, text):
            raise ValueError(f"mask bench sample for {name!r} does not match its pattern")
    return cases
