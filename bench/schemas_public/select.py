"""How the public sample was chosen (run once; the chosen files are committed).

    python -m bench.schemas_public.select SCHEMASTORE_JSON_DIR CHECK_JSONSCHEMA_VENDOR_DIR

``SCHEMASTORE_JSON_DIR``: ``src/schemas/json`` of a SchemaStore/schemastore snapshot (commit
3b6446ad8 was used); ``CHECK_JSONSCHEMA_VENDOR_DIR``: ``check_jsonschema/builtin_schemas/vendor``
of the PyPI wheel check-jsonschema 0.39.0. Within each kind the files are taken in the order
of the SHA-1 of their names (no choice by hand, no look at how any engine does on them).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUOTAS = {"small": 35, "medium": 35, "large": 9, "recursive": 25, "external-ref": 6}
"""SchemaStore files per kind: small under 8 KB, medium 8 to 60 KB, large 60 to 250 KB (none
of them recursive or pointing outside), recursive (a $ref that leads back into itself; under
150 KB), external-ref (a $ref to another URL: people have those too)."""
CI = ("bitbucket-pipelines", "buildkite", "changie", "citation-file-format", "compose-spec",
      "gitlab-ci", "meltano", "readthedocs", "taskfile", "snapcraft")  # fmt: skip
"""check-jsonschema's vendored CI and tool configs that come with their own licence file."""
LICENCE_OF = {"gitlab-ci": "gitlab", "taskfile": "task"}


def kind_of(path: Path) -> str | None:
    sys.path.insert(0, str(HERE.parents[1]))
    from fsmviz.schema.limits import regex_cost

    text = path.read_text(encoding="utf-8")
    schema = json.loads(text)
    if not isinstance(schema, dict):
        return None
    size = len(text.encode("utf-8"))
    if '"$ref": "http' in text or '"$ref":"http' in text:
        return "external-ref"
    if regex_cost(schema).recursive is not None:
        return "recursive" if size < 150_000 else None
    if size < 8_000:
        return "small"
    if size < 60_000:
        return "medium"
    return "large" if size < 250_000 else None


def main(store: str, vendor: str) -> None:
    chosen: dict[str, list[Path]] = {kind: [] for kind in QUOTAS}
    names = sorted(Path(store).glob("*.json"), key=lambda p: hashlib.sha1(p.name.encode()).digest())
    for path in names:
        try:
            kind = kind_of(path)
        except (ValueError, RecursionError):
            continue
        if kind is not None and len(chosen[kind]) < QUOTAS[kind]:
            chosen[kind].append(path)
    for kind, paths in chosen.items():
        (HERE / kind).mkdir(exist_ok=True)
        for path in paths:
            shutil.copy(path, HERE / kind / path.name)
    (HERE / "ci").mkdir(exist_ok=True)
    (HERE / "licenses").mkdir(exist_ok=True)
    for name in CI:
        shutil.copy(Path(vendor) / f"{name}.json", HERE / "ci" / f"{name}.json")
        licence = Path(vendor) / "licenses" / f"LICENSE.{LICENCE_OF.get(name, name)}"
        shutil.copy(licence, HERE / "licenses" / licence.name)


if __name__ == "__main__":
    main(*sys.argv[1:3])
