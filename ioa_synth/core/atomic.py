"""Atomic file writes: write to a temporary file in the same folder, fsync, rename.

A full disk (``ENOSPC``, ``EDQUOT``) or a file over the size limit (``EFBIG``) raises
:class:`~ioa_synth.core.errors.StorageFull` naming the file, so that a command prints one
line saying what to do instead of a traceback. :func:`write_all_atomic` writes several
files all or none.

The file gets the permissions of any new file of the process (0666 less the umask, e.g.
0644), not the 0600 of a temporary file, so records and reports stay readable by the
user's group and tools as usual.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any

#: ``errno`` values of a full disk, a full quota and a file past the size limit.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: The same, as the messages of libraries that do not raise ``OSError`` (DuckDB).
FULL_MESSAGES = ("no space left on device", "disk quota exceeded", "file too large")


def disk_full(exc: BaseException, path: str | Path) -> Exception | None:
    """:class:`~ioa_synth.core.errors.StorageFull` for ``path`` when ``exc`` means the disk,
    the quota or the file size limit is full, else ``None``."""
    if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
        reason = exc.strerror or os.strerror(exc.errno)
    elif any(m in str(exc).lower() for m in FULL_MESSAGES):
        reason = next(m for m in FULL_MESSAGES if m in str(exc).lower()).capitalize()
    else:
        return None
    from ioa_synth.core.errors import StorageFull

    return StorageFull(path, reason)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Mode of every file written here (read once: changing the umask is process-wide).
FILE_MODE = 0o666 & ~_umask()


def write_bytes_atomic(path: str | Path, data: bytes, sync: bool = True) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one.

    Parent folders are created. With ``sync`` False the data is not fsynced before the
    rename: still all-or-nothing for readers and against a killed process, but not against
    a power cut until someone fsyncs it (a case record: the catalog's writer does,
    before it commits the case's status; see :meth:`ioa_synth.runs.catalog.Catalog.record`).
    Raises ``OSError`` on I/O failure, or :class:`~ioa_synth.core.errors.StorageFull` when
    the disk is full (the target is untouched).
    """
    path = Path(path)
    tmp = _staged(path, data, sync)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _staged(path: Path, data: bytes, sync: bool = True) -> Path:
    """``data`` written (and with ``sync``, fsynced) to a temporary file next to ``path``
    (not yet renamed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        full = disk_full(exc, path)
        if full is not None:
            raise full from exc
        raise
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), FILE_MODE)
            if sync:
                os.fsync(fh.fileno())
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        full = disk_full(exc, path)
        if full is not None:
            raise full from exc
        raise
    return Path(tmp)


def write_all_atomic(files: dict[Path, bytes]) -> list[Path]:
    """Write several files all or none: every content goes to a synced temporary file
    first (where a full disk or a permission error shows), and only when all are staged
    are they renamed into place; a failure leaves every target as it was. Returns the
    paths in order."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            staged.append((_staged(Path(path), data), Path(path)))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]


def json_bytes(obj: Any) -> bytes:
    """``obj`` as the indented UTF-8 JSON every JSON file here holds."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) atomically (see :func:`write_bytes_atomic`)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented UTF-8 JSON atomically (see :func:`write_text_atomic`)."""
    return write_bytes_atomic(path, json_bytes(obj))
