"""The ``status`` table of a split's planted type mix: target (and the closest mix one
definitional point per case allows), planned, accepted, and judged-type mismatches."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ioa_synth.reports.output import fmt
from ioa_synth.text.plural import plural


def _pct(value: float | None) -> str:
    return fmt(value, percent=True)


def type_mix_table(split: str, mix: dict[str, Any]) -> Table:
    """A rich table of one split of :func:`ioa_synth.build.planted.type_mix_report`."""
    share = _pct(mix["mismatch_share"])
    table = Table(title=f"Planted disagreement types, {split} ({plural(mix['cases'], 'case')}, target {mix['type_mix']})",
                  caption=f"attainable: the mix closest to the target with one definitional point per case. "
                          f"Judged type differs from plan in {mix['mismatched']} of {mix['judged']} judged points "
                          f"({share}).")
    for col in ("type", "target", "attainable", "planned", "planned share", "accepted", "accepted share"):
        table.add_column(col, justify="left" if col == "type" else "right")
    for r in mix["rows"]:
        table.add_row(r["type"], _pct(r["target_share"]), _pct(r["attainable_share"]), str(r["planned"]),
                      _pct(r["planned_share"]), str(r["accepted"]), _pct(r["accepted_share"]))
    return table
