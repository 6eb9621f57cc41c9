"""Write the real-world-style schema sample (``bench/schemas/<kind>/<name>.json``).

These schemas are written by us, in the shapes of public ones (Kubernetes manifests,
SchemaStore's package.json and tsconfig.json, OpenAI/MCP tool definitions, pydantic output,
recursive trees, API payloads); none is copied from a public collection, and the sample
measured in issue 29 stays apart. Run ``python -m bench.schemas.make`` to write them again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}


def obj(props: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    out.update(more)
    return out


def arr(items: Any, **more: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **more}


def tool(name: str, description: str, params: dict[str, Any], required: list[str]) -> dict:
    """A function-calling tool's ``parameters`` as OpenAI and MCP write them."""
    return {
        "title": name,
        "description": description,
        "type": "object",
        "properties": params,
        "required": required,
        "additionalProperties": False,
    }


def function_calling() -> dict[str, dict]:
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    return {
        "get_weather": tool("get_weather", "Current weather", {
            "location": {"type": "string", "description": "City and country"},
            "unit": unit}, ["location"]),
        "search_web": tool("search_web", "Search the web", {
            "query": {"type": "string", "minLength": 1, "maxLength": 200},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
            "site": {"type": ["string", "null"]}}, ["query"]),
        "create_event": tool("create_event", "Create a calendar event", {
            "title": S, "start": {"type": "string", "format": "date-time"},
            "end": {"type": "string", "format": "date-time"},
            "attendees": arr({"type": "string", "format": "email"}, maxItems=50),
            "reminder_minutes": {"type": "integer", "minimum": 0, "maximum": 10080},
            "location": S}, ["title", "start", "end"]),
        "send_email": tool("send_email", "Send an e-mail", {
            "to": arr({"type": "string", "format": "email"}, minItems=1),
            "cc": arr({"type": "string", "format": "email"}),
            "subject": {"type": "string", "maxLength": 200}, "body": S,
            "priority": {"enum": ["low", "normal", "high"]}}, ["to", "subject", "body"]),
        "run_sql": tool("run_sql", "Run a read-only SQL query", {
            "query": S, "database": {"enum": ["sales", "users", "inventory"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
            ["query", "database"]),
        "book_flight": tool("book_flight", "Book a flight", {
            "from": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "to": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
            "cabin": {"enum": ["economy", "premium", "business", "first"]},
            "return_date": {"type": "string", "format": "date"}},
            ["from", "to", "date", "passengers"]),
        "create_issue": tool("create_issue", "Open a GitHub issue", {
            "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"}, "title": S, "body": S,
            "labels": arr(S, uniqueItems=True), "assignees": arr(S, maxItems=10)},
            ["repo", "title"]),
        "read_file": tool("read_file", "MCP filesystem: read a file", {
            "path": S, "head": {"type": "number"}, "tail": {"type": "number"}}, ["path"]),
        "edit_file": tool("edit_file", "MCP filesystem: edit a file", {
            "path": S, "edits": arr(obj({"oldText": S, "newText": S}, ["oldText", "newText"],
                                        additionalProperties=False)),
            "dryRun": {"type": "boolean", "default": False}}, ["path", "edits"]),
        "browser_click": tool("browser_click", "MCP browser: click an element", {
            "element": S, "ref": S, "doubleClick": B,
            "button": {"type": "string", "enum": ["left", "right", "middle"]},
            "modifiers": arr({"enum": ["Alt", "Control", "Meta", "Shift"]})},
            ["element", "ref"]),
        "convert_currency": tool("convert_currency", "Convert money", {
            "amount": {"type": "number", "exclusiveMinimum": 0},
            "from": {"type": "string", "minLength": 3, "maxLength": 3},
            "to": {"type": "string", "minLength": 3, "maxLength": 3}},
            ["amount", "from", "to"]),
        "set_thermostat": tool("set_thermostat", "Smart home", {
            "room": {"enum": ["kitchen", "living", "bedroom", "office"]},
            "temperature": {"type": "number", "minimum": 5, "maximum": 30, "multipleOf": 0.5},
            "mode": {"enum": ["heat", "cool", "auto", "off"]}}, ["room", "temperature"]),
        "java_order_tool": tool("placeOrder", "Java tool (Spring AI style)", {
            "customerId": {"type": "integer", "format": "int64"},
            "items": arr(obj({"sku": S, "quantity": {"type": "integer", "format": "int32",
                                                     "minimum": 1}}, ["sku", "quantity"])),
            "express": B, "note": {"type": "string"}}, ["customerId", "items"]),
        "plot_chart": tool("plot_chart", "Draw a chart", {
            "kind": {"enum": ["line", "bar", "pie"]},
            "series": arr(obj({"name": S, "values": arr(N, minItems=1)}, ["name", "values"]),
                          minItems=1, maxItems=8),
            "title": S, "log_scale": B}, ["kind", "series"]),
        "translate": tool("translate", "Translate text", {
            "text": {"type": "string", "maxLength": 5000},
            "target_language": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
            "formality": {"anyOf": [{"enum": ["formal", "informal"]}, {"type": "null"}]}},
            ["text", "target_language"]),
    }  # fmt: skip


def api_payloads() -> dict[str, dict]:
    money = {"type": "number", "minimum": 0}
    address = obj({"street": S, "city": S, "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                   "country": {"type": "string", "minLength": 2, "maxLength": 2}},
                  ["street", "city", "country"])  # fmt: skip
    return {
        "order": obj({"id": {"type": "string", "format": "uuid"}, "customer": obj(
            {"name": S, "email": {"type": "string", "format": "email"}}, ["name", "email"]),
            "items": arr(obj({"sku": S, "qty": {"type": "integer", "minimum": 1},
                              "price": money}, ["sku", "qty", "price"]), minItems=1),
            "shipping": address, "total": money,
            "status": {"enum": ["new", "paid", "shipped", "cancelled"]},
            "created": {"type": "string", "format": "date-time"}},
            ["id", "customer", "items", "total", "status"]),
        "user_profile": obj({"username": {"type": "string", "pattern": "^[a-z0-9_]{3,16}$"},
                             "age": {"type": "integer", "minimum": 13, "maximum": 130},
                             "bio": {"type": "string", "maxLength": 160},
                             "website": {"type": "string", "format": "uri"},
                             "interests": arr(S, maxItems=10, uniqueItems=True)},
                            ["username"]),
        "invoice": obj({"number": S, "date": {"type": "string", "format": "date"},
                        "lines": arr(obj({"description": S, "amount": money,
                                          "vat_rate": {"enum": [0, 7, 19]}},
                                         ["description", "amount"])),
                        "currency": {"const": "EUR"}, "paid": B}, ["number", "date", "lines"]),
        "sensor_reading": obj({"device": S, "ts": {"type": "integer", "minimum": 0},
                               "temperature": {"type": "number", "minimum": -50,
                                               "maximum": 150},
                               "humidity": {"type": "number", "minimum": 0, "maximum": 100},
                               "battery": {"type": "integer", "minimum": 0, "maximum": 100}},
                              ["device", "ts"], additionalProperties=False),
        "nutrition": {"title": "Nutrition", "type": "object", "properties": {
            "protein": {"title": "Protein", "type": "number"},
            "calories": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "required": ["protein", "calories"]},
        "review": obj({"sentiment": {"enum": ["positive", "negative", "neutral"]},
                       "stars": {"type": "integer", "minimum": 1, "maximum": 5},
                       "summary": {"type": "string", "maxLength": 120}},
                      ["sentiment", "stars"]),
        "pagination": obj({"page": {"type": "integer", "minimum": 1},
                           "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
                           "total": {"type": "integer", "minimum": 0},
                           "items": arr({"type": "object"})}, ["page", "per_page", "items"]),
        "geojson_point": obj({"type": {"const": "Point"},
                              "coordinates": {"type": "array", "prefixItems": [
                                  {"type": "number", "minimum": -180, "maximum": 180},
                                  {"type": "number", "minimum": -90, "maximum": 90}],
                                  "minItems": 2, "maxItems": 2}}, ["type", "coordinates"]),
        "extraction": obj({"people": arr(obj({"name": S, "role": {"type": ["string", "null"]}},
                                             ["name"])),
                           "dates": arr({"type": "string", "format": "date"}),
                           "amounts": arr(obj({"value": N, "currency": S}, ["value"]))}),
        "settings_map": obj({"name": S, "env": {"type": "object",
                                                "additionalProperties": {"type": "string"}},
                             "limits": {"type": "object",
                                        "additionalProperties": {"type": "integer"},
                                        "maxProperties": 10}}, ["name"]),
    }  # fmt: skip


def schemastore() -> dict[str, dict]:
    person = {
        "anyOf": [
            S,
            obj(
                {
                    "name": S,
                    "email": {"type": "string", "format": "email"},
                    "url": {"type": "string", "format": "uri"},
                },
                ["name"],
            ),
        ]
    }
    deps = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "package_json": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                         "title": "package.json (subset)", "type": "object", "properties": {
            "name": {"type": "string", "maxLength": 214, "minLength": 1,
                     "pattern": "^(?:@[a-z0-9-*~][a-z0-9-*._~]*/)?[a-z0-9-~][a-z0-9-._~]*$"},
            "version": S, "description": S, "keywords": arr(S), "homepage": S,
            "license": S, "author": {"$ref": "#/$defs/person"},
            "contributors": arr({"$ref": "#/$defs/person"}), "main": S,
            "type": {"enum": ["commonjs", "module"]},
            "scripts": {"type": "object", "additionalProperties": {"type": "string"}},
            "dependencies": {"$ref": "#/$defs/deps"}, "devDependencies": {"$ref": "#/$defs/deps"},
            "engines": {"type": "object", "additionalProperties": {"type": "string"}},
            "private": B, "workspaces": arr(S)},
            "$defs": {"person": person, "deps": deps}},
        "tsconfig_json": obj({"compilerOptions": obj({
            "target": {"enum": ["ES3", "ES5", "ES2015", "ES2020", "ES2022", "ESNext"]},
            "module": {"enum": ["CommonJS", "ES2015", "ES2020", "ESNext", "Node16", "NodeNext"]},
            "strict": B, "noImplicitAny": B, "outDir": S, "rootDir": S, "declaration": B,
            "sourceMap": B, "lib": arr(S), "paths": {"type": "object",
                                                     "additionalProperties": arr(S)},
            "baseUrl": S, "jsx": {"enum": ["preserve", "react", "react-jsx", "react-native"]},
            "esModuleInterop": B, "skipLibCheck": B, "resolveJsonModule": B}),
            "include": arr(S), "exclude": arr(S), "extends": S,
            "references": arr(obj({"path": S}, ["path"]))}),
        "github_workflow": obj({"name": S, "on": {"anyOf": [S, arr(S), {"type": "object"}]},
                                "jobs": {"type": "object", "additionalProperties": obj({
                                    "runs-on": {"anyOf": [S, arr(S)]},
                                    "steps": arr(obj({"name": S, "uses": S, "run": S,
                                                      "with": {"type": "object"}})),
                                    "needs": {"anyOf": [S, arr(S)]},
                                    "timeout-minutes": {"type": "number"}}, ["runs-on"])}},
                               ["on", "jobs"]),
        "docker_compose": obj({"version": S, "services": {
            "type": "object", "additionalProperties": obj({
                "image": S, "build": {"anyOf": [S, obj({"context": S, "dockerfile": S})]},
                "ports": arr({"anyOf": [S, {"type": "integer"}]}), "environment": {
                    "anyOf": [{"type": "object", "additionalProperties": {
                        "type": ["string", "number", "boolean", "null"]}}, arr(S)]},
                "depends_on": arr(S), "restart": {"enum": ["no", "always", "on-failure",
                                                           "unless-stopped"]}})}},
            ["services"]),
        "eslintrc": obj({"root": B, "extends": {"anyOf": [S, arr(S)]},
                         "rules": {"type": "object", "additionalProperties": {"anyOf": [
                             {"enum": [0, 1, 2, "off", "warn", "error"]},
                             {"type": "array"}]}},
                         "env": {"type": "object", "additionalProperties": B},
                         "parserOptions": obj({"ecmaVersion": {"type": "integer"},
                                               "sourceType": {"enum": ["script", "module"]}})}),
        "prettierrc": obj({"printWidth": {"type": "integer"}, "tabWidth": {"type": "integer"},
                           "useTabs": B, "semi": B, "singleQuote": B,
                           "trailingComma": {"enum": ["none", "es5", "all"]},
                           "bracketSpacing": B, "arrowParens": {"enum": ["avoid", "always"]},
                           "endOfLine": {"enum": ["lf", "crlf", "cr", "auto"]}}),
        "renovate": obj({"extends": arr(S), "schedule": arr(S), "automerge": B,
                         "packageRules": arr(obj({"matchPackageNames": arr(S),
                                                  "groupName": S, "automerge": B,
                                                  "enabled": B})),
                         "labels": arr(S), "prConcurrentLimit": {"type": "integer",
                                                                 "minimum": 0}}),
        "vscode_settings": {"type": "object", "properties": {
            "editor.fontSize": {"type": "number", "minimum": 6, "maximum": 100},
            "editor.tabSize": {"type": "integer", "minimum": 1},
            "files.exclude": {"type": "object", "additionalProperties": B},
            "workbench.colorTheme": S},
            "patternProperties": {"^\\[.+\\]$": {"type": "object"}}},
    }  # fmt: skip


def kubernetes() -> dict[str, dict]:
    d = "#/$defs/"
    defs: dict[str, Any] = {
        "ObjectMeta": obj(
            {
                "name": S,
                "namespace": S,
                "labels": {"type": "object", "additionalProperties": S},
                "annotations": {"type": "object", "additionalProperties": S},
                "generateName": S,
            }
        ),
        "IntOrString": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "Quantity": {
            "anyOf": [{"type": "string", "pattern": "^[0-9]+(m|Ki|Mi|Gi)?$"}, {"type": "number"}]
        },
        "ResourceRequirements": obj(
            {
                "limits": {"type": "object", "additionalProperties": {"$ref": d + "Quantity"}},
                "requests": {"type": "object", "additionalProperties": {"$ref": d + "Quantity"}},
            }
        ),
        "EnvVar": obj(
            {
                "name": S,
                "value": S,
                "valueFrom": obj(
                    {
                        "secretKeyRef": obj({"name": S, "key": S}, ["key"]),
                        "configMapKeyRef": obj({"name": S, "key": S}, ["key"]),
                    }
                ),
            },
            ["name"],
        ),
        "ContainerPort": obj(
            {
                "containerPort": {"type": "integer", "minimum": 1, "maximum": 65535},
                "name": S,
                "protocol": {"enum": ["TCP", "UDP", "SCTP"]},
            },
            ["containerPort"],
        ),
        "Probe": obj(
            {
                "httpGet": obj({"path": S, "port": {"$ref": d + "IntOrString"}}, ["port"]),
                "initialDelaySeconds": {"type": "integer", "minimum": 0},
                "periodSeconds": {"type": "integer", "minimum": 1},
            }
        ),
        "VolumeMount": obj({"name": S, "mountPath": S, "readOnly": B}, ["name", "mountPath"]),
        "Container": obj(
            {
                "name": S,
                "image": S,
                "command": arr(S),
                "args": arr(S),
                "env": arr({"$ref": d + "EnvVar"}),
                "ports": arr({"$ref": d + "ContainerPort"}),
                "resources": {"$ref": d + "ResourceRequirements"},
                "livenessProbe": {"$ref": d + "Probe"},
                "readinessProbe": {"$ref": d + "Probe"},
                "volumeMounts": arr({"$ref": d + "VolumeMount"}),
                "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
            },
            ["name"],
        ),
        "Volume": obj(
            {
                "name": S,
                "configMap": obj({"name": S}),
                "secret": obj({"secretName": S}),
                "emptyDir": {"type": "object"},
            },
            ["name"],
        ),
        "PodSpec": obj(
            {
                "containers": arr({"$ref": d + "Container"}),
                "initContainers": arr({"$ref": d + "Container"}),
                "volumes": arr({"$ref": d + "Volume"}),
                "restartPolicy": {"enum": ["Always", "OnFailure", "Never"]},
                "nodeSelector": {"type": "object", "additionalProperties": S},
                "serviceAccountName": S,
            },
            ["containers"],
        ),
        "LabelSelector": obj({"matchLabels": {"type": "object", "additionalProperties": S}}),
        "PodTemplateSpec": obj(
            {"metadata": {"$ref": d + "ObjectMeta"}, "spec": {"$ref": d + "PodSpec"}}
        ),
    }

    def kind(name: str, spec: dict[str, Any], api: str = "apps/v1") -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "apiVersion": {"const": api},
                "kind": {"const": name},
                "metadata": {"$ref": d + "ObjectMeta"},
                "spec": spec,
            },
            "required": ["apiVersion", "kind", "metadata"],
            "$defs": defs,
        }

    json_props = {"$ref": d + "JSONSchemaProps"}
    crd_defs = dict(defs)
    crd_defs["JSONSchemaProps"] = obj(
        {
            "type": S,
            "description": S,
            "properties": {"type": "object", "additionalProperties": json_props},
            "items": json_props,
            "required": arr(S),
            "enum": arr({}),
            "format": S,
        }
    )
    return {
        "deployment": kind("Deployment", obj({
            "replicas": {"type": "integer", "minimum": 0},
            "selector": {"$ref": d + "LabelSelector"},
            "template": {"$ref": d + "PodTemplateSpec"},
            "strategy": obj({"type": {"enum": ["RollingUpdate", "Recreate"]}})},
            ["selector", "template"])),
        "pod": kind("Pod", {"$ref": d + "PodSpec"}, "v1"),
        "service": kind("Service", obj({
            "type": {"enum": ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]},
            "selector": {"type": "object", "additionalProperties": S},
            "ports": arr(obj({"port": {"type": "integer"}, "targetPort": {
                "$ref": d + "IntOrString"}, "protocol": {"enum": ["TCP", "UDP"]}},
                ["port"]))}), "v1"),
        "configmap": {"type": "object", "properties": {
            "apiVersion": {"const": "v1"}, "kind": {"const": "ConfigMap"},
            "metadata": {"$ref": d + "ObjectMeta"},
            "data": {"type": "object", "additionalProperties": S}},
            "required": ["apiVersion", "kind"], "$defs": defs},
        "cronjob": kind("CronJob", obj({"schedule": S, "jobTemplate": obj({"spec": obj({
            "template": {"$ref": d + "PodTemplateSpec"},
            "backoffLimit": {"type": "integer"}})}),
            "concurrencyPolicy": {"enum": ["Allow", "Forbid", "Replace"]}},
            ["schedule", "jobTemplate"]), "batch/v1"),
        "ingress": kind("Ingress", obj({"rules": arr(obj({"host": S, "http": obj({
            "paths": arr(obj({"path": S, "pathType": {"enum": ["Exact", "Prefix"]},
                              "backend": obj({"service": obj({"name": S, "port": obj(
                                  {"number": {"type": "integer"}})})})}))})}))}),
            "networking.k8s.io/v1"),
        "crd": {"type": "object", "properties": {
            "apiVersion": {"const": "apiextensions.k8s.io/v1"},
            "kind": {"const": "CustomResourceDefinition"},
            "spec": obj({"group": S, "names": obj({"kind": S, "plural": S}),
                         "versions": arr(obj({"name": S, "served": B, "storage": B,
                                              "schema": obj({"openAPIV3Schema": json_props})}))
                         })}, "$defs": crd_defs},
        "statefulset": kind("StatefulSet", obj({
            "serviceName": S, "replicas": {"type": "integer"},
            "selector": {"$ref": d + "LabelSelector"},
            "template": {"$ref": d + "PodTemplateSpec"},
            "volumeClaimTemplates": arr(obj({"metadata": {"$ref": d + "ObjectMeta"},
                                             "spec": obj({"accessModes": arr(S),
                                                          "resources": {"$ref": d +
                                                                        "ResourceRequirements"}
                                                          })}))},
            ["serviceName", "selector", "template"])),
    }  # fmt: skip


