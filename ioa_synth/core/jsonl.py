"""Reading JSONL files line by line with errors that name ``path:line``, a JSON file whole,
the per-unit JSON records of a results folder, and the one wording every command uses for
input that is not JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ioa_synth.text.utf8 import decode_utf8


def iter_jsonl(path: str | Path, error: type[ValueError] = ValueError) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_object)`` for each non-blank line of ``path`` (UTF-8,
    with or without a byte-order mark).

    Raises:
        error: the file cannot be read (``"<path>: cannot read ..."``), is not UTF-8
            (:func:`ioa_synth.text.utf8.decode_utf8`) or a line is not
            valid JSON (:func:`json_problem`).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise error(read_problem(path, exc)) from None
    text = decode_utf8(raw, path, error)  # a BOM (Windows editors) is allowed
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(json_problem(f"{path}:{n}", exc, in_line=True)) from None


def read_problem(path: Path, exc: OSError) -> str:
    """One line for a file that could not be read: ``"<path> is a folder, not a file"`` for a
    folder given where a file is wanted (a common slip: the folder holding the file), else
    ``"<path>: cannot read (<reason>)"``."""
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a folder, not a file; give the file inside it"
    return f"{path}: cannot read ({exc.strerror or exc})"


def read_json(path: str | Path, error: type[ValueError] = ValueError, missing: str | None = None) -> Any:
    """The JSON document in the file ``path`` (UTF-8, with or without a byte-order mark).

    Raises:
        error: ``"<path>: <missing>"`` when the file does not exist and ``missing`` is
            given, ``"<path>: cannot read (...)"``, not UTF-8
            (:func:`ioa_synth.text.utf8.decode_utf8`) or not JSON (:func:`json_problem`).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        if missing is not None:
            raise error(f"{path}: {missing}") from None
        raise error(read_problem(path, exc)) from None
    except OSError as exc:
        raise error(read_problem(path, exc)) from None
    try:
        return json.loads(decode_utf8(raw, path, error))
    except json.JSONDecodeError as exc:
        raise error(json_problem(path, exc)) from None


def json_problem(where: object, exc: json.JSONDecodeError, *, in_line: bool = False) -> str:
    """The error line for text that is not JSON: ``"<where>: invalid JSON at line L, column C:
    <what the decoder expected>"``; with ``in_line`` (``where`` already names a JSONL line,
    ``path:N``) only the column is given."""
    at = f"column {exc.colno}" if in_line else f"line {exc.lineno}, column {exc.colno}"
    # the decoder's messages that end in "at" name the place it gives ("Unterminated string
    # starting at"): that place is the one above
    what = exc.msg[:-3] + " there" if exc.msg.endswith(" at") else exc.msg
    return f"{where}: invalid JSON at {at}: {what}"


def read_json_records(paths: Iterable[Path], keys: Sequence[str], what: str, error: type[ValueError] = ValueError,
                      ) -> list[dict[str, Any]]:
    """The JSON object in each of ``paths``, in order, each holding every one of ``keys``
    (a results folder's per-unit records: a task run, a conversation).

    Raises:
        error: a file that cannot be read or parsed (``"<path>: unreadable <what> (...)"``),
            or that is not an object holding ``keys`` (``"<path>: not a <what> (no k1, k2)"``).
    """
    records = []
    for path in paths:
        try:
            rec = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise error(f"{path}: unreadable {what} ({exc})") from exc
        missing = [k for k in keys if k not in rec] if isinstance(rec, dict) else list(keys)
        if missing:
            raise error(f"{path}: not a {what} (no {', '.join(missing)})")
        records.append(rec)
    return records


def hidden(path: Path, root: Path) -> bool:
    """True when ``path`` (under ``root``) or a folder between them is hidden (``.name``): such
    files are bookkeeping (an export's file list, an editor's swap file), never records."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def jsonl_hint(folder: Path) -> str:
    """``"; it holds JSON-lines files (...)"`` when ``folder`` holds ``*.jsonl`` files but records are
    read one per ``*.json`` file (e.g. an ``ioa-synth export`` dataset, whose ``data/<split>.jsonl``
    holds the records of a build directory), else ``""``."""
    lines = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.jsonl") if not hidden(p, folder))
    if not lines:
        return ""
    shown = ", ".join(lines[:3]) + (", ..." if len(lines) > 3 else "")
    return (f"; it holds JSON-lines files ({shown}), not one record per *.json file: give the build "
            f"directory's <split> folder they were exported from")
