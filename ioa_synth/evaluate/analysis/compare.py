"""``ioa-synth compare RESULTS_A RESULTS_B``: two evaluate runs on the same
dialogues, side by side.

- dialogues are paired by case id (scored cases only) when both runs read the same input
  file for them (the sha256 each run stores in ``run.json``); differing sets, or a case
  whose input differs, are refused unless ``intersect``, which pairs only the identical
  ones and says how many it left out;
- paired bootstrap of the mean difference B − A of F1, precision and recall
  (:mod:`.bootstrap`; paper App. D.3), next to an exact sign-flip permutation test
  (:mod:`.permutation`), with ``warnings`` on what the sample size allows;
- per-type recall (paper Table 12), Category-C reasons as shares (paper §E.2), mean K and |B|;
- when B is a ``--permute-seed``/``--rollouts`` re-run of A: per-question outcome
  consistency (paper Table 14) and ΔF1.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.evaluate.analysis import tables
from ioa_synth.stats.bootstrap import (CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, P_DEFINITION,
                                                  paired_bootstrap)
from ioa_synth.evaluate.analysis.consistency import outcome_consistency, rerun_kind
from ioa_synth.stats.permutation import (EXACT_MAX_PAIRS, bootstrap_p_floor, distinct_resamples,
                                                     sign_flip_test, small_sample_warnings)
from ioa_synth.evaluate.analysis.render import Table
from ioa_synth.evaluate.analysis.results import C_REASONS, Results
from ioa_synth.reports.output import NA, fmt
from ioa_synth.text.plural import plural

METRICS: tuple[str, ...] = ("f1", "precision", "recall")
#: Ids listed in a refusal before "... and N more".
MAX_LISTED = 20


class CompareError(ValueError):
    """Two results folders that cannot be compared (one-line message)."""


def _listed(ids: list[str]) -> str:
    more = f", ... and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return ", ".join(ids[:MAX_LISTED]) + more


def input_hash(r: Results, case_id: str) -> str | None:
    """sha256 of the input file ``case_id`` was read from in run ``r`` (``None`` when the
    run did not store it)."""
    inputs = r.run.fingerprint_parts.get("inputs")
    source = r.records[case_id].source_file
    return inputs.get(source) if isinstance(inputs, dict) and source else None


def pair_cases(a: Results, b: Results, intersect: bool = False) -> dict[str, Any]:
    """The pairing: ``{paired, intersect, only_a, only_b, different_inputs, unverified}``
    (sorted case ids except ``paired``, their number; ``shared`` holds the paired ids).

    A scored case in both runs is paired when both runs stored the same input sha256 for
    it; ``different_inputs`` lists those whose inputs differ (other dialogues under the
    same file name), ``unverified`` those a run stored no hash for (paired by id only).

    Raises :class:`CompareError` naming the unpaired ids when the sets differ or inputs
    differ and ``intersect`` is false, or when no case can be paired."""
    sa, sb = set(a.scored), set(b.scored)
    common, only_a, only_b = sorted(sa & sb), sorted(sa - sb), sorted(sb - sa)
    hashes = {c: (input_hash(a, c), input_hash(b, c)) for c in common}
    differ = [c for c, (ha, hb) in hashes.items() if ha and hb and ha != hb]
    shared = [c for c in common if c not in differ]
    if not shared:
        why = (f" with identical inputs in common: the {len(differ)} shared case id(s) were read from different "
               f"input files (same name, other content): {_listed(differ)}") if differ else " in common"
        raise CompareError(f"{a.path} and {b.path} have no scored case{why}")
    if (only_a or only_b) and not intersect:
        parts = [f"only in {r.path} ({len(ids)}): {_listed(ids)}" for r, ids in ((a, only_a), (b, only_b)) if ids]
        raise CompareError(f"the scored case sets differ: {'; '.join(parts)} "
                           f"(--intersect compares the {len(shared)} shared case(s) with identical inputs)")
    if differ and not intersect:
        raise CompareError(f"{len(differ)} of the {len(common)} shared case(s) were read from different input files "
                           f"in {a.path} and {b.path} (same name, other content): {_listed(differ)}; they are not "
                           f"the same dialogues (--intersect compares the {len(shared)} with identical inputs)")
    return {"paired": len(shared), "intersect": intersect, "only_a": only_a, "only_b": only_b,
            "different_inputs": differ, "unverified": [c for c in shared if not all(hashes[c])], "shared": shared}


def pairing_warnings(pairing: dict[str, Any]) -> list[str]:
    """Sentences on the cases left out or paired without proof of identical inputs."""
    out = []
    if pairing["different_inputs"]:
        out.append(f"{len(pairing['different_inputs'])} shared case(s) were left out because the two runs read "
                   f"different input files for them (--intersect); {pairing['paired']} pair(s) remain.")
    if pairing["unverified"]:
        out.append(f"{len(pairing['unverified'])} pair(s) are matched by case id only: a run stored no input "
                   "hash for them, so identical dialogues are not verified.")
    return out


def compare(a: Results, b: Results, intersect: bool = False, resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The comparison of runs ``a`` and ``b`` as a JSON-ready dict (the ``compare.json`` content):
    ``{a, b, pairing, bootstrap: {resamples, seed, confidence, method, p_definition, p_floor,
    distinct_resamples, permutation, metrics: {f1|precision|recall: {n, mean_a, mean_b, diff,
    ci_low, ci_high, p, p_permutation}}}, warnings, means, type_recall, c_breakdown, rerun:
    {kind, why}, consistency}``. Values are 0-1 shares or counts; ``warnings`` is a list of
    sentences (small sample, p at its floor, pairs left out); ``consistency`` is ``None``
    unless B is a re-run of A (see :func:`.consistency.rerun_kind`).

    Raises :class:`CompareError` (see :func:`pair_cases`) and ``ValueError`` for ``resamples`` < 1.
    """
    pairing = pair_cases(a, b, intersect)
    shared = pairing.pop("shared")
    ra, rb = [a.scored[c] for c in shared], [b.scored[c] for c in shared]
    n, floor = len(shared), bootstrap_p_floor(resamples)
    boot, warnings, flips = {}, pairing_warnings(pairing) + small_sample_warnings(n, resamples), None
    for m in METRICS:
        xa, xb = [getattr(r.metrics, m) for r in ra], [getattr(r.metrics, m) for r in rb]
        flips = sign_flip_test(xa, xb, resamples=resamples, seed=seed)
        boot[m] = paired_bootstrap(xa, xb, resamples=resamples, seed=seed).as_dict() | {"p_permutation": flips.p}
        if boot[m]["p"] is not None and boot[m]["p"] <= floor:
            warnings.append(f"The bootstrap p of {m} is at its floor 2/(B+1) = {floor:.2g}: it only says p <= "
                            f"{floor:.2g}, a bound set by the {resamples:,} resamples, not by the data.")
    ta, tb = tables.type_recall(ra), tables.type_recall(rb)
    kind, why = rerun_kind(a, b)
    consistency = None
    if kind:
        consistency = outcome_consistency(a.scored, b.scored, shared) | {"delta_f1": boot["f1"]["diff"]}
    permutation = {"method": "paired sign-flip permutation test of the mean difference (scipy.stats.permutation_test)",
                   "exact": flips.exact, "patterns": flips.resamples, "p_floor": flips.p_floor,
                   "exact_up_to_pairs": EXACT_MAX_PAIRS}
    return {
        "a": a.describe(), "b": b.describe(),
        "pairing": pairing,
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE,
                      "method": "paired percentile bootstrap over dialogues (scipy.stats.bootstrap)",
                      "p_definition": P_DEFINITION, "p_floor": floor, "distinct_resamples": distinct_resamples(n),
                      "permutation": permutation, "metrics": boot},
        "warnings": warnings,
        "means": {"a": tables.means(ra), "b": tables.means(rb)},
        "type_recall": {t: {"a": ta.get(t), "b": tb.get(t)} for t in tables.type_order(ta.keys() | tb.keys())},
        "c_breakdown": {"a": tables.c_breakdown(ra), "b": tables.c_breakdown(rb)},
        "rerun": {"kind": kind, "why": why},
        "consistency": consistency,
    }


