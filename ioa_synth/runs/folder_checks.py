"""Whether a folder can hold a catalog, checked before DuckDB opens it, and the errors of a
catalog that cannot be opened: another process holds it (:class:`CatalogLocked`), or the
folder cannot be written or its path is not UTF-8 (:class:`CatalogUnusable`)."""

from __future__ import annotations

import os
from pathlib import Path


class CatalogLocked(RuntimeError):
    """Another process holds the catalog open (DuckDB allows one writer process)."""


class CatalogUnusable(RuntimeError):
    """The catalog cannot be created or opened there: a folder that cannot be written, a
    path that is not valid UTF-8 (DuckDB takes UTF-8 paths only); the message names it."""


def shown_path(path: str | Path) -> str:
    """``path`` printable: bytes that are not UTF-8 as ``\\xNN``."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check_utf8(path: str | Path) -> None:
    """Raise :class:`CatalogUnusable` when ``path`` is not valid UTF-8 (DuckDB would fail)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise CatalogUnusable(f"{shown_path(path)}: the path is not valid UTF-8; "
                              "use a folder whose name is UTF-8") from None


def check_writable(folder: str | Path) -> None:
    """Refuse a folder that could not hold a catalog, without creating anything: a path
    that is not valid UTF-8, or a folder (or, when missing, its nearest existing parent)
    that is not a writable folder (permissions, an immutable folder, a read-only file system).

    Raises:
        CatalogUnusable: naming the path.
    """
    folder = Path(folder)
    check_utf8(folder)
    existing = next((p for p in (folder, *folder.absolute().parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        raise CatalogUnusable(f"cannot create {folder}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "read-only" if existing == folder else f"inside the read-only folder {existing}"
        raise CatalogUnusable(f"cannot write {folder}: {what}")

