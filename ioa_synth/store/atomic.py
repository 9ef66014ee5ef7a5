"""Atomic file writes: write to a temporary file in the same folder, fsync, rename.

The file gets the permissions of any new file of the process (0666 less the umask, e.g.
0644), not the 0600 of a temporary file, so records and reports stay readable by the
user's group and tools as usual.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Mode of every file written here (read once: changing the umask is process-wide).
FILE_MODE = 0o666 & ~_umask()


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one.

    Parent folders are created. Raises ``OSError`` on I/O failure (the target is untouched).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), FILE_MODE)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) atomically (see :func:`write_bytes_atomic`)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented UTF-8 JSON atomically (see :func:`write_text_atomic`)."""
    return write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
