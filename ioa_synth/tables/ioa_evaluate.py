"""IoA paper tables made from ``ioa-synth evaluate`` results folders: P/R/F1/K per prober
(ioa-1), the disagreement-type mix (Table 10), recall per type (Table 12), the order
sensitivity of a permuted re-run (Table 14) and the information-access ablation (Table 16).

Every number comes from :mod:`ioa_synth.evaluate.analysis` (the ``report`` and ``compare``
commands' code): means of per-dialogue values (paper §4.2), recall per type over all MAs,
the paired bootstrap over dialogues (10,000 resamples, seed 20260516, two-sided p).
"""

from __future__ import annotations

from pathlib import Path

from ioa_synth.evaluate.analysis import tables as ev
from ioa_synth.stats.bootstrap import paired_bootstrap
from ioa_synth.evaluate.analysis.compare import CompareError, compare
from ioa_synth.evaluate.analysis.results import Results, ResultsError, load_results
from ioa_synth.probing.access import ACCESS_LEVELS
from ioa_synth.protocol.cells import PAPER_MA_TYPE_DISTRIBUTION
from ioa_synth.reports.output import fmt
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register
from ioa_synth.typelabels.labels import LabelsError, TypeLookup, load_lookup

#: Significance level of the marks.
ALPHA = 0.05
MARK = "†"
EVALUATE = "ioa-synth evaluate --data DATA/test --out RESULTS"


def counted(part: int, whole: int) -> str:
    """``"50.0 (2/4)"``: a share in % with its counts; ``"– (0/0)"`` over nothing."""
    return f"{percent(part / whole if whole else None)} ({part}/{whole})"


def read_all(folders: list[Path]) -> list[Results]:
    """Each folder read by evaluate's one reader; :class:`TableError` (its line) when one is refused
    or has no scored dialogue."""
    out = []
    for folder in folders:
        try:
            res = load_results(folder)
        except ResultsError as exc:
            raise TableError(str(exc)) from None
        if not res.scored:
            raise TableError(f"{folder}: no scored dialogue ({len(res.failed)} failed)")
        out.append(res)
    return out


def type_labels(folders: dict[str, list[Path]]) -> TypeLookup | None:
    """The judged types of the ``label-types`` folder among ``folders`` (``None`` when none
    is given): they go before the records' own types, as ``report --by type --types``."""
    given = folders.get("label-types") or []
    if not given:
        return None
    try:
        return load_lookup(given[0])
    except LabelsError as exc:
        raise TableError(str(exc)) from None


def prober_label(res: Results) -> str:
    """The prober's model (``run.json`` components), or the folder name when none is recorded."""
    model = (res.run.components.get("prober") or {}).get("model")
    return str(model) if model else res.path.name


def labels(results: list[Results]) -> list[str]:
    """One row label per folder: the prober's model, with the folder name when models repeat."""
    names = [prober_label(r) for r in results]
    return [f"{n} ({r.path.name})" if names.count(n) > 1 else n for n, r in zip(names, results)]


def significance(base: Results, other: Results, metric: str) -> bool:
    """Whether ``other``'s per-dialogue ``metric`` differs from ``base``'s on their shared
    dialogues (paired bootstrap, two-sided p < :data:`ALPHA`)."""
    shared = sorted(set(base.scored) & set(other.scored))
    a = [getattr(base.scored[c].metrics, metric) for c in shared]
    b = [getattr(other.scored[c].metrics, metric) for c in shared]
    if len(shared) < 2:
        return False
    p = paired_bootstrap(a, b).p
    return p is not None and p < ALPHA


def score_rows(results: list[Results], names: list[str]) -> list[list[str]]:
    rows = []
    for i, (res, name) in enumerate(zip(results, names)):
        m = ev.means(res.scored.values())
        cells = [name, str(m["cases"])]
        for metric in ("precision", "recall", "f1"):
            mark = MARK if i > 0 and significance(results[0], res, metric) else ""
            cells.append(percent(m[metric]) + mark)
        rows.append(cells + [fmt(m["mean_k"], digits=1)])
    return rows