def recursive() -> dict[str, dict]:
    return {
        "tree": obj({"label": S, "children": arr({"$ref": "#"})}, ["label"],
                    additionalProperties=False),
        "linked_list": {"$defs": {"node": obj({"value": I, "next": {"anyOf": [
            {"$ref": "#/$defs/node"}, {"type": "null"}]}}, ["value", "next"])},
            "$ref": "#/$defs/node"},
        "json_value": {"$defs": {"value": {"anyOf": [
            {"type": "null"}, B, N, S, arr({"$ref": "#/$defs/value"}),
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}}]}},
            "$ref": "#/$defs/value"},
        "comment_thread": obj({"author": S, "text": {"type": "string", "maxLength": 500},
                               "replies": arr({"$ref": "#"}, maxItems=20)},
                              ["author", "text"]),
        "filesystem": {"$defs": {"entry": {"anyOf": [
            obj({"kind": {"const": "file"}, "name": S, "size": {"type": "integer",
                                                                "minimum": 0}},
                ["kind", "name"]),
            obj({"kind": {"const": "dir"}, "name": S,
                 "entries": arr({"$ref": "#/$defs/entry"})}, ["kind", "name", "entries"])]}},
            "$ref": "#/$defs/entry"},
        "expression": {"$defs": {"expr": {"anyOf": [
            obj({"num": N}, ["num"]),
            obj({"op": {"enum": ["+", "-", "*", "/"]}, "left": {"$ref": "#/$defs/expr"},
                 "right": {"$ref": "#/$defs/expr"}}, ["op", "left", "right"])]}},
            "$ref": "#/$defs/expr"},
    }  # fmt: skip


