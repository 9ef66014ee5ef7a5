"""``ioa-synth compare RESULTS_A RESULTS_B``: two evaluate runs on the same
dialogues, side by side.

- dialogues are paired by case id (scored cases only); differing sets are refused unless
  ``intersect``;
- paired bootstrap of the mean difference B − A of F1, precision and recall
  (:mod:`.bootstrap`; paper App. D.3);
- per-type recall (paper Table 12), Category-C reasons as shares (paper §E.2), mean K and |B|;
- when B is a ``--permute-seed``/``--rollouts`` re-run of A: per-question outcome
  consistency (paper Table 14) and ΔF1.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.evaluate.analysis import tables
from ioa_synth.evaluate.analysis.bootstrap import (CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, P_DEFINITION,
                                                  paired_bootstrap)
from ioa_synth.evaluate.analysis.consistency import outcome_consistency, rerun_kind
from ioa_synth.evaluate.analysis.render import Table
from ioa_synth.evaluate.analysis.results import C_REASONS, Results
from ioa_synth.reports.output import fmt

METRICS: tuple[str, ...] = ("f1", "precision", "recall")
#: Ids listed in a refusal before "... and N more".
MAX_LISTED = 20


class CompareError(ValueError):
    """Two results folders that cannot be compared (one-line message)."""


def _listed(ids: list[str]) -> str:
    more = f", ... and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return ", ".join(ids[:MAX_LISTED]) + more


def pair_cases(a: Results, b: Results, intersect: bool = False) -> tuple[list[str], list[str], list[str]]:
    """``(shared, only_a, only_b)``: sorted scored case ids in both runs, in A only, in B only.

    Raises :class:`CompareError` naming the unpaired ids when the sets differ and
    ``intersect`` is false, or when no scored case is shared."""
    sa, sb = set(a.scored), set(b.scored)
    shared, only_a, only_b = sorted(sa & sb), sorted(sa - sb), sorted(sb - sa)
    if (only_a or only_b) and not intersect:
        parts = [f"only in {r.path} ({len(ids)}): {_listed(ids)}" for r, ids in ((a, only_a), (b, only_b)) if ids]
        raise CompareError(f"the scored case sets differ: {'; '.join(parts)} "
                           f"(--intersect compares the {len(shared)} shared case(s))")
    if not shared:
        raise CompareError(f"{a.path} and {b.path} have no scored case in common")
    return shared, only_a, only_b


def compare(a: Results, b: Results, intersect: bool = False, resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The comparison of runs ``a`` and ``b`` as a JSON-ready dict (the ``compare.json`` content):
    ``{a, b, pairing, bootstrap: {resamples, seed, confidence, method, p_definition, metrics:
    {f1|precision|recall: {n, mean_a, mean_b, diff, ci_low, ci_high, p}}}, means, type_recall,
    c_breakdown, rerun: {kind, why}, consistency}``. Values are 0-1 shares or counts;
    ``consistency`` is ``None`` unless B is a re-run of A (see :func:`.consistency.rerun_kind`).

    Raises :class:`CompareError` (see :func:`pair_cases`) and ``ValueError`` for ``resamples`` < 1.
    """
    shared, only_a, only_b = pair_cases(a, b, intersect)
    ra, rb = [a.scored[c] for c in shared], [b.scored[c] for c in shared]
    boot = {m: paired_bootstrap([getattr(r.metrics, m) for r in ra], [getattr(r.metrics, m) for r in rb],
                                resamples=resamples, seed=seed).as_dict() for m in METRICS}
    ta, tb = tables.type_recall(ra), tables.type_recall(rb)
    kind, why = rerun_kind(a, b)
    consistency = None
    if kind:
        consistency = outcome_consistency(a.scored, b.scored, shared) | {"delta_f1": boot["f1"]["diff"]}
    return {
        "a": a.describe(), "b": b.describe(),
        "pairing": {"paired": len(shared), "intersect": intersect, "only_a": only_a, "only_b": only_b},
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE,
                      "method": "paired percentile bootstrap over dialogues (scipy.stats.bootstrap)",
                      "p_definition": P_DEFINITION, "metrics": boot},
        "means": {"a": tables.means(ra), "b": tables.means(rb)},
        "type_recall": {t: {"a": ta.get(t), "b": tb.get(t)} for t in tables.type_order(ta.keys() | tb.keys())},
        "c_breakdown": {"a": tables.c_breakdown(ra), "b": tables.c_breakdown(rb)},
        "rerun": {"kind": kind, "why": why},
        "consistency": consistency,
    }


