"""Belief-study re-ask tables (BELIEF.md §3 Re-ask), from ``belief run`` results folders on
which ``belief reask`` has run, by ``belief report``'s code: infection under each probe
variant (Table 5) and own answer × group conclusion (Table 6)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.belief.metrics import OWN_GROUP
from ioa_synth.tables.belief_tables import CONDITION, conditions, mean_row, read_summaries
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: The variants in BELIEF.md §3's order, default probe first.
VARIANTS = ("own", "anonymized", "group")
#: (reask key, column suffix) per variant.
REASK_RATES = (("infection", "infection"), ("retention", "retention"), ("return_to_truth", "return to truth"))
REASK = "ioa-synth belief reask RESULTS --variant own|anonymized|group [--steps 1,4,8,16]"


def reask_variants(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-5 (Table 5): per condition, FPI of the default probe, then for each variant re-asked
    in any folder its infection (share of re-asked agents and steps infected under it),
    retention and return to truth (among those the default probe found infected), in %."""
    summaries = read_summaries(folders["belief"])
    cells = conditions(summaries)
    variants = [v for v in VARIANTS if any(v in (e.get("reask") or {}) for _, e in cells)]
    if not variants:
        raise TableError(f"no re-asked probe in {', '.join(map(str, folders['belief']))}; run: {REASK}")
    rows = [[*c, percent(e["fpi"]), *(percent((e.get("reask") or {}).get(v, {}).get(key))
                                      for v in variants for key, _ in REASK_RATES)] for c, e in cells]
    rows += mean_row(summaries, ["fpi", *(f"reask/{v}/{key}" for v in variants for key, _ in REASK_RATES)])
    return PaperTable("belief-5", "Table 5: re-ask validation, infection under each probe variant (%)",
                      [*CONDITION, "FPI (default)", *(f"{v}: {name}" for v in variants for _, name in REASK_RATES)],
                      rows,
                      ["Variants asked again from the stored log, no conversation re-run: own (what you yourself "
                       "believe), anonymized (own turns shown as Agent {id}), group (the discussion's conclusion).",
                       "infection: over every re-asked agent and step, the share labelled manipulated under the "
                       "variant (the paper's FPI under it when only the final step is re-asked); retention / return "
                       "to truth: among agents the default probe found infected at those steps, the share still "
                       "manipulated / true under the variant. '–': not re-asked or no opportunity."])


def own_group(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-6 (Table 6): per condition re-asked with both ``own`` and ``group``, the share of
    agents and steps in each cell own answer infected/clean × group conclusion infected/clean
    (%, ``own_group``), then the mean over those cells."""
    summaries = read_summaries(folders["belief"])
    cells = [(c, e) for c, e in conditions(summaries) if e.get("own_group")]
    if not cells:
        raise TableError(f"no condition in {', '.join(map(str, folders['belief']))} was re-asked with both own and "
                         "group; run: ioa-synth belief reask RESULTS --variant own, then --variant group")
    rows = [[*c, *(percent(e["own_group"][cell]) for cell in OWN_GROUP)] for c, e in cells]
    with_both = [{**s, "conditions": {k: e for k, e in s["conditions"].items() if e.get("own_group")}}
                 for s in summaries]
    rows += mean_row(with_both, [f"own_group/{cell}" for cell in OWN_GROUP])
    columns = [f"own {own}, group {group}" for own, _, group in (cell.partition("_") for cell in OWN_GROUP)]
    return PaperTable("belief-6", "Table 6: own answer × group conclusion (%)", [*CONDITION, *columns], rows,
                      ["Over agents and steps re-asked with both the own-answer and the group-conclusion variant; "
                       "infected: labelled manipulated, clean: any other label. The four cells sum to 100.",
                       "'own clean, group infected': the agent names the manipulated answer as the group's "
                       "conclusion but not as its own."])


register(TableSpec("belief-5", "Re-ask validation: infection under each variant", "belief paper, Table 5",
                   (Needs("belief", 1, None, "re-asked with belief reask"),), REASK, reask_variants))
register(TableSpec("belief-6", "Own answer × group conclusion", "belief paper, Table 6",
                   (Needs("belief", 1, None, "re-asked with --variant own and group"),),
                   "ioa-synth belief reask RESULTS --variant own; ... --variant group", own_group))
