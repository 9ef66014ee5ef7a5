"""What ``status`` shows of any results folder: the run (from its manifest ``run.json``),
the units done out of the total (given by the folder kind's capability), the calls and
tokens per component and the estimate the run started from beside what was spent since.

The catalog is read with :func:`ioa_synth.runs.snapshot.reading`, so a folder a run is
writing is read too (``catalog`` is then ``"snapshot"``). A capability gives its progress as
a :class:`Progress`; :func:`results_status` puts the rest around it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, Field

from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.manifest import Manifest
from ioa_synth.runs.schema import TableSet
from ioa_synth.runs.snapshot import reading
from ioa_synth.runs.spend import spend_report

#: ``llm_calls.role`` -> component, in SQL: the text before the first ``:`` or ``|``
#: (``simulator:M1``, ``agent:say:k1:a2``, ``discusser|say:a1`` -> ``simulator``, ``agent``, ``discusser``).
COMPONENT_SQL = r"regexp_extract(role, '^[^:|]*')"
_COMPONENT = re.compile(r"[^:|]*")


def component_of_role(role: str) -> str:
    """The component of a call's ``role``, as :data:`COMPONENT_SQL`."""
    match = _COMPONENT.match(role or "")
    return match.group(0) if match else role


class Group(BaseModel):
    """One line of a progress table: ``name`` (a condition, a configuration, a split),
    units ``done`` out of ``total`` (``None``: not known) and counts by status."""

    name: str
    done: int
    total: int | None = None
    statuses: dict[str, int] = Field(default_factory=dict)


class Progress(BaseModel):
    """Where a folder's work stands: its ``unit`` (``"conversation"``, ``"task run"``, ...),
    the ``groups`` (each with done/total and statuses), and ``notes`` (lines to show)."""

    unit: str
    groups: list[Group] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def done(self) -> int:
        return sum(g.done for g in self.groups)

    @property
    def total(self) -> int | None:
        totals = [g.total for g in self.groups]
        return None if any(t is None for t in totals) else sum(totals)  # type: ignore[misc]


def token_use(catalog: Catalog, by: str = "role") -> list[dict[str, Any]]:
    """Per component (the SQL expression ``by`` over ``llm_calls``, by default the ``role``
    of its calls; returned as ``role``), over every stored request (``llm_calls``
    keeps each try): ``calls`` tried, ``failed_calls`` (an HTTP error, a timeout or a
    rejected reply), ``retried_calls`` (failed tries followed by another try of the same
    call in the same run), ``timed_out_calls``, prompt and completion tokens (billed: every
    try that returned usage; ``None`` when no call of the component returned it, as with the
    embedded server's streamed replies, which report no prompt count) and ``failed_tokens``
    (the part spent on failed tries)."""
    return catalog.query_dicts(
        "WITH c AS (SELECT *, created_at < max(created_at) OVER (PARTITION BY run_id, case_id, stage, role, attempt) "
        "AS followed FROM llm_calls) "
        f"SELECT {by} AS role, count(*) AS calls, count(*) FILTER (WHERE error IS NOT NULL) AS failed_calls, "
        "count(*) FILTER (WHERE error IS NOT NULL AND followed) AS retried_calls, "
        "count(*) FILTER (WHERE error LIKE 'APITimeoutError%') AS timed_out_calls, "
        "sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens, "
        "coalesce(sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)) FILTER (WHERE error IS NOT NULL), 0) "
        "AS failed_tokens FROM c GROUP BY ALL ORDER BY 1")


def results_status(folder: Path, kind: str, title: str, manifest: Manifest | None, progress: Progress | None,
                   tables: Sequence[TableSet] = ()) -> dict[str, Any]:
    """``{"kind", "title", "folder", "command", "components": {name: model}, "started_at",
    "finished_at", "resumed_at", "progress": {"unit", "done", "total", "groups": [{name, done, total,
    statuses}], "notes"} | None, "catalog": "read" | "snapshot" | "missing", "tokens":
    [{"component", "calls", ...}] | None, "spend": {...} | None}`` (``tokens`` as
    :func:`token_use` per component, ``spend`` as
    :func:`~ioa_synth.runs.spend.spend_report`; ``catalog`` ``"snapshot"``: a run holds the
    catalog and a copy taken now was read).

    Raises:
        ioa_synth.runs.catalog.CatalogUnusable: the catalog cannot be read.
    """
    report: dict[str, Any] = {
        "kind": kind, "title": title, "folder": str(folder),
        "command": manifest.command if manifest else None,
        "components": {name: (c or {}).get("model") if isinstance(c, dict) else None
                       for name, c in (manifest.components if manifest else {}).items()},
        "started_at": manifest.started_at if manifest else None,
        "finished_at": manifest.finished_at if manifest else None,
        "resumed_at": (manifest.model_extra or {}).get("resumed_at") if manifest else None,
        "progress": None if progress is None else {**progress.model_dump(), "done": progress.done,
                                                    "total": progress.total},
        "catalog": "missing", "tokens": None, "spend": None}
    try:
        with reading(folder, tables) as (cat, snapshot):
            report["catalog"] = "snapshot" if snapshot else "read"
            report["tokens"] = [{"component": r.pop("role"), **r} for r in token_use(cat, by=COMPONENT_SQL)]
            report["spend"] = spend_report(cat, component_of_role)
    except FileNotFoundError:
        pass
    return report
