"""Numbers of type labels: agreement of judged with planted types (the validation on
self-built data), the judged mix of a data set next to the paper's test split (Table 10),
and validated meeting disagreements per type and detector (Table 20). Types in the
App. B.5 taxonomy order.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from ioa_synth.evaluate.analysis.render import Table
from ioa_synth.protocol.cells import MA_TYPES, PAPER_MA_TYPE_DISTRIBUTION
from ioa_synth.reports.output import fmt
from ioa_synth.stats.agreement import nominal_kappa
from ioa_synth.typelabels.labels import TypeLabel

#: Label of a disagreement the judge gave no type (in the mixes).
NO_TYPE = "no type"


def agreement(labels: list[TypeLabel]) -> dict[str, Any]:
    """Judged vs planted types over the labels that have both: ``{"pairs", "agree",
    "agreement" (share), "kappa" (Cohen's, unweighted, over the taxonomy; ``None`` when
    undefined), "per_type": [{type, planted, agree, recall}]}``; ``pairs`` 0 (and the
    rest ``None``) when no label has a planted type."""
    pairs = [(lab.planted, lab.type) for lab in labels if lab.planted and lab.type]
    agree = sum(p == j for p, j in pairs)
    planted = Counter(p for p, _ in pairs)
    hits = Counter(p for p, j in pairs if p == j)
    return {"pairs": len(pairs), "agree": agree, "agreement": agree / len(pairs) if pairs else None,
            "kappa": nominal_kappa([p for p, _ in pairs], [j for _, j in pairs], MA_TYPES),
            "per_type": [{"type": t, "planted": planted[t], "agree": hits[t],
                          "recall": hits[t] / planted[t] if planted[t] else None} for t in MA_TYPES if planted[t]]}


def judged_mix(labels: list[TypeLabel]) -> list[dict[str, Any]]:
    """Per type: ``{type, judged, share, paper_share}`` (share of the labelled points; a
    point without a judged type counts under :data:`NO_TYPE`, with no paper share)."""
    counts = Counter(lab.type or NO_TYPE for lab in labels)
    total = sum(counts.values())
    names = [t for t in MA_TYPES] + ([NO_TYPE] if counts[NO_TYPE] else [])
    return [{"type": t, "judged": counts[t], "share": counts[t] / total if total else None,
             "paper_share": PAPER_MA_TYPE_DISTRIBUTION.get(t)} for t in names]


def meeting_types(report: dict[str, Any], type_of: Callable[[str, str], str | None]) -> dict[str, Any]:
    """Validated disagreements per type and detector, pooled over the report's sessions
    (Table 20): ``{"detectors": [names], "rows": [{type, <detector>: n, ..., all}],
    "unlabelled": n}``; a validated question without a label counts as unlabelled (label
    the sessions again after new answers)."""
    counts: dict[str, Counter] = {}
    unlabelled = 0
    for session in report["sessions"]:
        for name, row in session["detectors"].items():
            mine = counts.setdefault(name, Counter())
            for q in row["validated_questions"]:
                kind = type_of(session["session_id"], f"{row['label']}-{q['n']}")
                if kind is None:
                    unlabelled += 1
                mine[kind or NO_TYPE] += 1
    names = sorted(counts)
    present = [t for t in (*MA_TYPES, NO_TYPE) if any(c[t] for c in counts.values())]
    rows = [{"type": t, **{n: counts[n][t] for n in names}, "all": sum(counts[n][t] for n in names)} for t in present]
    return {"detectors": names, "rows": rows, "unlabelled": unlabelled}


def agreement_table(agree: dict[str, Any]) -> Table:
    """The agreement of :func:`agreement` as a table (per planted type, then all)."""
    rows = [[r["type"], str(r["planted"]), str(r["agree"]), fmt(r["recall"], percent=True)] for r in agree["per_type"]]
    rows.append(["all", str(agree["pairs"]), str(agree["agree"]), fmt(agree["agreement"], percent=True)])
    return Table("Judged vs planted type", ["planted type", "points", "judged the same", "agreement"], rows,
                 note=f"Cohen's kappa {fmt(agree['kappa'])} over {agree['pairs']} points")


def mix_table(mix: list[dict[str, Any]], title: str = "Judged type mix (Table 10)") -> Table:
    """The judged mix of :func:`judged_mix` next to the paper's test-split shares."""
    return Table(title, ["type", "points", "share", "paper (test split)"],
                 [[r["type"], str(r["judged"]), fmt(r["share"], percent=True), fmt(r["paper_share"], percent=True)]
                  for r in mix])


def meeting_table(types: dict[str, Any]) -> Table:
    """The per-type counts of :func:`meeting_types` as a table."""
    names = types["detectors"]
    rows = [[r["type"], *(str(r[n]) for n in names), str(r["all"])] for r in types["rows"]]
    note = f"{types['unlabelled']} validated disagreements have no label" if types["unlabelled"] else None
    return Table("Validated disagreements per type (Table 20)", ["type", *names, "all"], rows, note=note)