def large_defs() -> dict[str, dict]:
    out = {}
    for size in (10, 30, 60):
        defs = {}
        for i in range(size):
            props: dict[str, Any] = {
                "id": {"type": "string", "format": "uuid"},
                "name": {"type": "string", "maxLength": 40},
                "count": {"type": "integer", "minimum": 0},
            }
            if i:
                props[f"ref{i - 1}"] = {"$ref": f"#/$defs/Entity{i - 1}"}
            defs[f"Entity{i}"] = obj(props, ["id"])
        out[f"chain_{size}"] = {"$defs": defs, "$ref": f"#/$defs/Entity{size - 1}"}
        star = {f"Thing{i}": obj({"code": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{3}$"},
                                  "value": N, "enabled": B}, ["code"])
                for i in range(size)}  # fmt: skip
        out[f"star_{size}"] = {
            "$defs": star,
            **obj(
                {f"thing{i}": {"$ref": f"#/$defs/Thing{i}"} for i in range(size)},
                [f"thing{i}" for i in range(0, size, 3)],
            ),
        }
    return out


def any_of_objects() -> dict[str, dict]:
    def event(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
        return obj(
            {"type": {"const": kind}, "at": {"type": "string", "format": "date-time"}, **extra},
            ["type", *extra],
        )

    out = {
        "events": {
            "anyOf": [
                event("click", {"x": I, "y": I}),
                event("key", {"key": S}),
                event("scroll", {"dy": N}),
                event("resize", {"w": I, "h": I}),
            ]
        },
        "shapes": {
            "oneOf": [
                obj(
                    {"kind": {"const": "circle"}, "r": {"type": "number", "exclusiveMinimum": 0}},
                    ["kind", "r"],
                ),
                obj({"kind": {"const": "rect"}, "w": N, "h": N}, ["kind", "w", "h"]),
            ]
        },
        "payment": obj(
            {
                "amount": {"type": "number", "minimum": 0.01},
                "method": {
                    "anyOf": [
                        obj(
                            {
                                "card": {"type": "string", "pattern": "^[0-9]{16}$"},
                                "cvc": {"type": "string", "pattern": "^[0-9]{3}$"},
                            },
                            ["card", "cvc"],
                        ),
                        obj(
                            {"iban": {"type": "string", "minLength": 15, "maxLength": 34}}, ["iban"]
                        ),
                        obj({"wallet": {"enum": ["apple", "google"]}}, ["wallet"]),
                    ]
                },
            },
            ["amount", "method"],
        ),
        "tool_call": {
            "anyOf": [
                obj(
                    {"name": {"const": n}, "arguments": p},
                    ["name", "arguments"],
                    additionalProperties=False,
                )
                for n, p in list(function_calling().items())[:8]
            ]
        },
    }
    many = [obj({"kind": {"const": f"k{i}"}, "value": {"type": ["integer", "string"][i % 2]},
                 "note": {"type": "string", "maxLength": 30}}, ["kind", "value"])
            for i in range(40)]  # fmt: skip
    out["forty_objects"] = {"anyOf": many}
    out["nullable_fields"] = obj({f"f{i}": {"anyOf": [{"type": ["string", "integer"][i % 2]},
                                                      {"type": "null"}]} for i in range(12)},
                                 [f"f{i}" for i in range(12)])  # fmt: skip
    return out


def wide() -> dict[str, dict]:
    out = {}
    for n in (30, 100, 400, 2000):
        props = {f"field_{i:04d}": [S, I, B, N][i % 4] for i in range(n)}
        out[f"optional_{n}"] = obj(props)
    props = {f"col_{i:03d}": {"type": "string", "maxLength": 20} for i in range(150)}
    out["required_150"] = obj(props, list(props))
    return out


KINDS = {
    "function-calling": function_calling,
    "api-payload": api_payloads,
    "schemastore": schemastore,
    "kubernetes": kubernetes,
    "recursive": recursive,
    "large-defs": large_defs,
    "anyOf-objects": any_of_objects,
    "wide": wide,
}


def main() -> None:
    count = 0
    for kind, make in KINDS.items():
        folder = HERE / kind
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
        for name, schema in make().items():
            (folder / f"{name}.json").write_text(json.dumps(schema, indent=1) + "\n")
            count += 1
    print(f"wrote {count} schemas under {HERE}")


if __name__ == "__main__":
    main()
