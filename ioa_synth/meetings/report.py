"""``meeting report``: per session and detector, then across sessions (paper §6.2, App. D.5).

Per session and detector (the only place the blinding is lifted): questions, divergent
questions, validated disagreements (divergent questions whose ``valid`` labels meet the
``--rule``: ``any`` at least one, ``majority`` more than half, ``unanimous`` all),
validity rate (validated / divergent), best-set votes, Likert means, and pooled recall
when a merge judge runs. Across sessions: per-detector means and, for each pair of
detectors, the paired bootstrap of :func:`ioa_synth.evaluate.analysis.bootstrap.paired_bootstrap`
with the session as unit (10,000 resamples, seed 20260516, two-sided p, 95% CI) and the
best-set comparison as +1 / 0 / −1 per session.
"""

from __future__ import annotations

from itertools import combinations
from statistics import fmean
from typing import Any, Callable

from ioa_synth.evaluate.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap
from ioa_synth.meetings.forms import SURVEY_ITEMS, VALIDITY_LABELS, divergent, phase
from ioa_synth.meetings.session import Session, SessionError

#: ``--rule``: does a question with ``v`` ``valid`` labels out of ``n`` count as validated?
RULES: dict[str, Callable[[int, int], bool]] = {
    "any": lambda v, n: v >= 1,
    "majority": lambda v, n: v > n / 2,
    "unanimous": lambda v, n: v == n,
}
#: Per-session values compared between detectors by the paired bootstrap.
COMPARED = ("validated", "validity_rate", "discovery", "willingness", "pooled_recall")


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def session_results(session: Session, rule: str) -> dict[str, Any]:
    """``{"session", "participants", "detectors": {name: {...}}}`` of a finished session;
    each detector's row also lists its ``validated_questions`` (``{"n", "question",
    "options"}``: for the merge judge, and type labels keyed ``<label>-<n>``).

    Raises:
        SessionError: not probed, or some participant has not answered or labelled.
    """
    sets = session.question_sets()
    n = len(session.ids)
    if phase(session) != "done":
        raise SessionError(f"{session.folder}: not finished: {len(session.answers())}/{n} participants answered, "
                           f"{len(session.labels())}/{n} labelled")
    blinding = session.read("private", "blinding.json", default={})
    labels = session.labels()
    div = divergent(session)
    detectors = {}
    for label, name in sorted(blinding.items()):
        mine = [d for d in div if d["set"] == label]
        given = [[labels[p]["labels"][label][str(d["n"])] for p in session.ids] for d in mine]
        validated = [d for d, g in zip(mine, given) if RULES[rule](g.count("valid"), n)]
        detectors[name] = {
            "label": label, "questions": len(sets[label]), "divergent": len(mine), "validated": len(validated),
            "validity_rate": len(validated) / len(mine) if mine else None,
            "label_counts": {v: sum(g.count(v) for g in given) for v in VALIDITY_LABELS},
            "best_votes": sum(labels[p]["survey"]["best"] == label for p in session.ids),
            **{item: _mean([labels[p]["survey"][item][label] for p in session.ids]) for item in SURVEY_ITEMS},
            "pooled_recall": None,
            "validated_questions": [{"n": d["n"], "question": d["question"], "options": d["options"]}
                                    for d in validated],
        }
    return {"session": str(session.folder), "session_id": session.session_id, "participants": n,
            "detectors": detectors}


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def across_sessions(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-detector means over sessions and the paired comparisons of every detector pair."""
    names = sorted({d for r in results for d in r["detectors"]})
    summary = {}
    for name in names:
        rows = [r["detectors"][name] for r in results if name in r["detectors"]]
        summary[name] = {"sessions": len(rows), "best_votes": sum(x["best_votes"] for x in rows),
                         **{m: _mean([x[m] for x in rows if x[m] is not None]) for m in COMPARED}}
    pairs = []
    for a, b in combinations(names, 2):
        both = [r["detectors"] for r in results if a in r["detectors"] and b in r["detectors"]]
        signs = [_sign(d[a]["best_votes"] - d[b]["best_votes"]) for d in both]
        tests = {}
        for metric in COMPARED:
            paired = [(d[a][metric], d[b][metric]) for d in both if d[a][metric] is not None and d[b][metric] is not None]
            if paired:
                tests[metric] = paired_bootstrap([x for x, _ in paired], [y for _, y in paired]).as_dict()
        pairs.append({"a": a, "b": b, "sessions": len(both), "tests": tests, "best_set": {
            "per_session": signs, "a_better": signs.count(1), "tie": signs.count(0), "b_better": signs.count(-1)}})
    return {"detectors": summary, "pairs": pairs,
            "bootstrap": {"unit": "session", "resamples": DEFAULT_RESAMPLES, "seed": DEFAULT_SEED,
                          "confidence": 0.95, "statistic": "mean per-session difference b - a", "p": "two-sided"}}


def build_report(sessions: list[Session], rule: str, merge: Callable[[Session, dict[str, list]], dict] | None = None
                 ) -> dict[str, Any]:
    """The whole report: ``{"rule", "sessions": [...], "across": {...}}``; ``merge(session,
    {detector: validated questions})`` gives pooled recall when a merge judge is configured.

    Raises:
        SessionError: a session is not finished (nothing is reported then).
    """
    results = [session_results(s, rule) for s in sessions]
    for s, r in zip(sessions, results):
        if merge is not None:
            pooled = merge(s, {d: row["validated_questions"] for d, row in r["detectors"].items()})
            r["merge"] = {"distinct": pooled["distinct"], "items": pooled["items"]}
            for d, value in pooled["recall"].items():
                r["detectors"][d]["pooled_recall"] = value
    return {"rule": rule, "merge_judge": merge is not None, "sessions": results, "across": across_sessions(results)}
