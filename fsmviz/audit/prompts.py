"""The prompts of an audit: a file of them, read one line at a time.

Two forms, told apart line by line (a file may even mix them):

* JSON Lines: ``{"prompt": "...", "id": "..."}`` per line (``id`` optional, a string or a
  number; without it the line number is the id);
* plain lines: each non-empty line is one prompt, its id its line number.

A line that starts with ``{`` is read as JSON and must hold a ``"prompt"`` string; blank
lines are skipped. Ids must be unique: each run's trace is saved under its id, and a second
audit into the same folder skips the ids whose trace is there.

>>> list(prompt_pairs(['{"id": "a", "prompt": "Hi"}', "", "Plain one"]))
[('a', 'Hi'), ('3', 'Plain one')]
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from fsmviz.errors import InputError
from fsmviz.printable import printable

__all__ = ["PromptsError", "count_prompts", "file_name", "prompt_pairs", "read_prompts"]

MAX_LINE_BYTES = 256 * 1024
"""The longest line a prompts file may hold (a prompt is at most ``MAX_PROMPT_CHARS``
characters anyway; this refuses a binary file or one huge line before it is parsed)."""
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


class PromptsError(InputError):
    """A prompts file fsmviz cannot read: the message names the file and the line."""


def prompt_pairs(lines: Iterable[str], source: str = "the prompts") -> Iterator[tuple[str, str]]:
    """(id, prompt) for each prompt of ``lines`` (JSON Lines or plain lines, see the module
    docstring), in order; ``PromptsError`` naming ``source`` and the line for a bad one."""
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        if line.lstrip().startswith("{"):
            ident, prompt = _json_line(line, where, number)
        else:
            ident, prompt = str(number), line
        if ident in seen:
            raise PromptsError(
                f"{where}: the id {printable(ident)!s} is used twice: give every prompt its "
                "own id (each run's trace is saved under it)"
            )
        seen.add(ident)
        yield ident, prompt


def _json_line(line: str, where: str, number: int) -> tuple[str, str]:
    try:
        value = json.loads(line)
    except ValueError as error:
        raise PromptsError(
            f"{where} starts with {{ but is not JSON ({getattr(error, 'msg', error)}, column "
            f"{getattr(error, 'colno', '?')}): write one JSON object per line, "
            '{"prompt": "...", "id": "..."}, or the prompt as plain text'
        ) from None
    prompt = value.get("prompt") if isinstance(value, dict) else None
    if not isinstance(prompt, str):
        raise PromptsError(
            f'{where}: a JSON line needs a "prompt" that is text, as in '
            '{"prompt": "What year is it?", "id": "q1"}'
        )
    ident = value.get("id", number)
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or str(ident) == "":
        raise PromptsError(f'{where}: "id" must be a non-empty string or a whole number')
    return str(ident), prompt


def _lines(path: Path) -> Iterator[str]:
    """The file's lines as text, one at a time (a line past ``MAX_LINE_BYTES`` or bytes
    that are not UTF-8 refused with the line's number)."""
    try:
        source = path.open("rb")
    except OSError as error:
        raise PromptsError(f"cannot read {path}: {error.strerror or error}") from None
    with source:
        for number, data in enumerate(iter(lambda: source.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(data) > MAX_LINE_BYTES:
                raise PromptsError(
                    f"{path}, line {number} is longer than {MAX_LINE_BYTES:,} bytes: one "
                    "prompt per line"
                )
            try:
                yield data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise PromptsError(
                    f"{path}, line {number} is not UTF-8 text (byte 0x{data[error.start]:02X})"
                ) from None


def read_prompts(path: str | Path) -> Iterator[tuple[str, str]]:
    """(id, prompt) for each prompt of the file at ``path``, read lazily: a file of a
    million prompts is never held whole."""
    path = Path(path)
    if path.is_dir():
        raise PromptsError(f"{path} is a folder: give a file of prompts, one per line")
    return prompt_pairs(_lines(path), str(path))


def count_prompts(path: str | Path) -> int:
    """How many prompts the file holds (a first pass that also checks every line, so a bad
    line is refused before any request is sent)."""
    return sum(1 for _ in read_prompts(path))


def file_name(ident: str) -> str:
    """The file name a run's trace is saved under: the id itself where it is a safe name,
    else a readable part of it and a short hash (two ids never share a file).

    >>> file_name("q-1"), file_name("../etc/passwd")
    ('q-1.json', 'etc_passwd-e96c47eabf.json')
    """
    if SAFE_ID.fullmatch(ident):
        return f"{ident}.json"
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", ident).strip("._-")[:40] or "prompt"
    digest = hashlib.sha1(ident.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{readable}-{digest}.json"