def fmt_p(p: float | None, floor: float | None = None) -> str:
    """A p-value for tables: ``<=F`` at the test's floor ``F`` (the smallest p it can give)
    when that floor is below 1, ``<0.001`` below 0.001, else three decimals; ``n/a`` for
    ``None``. A floor of 1 (too few pairs for the test to reject anything) shows p as is."""
    if p is None:
        return NA
    if floor is not None and floor < 1 and p <= floor:
        return f"<={floor:.2g}"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _ci(m: dict[str, Any]) -> str:
    return NA if m["ci_low"] is None else f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]"


def _hits(t: dict[str, Any] | None) -> str:
    return NA if t is None else f"{t['hit']}/{t['total']}"


def _recall(t: dict[str, Any] | None) -> str:
    return fmt(None if t is None else t["recall"], percent=True)


def compare_tables(result: dict[str, Any]) -> list[Table]:
    """The tables of a :func:`compare` result, for the terminal and ``compare.md``."""
    boot, ma, mb = result["bootstrap"], result["means"]["a"], result["means"]["b"]
    perm = boot.get("permutation") or {}
    kind = "exact" if perm.get("exact") else "Monte Carlo"
    out = [Table(f"Paired bootstrap over {plural(result['pairing']['paired'], 'dialogue')} (B − A)",
                 ["metric", "A", "B", "B − A", "95% CI", "p (bootstrap)", "p (sign-flip)"],
                 [[name, fmt(m["mean_a"], 3), fmt(m["mean_b"], 3), f"{m['diff']:+.3f}", _ci(m),
                   fmt_p(m["p"], boot.get("p_floor")), fmt_p(m.get("p_permutation"), perm.get("p_floor"))]
                  for name, m in boot["metrics"].items()],
                 note=f"{boot['resamples']} resamples, seed {boot['seed']}, percentile interval; bootstrap p "
                      f">= 2/(B+1); sign-flip p {kind} over {perm.get('patterns', 0):,} sign patterns")]
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
        dk, ak = c.get("divergent_kept"), c.get("attributed_kept")
        if dk and ak:  # a compare.json written before these existed has neither
            rows += [["divergent in A, still divergent in B", f"{dk['kept']}/{dk['before']} "
                      f"({fmt(dk['share'], percent=True)})"],
                     ["divergent and attributed (Category A) in A, still in B", f"{ak['kept']}/{ak['before']} "
                      f"({fmt(ak['share'], percent=True)}; same MA {fmt(ak['share_same_ma'], percent=True)})"]]
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
    if p.get("different_inputs"):
        extra += f"; {len(p['different_inputs'])} left out: different input files in A and B"
    lines.append(f"{plural(p['paired'], 'dialogue')} paired by case id and input file{extra}")
    if result["rerun"]["kind"] is None:
        lines.append(f"not a re-run of A ({result['rerun']['why']}): no outcome consistency")
    lines += [f"warning: {w}" for w in result.get("warnings", [])]
    return lines


