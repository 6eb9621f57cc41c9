"""One customer order of 22 fields: the text both benchmarks walk for their 22-field schemas.

``bench/index_bench.py`` matches it against the regex of ``bench/schema22.json`` (bounded
strings), ``bench/mask_patterns.py`` against the same schema with unbounded strings. Each
writes the fields in its schema's order, which is this one.
"""

from __future__ import annotations

ORDER = {
    "order_id": "A-1042",
    "customer": "Ada Lovelace",
    "email": "ada@example.org",
    "phone": "+44 20 7946",
    "status": "shipped",
    "currency": "GBP",
    "total": 129.5,
    "tax": 21.58,
    "discount": 0,
    "items_count": 3,
    "gift": False,
    "express": True,
    "paid": True,
    "coupon": "SPRING",
    "notes": "leave at door",
    "created": "2024-05-17",
    "rating": 5,
    "channel": "web",
    "address": {"street": "12 Analytical Row", "city": "London", "zip": "N1 9GU", "country": "GB"},
    "tags": ["gift", "fragile"],
    "weight_kg": 2.25,
    "loyalty_points": 120,
}