def fmt_p(p: float | None) -> str:
    """A p-value for tables: ``<0.001`` below 0.001, else three decimals; ``-`` for ``None``."""
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _ci(m: dict[str, Any]) -> str:
    return "-" if m["ci_low"] is None else f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]"


def _hits(t: dict[str, Any] | None) -> str:
    return "-" if t is None else f"{t['hit']}/{t['total']}"


def _recall(t: dict[str, Any] | None) -> str:
    return "-" if t is None else fmt(t["recall"])


def compare_tables(result: dict[str, Any]) -> list[Table]:
    """The tables of a :func:`compare` result, for the terminal and ``compare.md``."""
    boot, ma, mb = result["bootstrap"], result["means"]["a"], result["means"]["b"]
    out = [Table(f"Paired bootstrap over {result['pairing']['paired']} dialogues (B − A)",
                 ["metric", "A", "B", "B − A", "95% CI", "p"],
                 [[name, fmt(m["mean_a"], 3), fmt(m["mean_b"], 3), f"{m['diff']:+.3f}", _ci(m), fmt_p(m["p"])]
                  for name, m in boot["metrics"].items()],
                 note=f"{boot['resamples']} resamples, seed {boot['seed']}, percentile interval")]
    out.append(Table("Questions per dialogue (means)", ["quantity", "A", "B", "B − A"],
                     [[label, fmt(ma[k]), fmt(mb[k]), f"{mb[k] - ma[k]:+.2f}"]
                      for label, k in (("K (questions)", "mean_k"), ("|B| (Category B)", "mean_b"))]))
    out.append(Table("Recall per disagreement type (Table 12)",
                     ["type", "A hit/MAs", "A recall", "B hit/MAs", "B recall"],
                     [[t, _hits(v["a"]), _recall(v["a"]), _hits(v["b"]), _recall(v["b"])]
                      for t, v in result["type_recall"].items()]))
    ca, cb = result["c_breakdown"]["a"], result["c_breakdown"]["b"]
    out.append(Table("Category-C questions by reason (§E.2)", ["reason", "A n", "A share", "B n", "B share"],
                     [[r.replace("_", " "), str(ca[r]["count"]), fmt(ca[r]["share"], percent=True),
                       str(cb[r]["count"]), fmt(cb[r]["share"], percent=True)] for r in C_REASONS]))
    c = result["consistency"]
    if c is not None:
        rows = [["questions matched by key", str(c["matched"])],
                ["questions in one run only (A / B)", f"{c['only_a']} / {c['only_b']}"],
                ["divergent outcome unchanged", fmt(c["outcome_unchanged"], percent=True)]]
        rows += [[f"{who} answer unchanged", fmt(s, percent=True)] for who, s in c["answers_unchanged"].items()]
        rows.append(["ΔF1 (B − A)", f"{c['delta_f1']:+.3f}"])
        out.append(Table(f"Outcome consistency (Table 14): B re-runs A ({result['rerun']['why']})",
                         ["measure", "value"], rows))
    return out


def intro_lines(result: dict[str, Any]) -> list[str]:
    """One line per run (path, mode, access, rollouts, permute seed, cases) and the pairing."""
    lines = []
    for label in ("a", "b"):
        d = result[label]
        seed = "none" if d["permute_seed"] is None else d["permute_seed"]
        incomplete = ", incomplete run" if d["complete"] is False else ""
        lines.append(f"{label.upper()}: {d['path']} (mode {d['mode']}, access {d['access']}, rollouts {d['rollouts']}, "
                     f"permute seed {seed}; {d['scored']} scored, {d['failed']} failed{incomplete})")
    p = result["pairing"]
    extra = f"; left out: {len(p['only_a'])} only in A, {len(p['only_b'])} only in B" if p["intersect"] else ""
    lines.append(f"{p['paired']} dialogues paired by case id{extra}")
    if result["rerun"]["kind"] is None:
        lines.append(f"not a re-run of A ({result['rerun']['why']}): no outcome consistency")
    return lines
