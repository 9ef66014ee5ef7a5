"""What an ``export`` dataset folder holds (``ioa-synth status --out DATASET``): the cases
per split file, and whether each file is still as the export wrote it (its file list)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ioa_synth.export import FILE_LIST
from ioa_synth.runs.folder_status import Group, Progress


def export_progress(folder: Path) -> Progress:
    """One group per ``data/<split>.jsonl``: its cases (lines); statuses ``as exported``
    (1 when the file's SHA-256 is the one in the file list, else ``changed since``)."""
    try:
        listed = json.loads((folder / FILE_LIST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, TypeError, KeyError):
        listed = {}
    groups = []
    for path in sorted((folder / "data").glob("*.jsonl")):
        rel = path.relative_to(folder).as_posix()
        blob = path.read_bytes()
        same = (listed.get(rel) or {}).get("sha256") == hashlib.sha256(blob).hexdigest()
        cases = sum(1 for line in blob.splitlines() if line.strip())
        groups.append(Group(name=path.stem, done=cases, total=cases,
                            statuses={"as exported": int(same), "changed since": int(not same)}))
    return Progress(unit="case", groups=groups, notes=[f"dataset card: {folder / 'README.md'}"])
