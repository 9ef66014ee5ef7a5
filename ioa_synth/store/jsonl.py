"""Reading JSONL files line by line with errors that name ``path:line``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator


def iter_jsonl(path: str | Path, error: type[ValueError] = ValueError) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_object)`` for each non-blank line of ``path`` (UTF-8,
    with or without a byte-order mark).

    Raises:
        error: the file cannot be read (``"<path>: cannot read ..."``) or a line is not
            valid JSON (``"<path>:<line>: invalid JSON (...)"``).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is allowed
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{n}: invalid JSON ({exc.msg})") from None