def coverage_notes(results: list[Results]) -> list[str]:
    """A note per folder whose scored dialogues differ from the first folder's (its means are
    over other dialogues; the marks pair the shared ones)."""
    base = set(results[0].scored)
    notes = []
    for res in results[1:]:
        mine = set(res.scored)
        if mine != base:
            notes.append(f"{res.path.name} scored {len(mine)} dialogues, {len(mine & base)} of them shared with "
                         f"{results[0].path.name} ({len(base)}): its means are over its own dialogues, its marks "
                         "over the shared ones.")
    return notes


SCORE_NOTES = ["P, R, F1: means of per-dialogue values in % (paper §4.2); K: questions per dialogue.",
                f"{MARK}: differs from the first row, paired bootstrap over shared dialogues "
                "(10,000 resamples, seed 20260516), two-sided p < 0.05."]


def prober_scores(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-1: one row per prober (folder), P / R / F1 (%) and K."""
    results = read_all(folders["evaluate"])
    return PaperTable("ioa-1", "Table 1: detection scores per prober (P / R / F1, %)",
                      ["prober", "dialogues", "P", "R", "F1", "K"], score_rows(results, labels(results)),
                      SCORE_NOTES + coverage_notes(results))


def access_ablation(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-16: one row per information-access setting (``--access``), in the paper's order."""
    results = read_all(folders["evaluate"])
    by_access: dict[str, Results] = {}
    for res in results:
        access = res.run.settings.access
        if access in by_access:
            raise TableError(f"{res.path} and {by_access[access].path} both ran --access {access}; "
                             "ioa-16 needs one evaluate folder per access setting")
        by_access[access] = res
    order = [a for a in ACCESS_LEVELS if a in by_access] + sorted(set(by_access) - set(ACCESS_LEVELS))
    ordered = [by_access[a] for a in order]
    return PaperTable("ioa-16", "Table 16: information-access ablation of the prober (P / R / F1, %)",
                      ["access", "dialogues", "P", "R", "F1", "K"], score_rows(ordered, order),
                      SCORE_NOTES + ["access settings as in App. C.3 (docs/evaluate.md, --access)."]
                      + coverage_notes(ordered))


def type_recall(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-12: recall per disagreement type (rows) for each prober (columns), % with hit/total;
    MA types from a ``label-types`` folder when one is given."""
    results = read_all(folders["evaluate"])
    lookup = type_labels(folders)
    per = [ev.type_recall(r.scored.values(), lookup) for r in results]
    types = ev.type_order({t for p in per for t in p})
    names = labels(results)
    rows = []
    for t in types + ["all"]:
        cells = [t]
        for p in per:
            hit, total = ((sum(v["hit"] for v in p.values()), sum(v["total"] for v in p.values())) if t == "all"
                          else (p[t]["hit"], p[t]["total"]) if t in p else (0, 0))
            cells.append(counted(hit, total))
        rows.append(cells)
    return PaperTable("ioa-12", "Table 12: recall per disagreement type (%, hit MAs / MAs)", ["type", *names], rows,
                      ["Recall over all MAs of each type (an MA is hit when some Category-A question is attributed "
                       "to it); 'untyped': MAs with no type (label them with 'ioa-synth label-types')."])


def type_mix(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-10: share of MAs per disagreement type over the dialogues of one evaluate folder,
    next to the paper's test-split shares; MA types from a ``label-types`` folder when one is given."""
    (res,) = read_all(folders["evaluate"])
    counts = {t: v["total"] for t, v in ev.type_recall(res.scored.values(), type_labels(folders)).items()}
    total = sum(counts.values())
    rows = [[t, str(counts.get(t, 0)), percent(counts.get(t, 0) / total if total else None),
             percent(PAPER_MA_TYPE_DISTRIBUTION.get(t)) if t in PAPER_MA_TYPE_DISTRIBUTION else "–"]
            for t in ev.type_order(set(counts) | set(PAPER_MA_TYPE_DISTRIBUTION))]
    rows.append(["all", str(total), percent(1.0 if total else None), percent(sum(PAPER_MA_TYPE_DISTRIBUTION.values()))])
    return PaperTable("ioa-10", "Table 10: disagreement types of the test split (% of MAs)",
                      ["type", "MAs", "share", "paper"], rows,
                      [f"Over the {len(res.scored)} scored dialogues of {res.path.name}; 'paper': the test split's "
                       "shares (Table 10)."])


def order_sensitivity(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-14: per permuted re-run of the first folder (``--permute-seed S --questions-from
    FIRST``): questions matched by key, share whose divergent outcome is kept, share of each
    participant's (P1, P2) answers kept, in % (``compare``'s consistency)."""
    first, *reruns = read_all(folders["evaluate"])
    rows = []
    for res in reruns:
        try:
            result = compare(first, res)
        except CompareError as exc:
            raise TableError(str(exc)) from None
        kind, why = result["rerun"]["kind"], result["rerun"]["why"]
        if not kind or "permute_seed" not in kind:
            raise TableError(f"{res.path} is not a permuted re-run of {first.path} ({why}); make it with "
                             f"'ioa-synth evaluate ... --permute-seed S --questions-from {first.path}'")
        c = result["consistency"]
        answers, dk, ak = c["answers_unchanged"], c["divergent_kept"], c["attributed_kept"]
        seed = res.run.settings.permute_seed
        rows.append([f"permute seed {seed}", str(c["matched"]), percent(c["outcome_unchanged"]),
                     percent(answers.get("M1")), percent(answers.get("M2")), counted(dk["kept"], dk["before"]),
                     counted(ak["kept"], ak["before"]), counted(ak["same_ma"], ak["before"])])
    return PaperTable("ioa-14", "Table 14: order sensitivity, outcomes kept after permuting question and option order",
                      ["re-run", "questions", "outcome kept (%)", "P1 answer kept (%)", "P2 answer kept (%)",
                       "divergent kept (%)", "divergent and attributed kept (%)", "attributed to the same MA (%)"], rows,
                      [f"Against {first.path.name} (the original order); questions matched by stem and options, "
                       "answers compared in the prober's original option order (compare).",
                       "Divergent kept: of the questions divergent in the original run, those still divergent "
                       "(kept/before); divergent and attributed: of its Category-A questions, those still "
                       "Category A after permutation, in all and attributed to the same MA (compare.json's "
                       "consistency.divergent_kept, attributed_kept)."])


_ONE_PER_PROBER = (Needs("evaluate", 1, None, "one per prober (the first is the reference of the marks)"),)
#: Judged MA types (released data has none): a ``label-types`` folder of the same data, optional.
TYPES = Needs("label-types", 0, 1, "optional: judged MA types of the data (ioa-synth label-types DATA --out LABELS)")
register(TableSpec("ioa-1", "Detection scores per prober (P / R / F1 / K)", "IoA paper, Table 1 (§4.2, §6.1)",
                   _ONE_PER_PROBER, EVALUATE + " (once per prober config)", prober_scores))
register(TableSpec("ioa-10", "Disagreement-type mix of the test split", "IoA paper, Table 10 (App. B.5)",
                   (Needs("evaluate", 1, 1, "over the test split"), TYPES),
                   EVALUATE, type_mix))
register(TableSpec("ioa-12", "Recall per disagreement type", "IoA paper, Table 12",
                   (Needs("evaluate", 1, None, "one per prober"), TYPES), EVALUATE + " (once per prober config)",
                   type_recall))
register(TableSpec("ioa-14", "Order sensitivity: outcomes kept after permutation", "IoA paper, Table 14 (App. C.1)",
                   (Needs("evaluate", 2, None, "the original run first, then its permuted re-runs"),),
                   EVALUATE + "; then the same with --permute-seed S --questions-from RESULTS", order_sensitivity))
register(TableSpec("ioa-16", "Information-access ablation", "IoA paper, Table 16 (App. C.3)",
                   (Needs("evaluate", 1, len(ACCESS_LEVELS), "one per --access setting"),),
                   EVALUATE + " --access " + "|".join(ACCESS_LEVELS), access_ablation))