#: The chart of a re-run's outcome consistency, written beside ``compare.json``.
ORDER_CHART = "order_sensitivity.png"


def order_sensitivity_png(result: dict[str, Any]) -> bytes | None:
    """The PNG bar chart of a :func:`compare` result's outcome consistency (paper Table 14):
    each participant's answers unchanged, the divergent outcome unchanged, divergent questions
    kept divergent, and divergent-and-attributed (Category A) questions kept Category A, each
    with its n; ``None`` when B is not a re-run of A."""
    from ioa_synth.evaluate.analysis.render import bar_chart_png

    c = result["consistency"]
    if c is None:
        return None
    labels = [f"{who} answer\nunchanged" for who in c["answers_unchanged"]] + ["divergent outcome\nunchanged"]
    values = [*c["answers_unchanged"].values(), c["outcome_unchanged"]]
    counts = [c["matched"]] * len(values)
    dk, ak = c["divergent_kept"], c["attributed_kept"]
    labels += ["divergent\nstill divergent", "divergent and\nattributed kept"]
    values += [dk["share"], ak["share"]]
    counts += [dk["before"], ak["before"]]
    title = f"Outcome consistency of B against A (Table 14)\n{result['rerun']['why']}"
    return bar_chart_png(title, labels, values, "share of questions", counts)
