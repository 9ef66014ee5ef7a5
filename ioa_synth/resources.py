"""Locate the packaged ``templates/`` and ``judges/`` folders.

In a wheel they live under ``ioa_synth/_resources/``; in a source checkout
(editable install) they are the repository's top-level folders.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """Return the folder ``name`` (``"templates"`` or ``"judges"``).

    Raises:
        FileNotFoundError: neither the packaged nor the checkout folder exists.
    """
    for candidate in (_PKG / "_resources" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ioa-synth resource folder {name!r} not found (broken install?)")


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
