"""Mean over the cells of a grid of belief runs (model × source × k), as the paper reports
its headline rates: each cell's pooled rate counts once (e.g. an 18-cell mean), cells where
the rate is undefined (``None``) are left out of that rate's mean.

Input: ``summary.json`` contents of :func:`ioa_synth.belief.report.summarize`, one per run.
Output: ``{"n_cells", "cells": [keys], "mean": {metric path: value}}``; paths join nested
keys with ``/``. Raises :class:`GridError` when two runs share a cell.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SKIP = {"ci", "curve", "cascade", "n_items", "finished", "expected", "n_benign"}


class GridError(ValueError):
    """Runs that cannot be averaged together (one line for the CLI)."""


def _flatten(entry: dict[str, Any], prefix: str = "") -> dict[str, float | None]:
    flat: dict[str, float | None] = {}
    for key, value in entry.items():
        if key in SKIP:
            continue
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        elif value is None or isinstance(value, (int, float)):
            flat[f"{prefix}{key}"] = value
    return flat


def grid_mean(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """Unweighted mean over every condition of every summary (one cell = model × source × k)."""
    cells: dict[str, dict[str, float | None]] = {}
    for summary in summaries:
        for key, entry in summary["conditions"].items():
            if key in cells:
                raise GridError(f"cell {key} appears in two runs")
            cells[key] = _flatten(entry)
    paths = sorted({p for flat in cells.values() for p in flat})
    mean: dict[str, float | None] = {}
    for path in paths:
        values = np.array([flat[path] for flat in cells.values() if flat.get(path) is not None], float)
        mean[path] = float(np.mean(values)) if values.size else None
    return {"n_cells": len(cells), "cells": sorted(cells), "mean": mean}
