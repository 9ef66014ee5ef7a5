"""Where an accepted case's record lives: ``<build directory>/<case_id>.json`` (the released
IoA-Suite layout, ``test/ml_research/planning_000.json``).

Every reader finds a record from the build directory it was given and the case id, never
from ``cases.path``: that column holds the path as the writing command was given it
(``data/demo/test/...``, relative to the directory it ran in), which names another file, or
none, once the folder is copied or moved, or read from another working directory.
"""

from __future__ import annotations

from pathlib import Path

from ioa_synth.runs.catalog import Catalog

__all__ = ["record_file"]


def record_file(catalog: Catalog, case_id: str) -> Path:
    """The record file of ``case_id`` in the build directory ``catalog`` describes
    (:attr:`~ioa_synth.runs.catalog.Catalog.home`: the folder itself for a snapshot copy)."""
    return Path(catalog.home) / f"{case_id}.json"
