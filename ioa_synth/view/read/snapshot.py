"""The viewer's copies of a results folder's catalog. The viewer never opens
``catalog.duckdb`` itself (a reader holding it would stop the next run from starting): it
reads cached copies made by :class:`ioa_synth.runs.snapshot.Snapshots` (the catalog, its
``.wal`` and the run's journal, re-applied; a copy per change of the files). What is the
viewer's own is :func:`prepare`, what each copy gets before it is read.
"""

from __future__ import annotations

from ioa_synth.runs import snapshot
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.snapshot import SnapshotError
from ioa_synth.view.read.build import prepare as build_summary

__all__ = ["SnapshotError", "Snapshots", "prepare"]


class Snapshots(snapshot.Snapshots):
    """The viewer's catalog copies, under a temporary folder ``ioa-synth-view-…``."""

    def __init__(self) -> None:
        super().__init__(prefix="ioa-synth-view-")


def prepare(cat: Catalog) -> None:
    """What a (writable) catalog copy gets before the viewer reads it: an index on every
    ``case_id`` column (a unit's rows are then found without a scan) and a build's summary
    table of its cases (:func:`ioa_synth.view.read.build.prepare`)."""
    _index(cat)
    build_summary(cat)


def _index(cat: Catalog) -> None:
    """An index on ``case_id`` of every table that has one (in the copy only)."""
    for (table,) in cat.execute("SELECT table_name FROM information_schema.columns WHERE column_name = 'case_id' "
                                "AND table_name IN (SELECT table_name FROM information_schema.tables "
                                "WHERE table_type = 'BASE TABLE')"):
        cat.execute(f'CREATE INDEX IF NOT EXISTS "view_{table}_case_id" ON "{table}" (case_id)')
