"""``meeting report``: per session and detector, then across sessions (paper §6.2, App. D.5).

Per session and detector (the only place the blinding is lifted): questions, divergent
questions, validated disagreements (divergent questions whose ``valid`` labels meet the
``--rule``: ``any`` at least one, ``majority`` more than half, ``unanimous`` all),
validity rate (validated / divergent), best-set votes, Likert means and each participant's
ratings, and pooled recall (found / distinct disagreements of the session) when a merge
judge runs. Across sessions: :func:`ioa_synth.meetings.aggregate.across_sessions` (pooled as
the paper, per-session means as an extra view, paired bootstrap per detector pair).
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, Callable

from ioa_synth.meetings.aggregate import across_sessions
from ioa_synth.meetings.forms import SURVEY_ITEMS, VALIDITY_LABELS, divergent, phase
from ioa_synth.meetings.session import Session, SessionError

#: ``--rule``: does a question with ``v`` ``valid`` labels out of ``n`` count as validated?
RULES: dict[str, Callable[[int, int], bool]] = {
    "any": lambda v, n: v >= 1,
    "majority": lambda v, n: v > n / 2,
    "unanimous": lambda v, n: v == n,
}


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
            "ratings": {item: [labels[p]["survey"][item][label] for p in session.ids] for item in SURVEY_ITEMS},
            "pooled_recall": None, "pooled_found": None, "pooled_distinct": None,
            "validated_questions": [{"n": d["n"], "question": d["question"], "options": d["options"]}
                                    for d in validated],
        }
    return {"session": str(session.folder), "session_id": session.session_id, "participants": n,
            "detectors": detectors}


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
                row = r["detectors"][d]
                row["pooled_recall"], row["pooled_found"], row["pooled_distinct"] = value, pooled["found"][d], pooled["distinct"]
    return {"rule": rule, "merge_judge": merge is not None, "sessions": results, "across": across_sessions(results)}
