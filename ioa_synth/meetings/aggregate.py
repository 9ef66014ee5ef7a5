"""``meeting report`` across sessions, aggregated as the paper does (§6.2, App. D.5).

The paper's numbers (``across["detectors"]``) pool over every session:

- **Valid** (``validated_per_session``): the detector's validated disagreements summed over
  sessions ÷ the number of sessions (paper: 1.67 / 1.89 / 2.89 over 18 sessions);
- **Validity** (``validity_rate``): validated ÷ divergent questions, both summed over sessions
  (paper: 88.2 / 94.4 / 94.5%). Valid ÷ Validity is then divergent questions per session,
  the same under every ``--rule`` (App. D.5's rule table); a mean of per-session rates has
  no such identity;
- **PR** (``pooled_recall``): the distinct disagreements the detector found ÷ all distinct
  disagreements, both summed over sessions (paper: 52.9% = 46/87);
- **Likert** (``discovery``, ``willingness``): per participant, then the mean over all
  participants of all sessions (a 5-person meeting weighs more than a 2-person one);
- **best-set votes** summed over participants (paper: 7 / 9 / 27), and the three-way majority
  of each session: the set with more votes than every other set wins the session; a tie for
  the most votes gives no winner (the session counts as a tie).

``across["per_session_means"]`` is an extra view: the plain mean of the per-session values
(the toolkit's earlier aggregation). ``across["pairs"]`` holds the paper's tests: for each pair
of detectors the paired bootstrap of
:func:`ioa_synth.stats.bootstrap.paired_bootstrap` with the session as unit
(10,000 resamples, seed 20260516, two-sided p, 95% CI) on the per-session values, and the
best-set comparison per session as +1 / 0 / −1 with its bootstrap p (the share of sessions b
won minus the share a won).
"""

from __future__ import annotations

from itertools import combinations
from statistics import fmean
from typing import Any

from ioa_synth.stats.bootstrap import CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap

#: Likert items of the survey (1-5), as in :data:`ioa_synth.meetings.forms.SURVEY_ITEMS`.
LIKERT = ("discovery", "willingness")
#: Per-session values compared between detectors by the paired bootstrap.
COMPARED = ("validated", "validity_rate", "discovery", "willingness", "pooled_recall")
#: Which aggregation each across-session number uses (written into report.json and report.md).
AGGREGATION = {
    "validated_per_session": "pooled: validated questions summed over sessions / sessions (the paper's Valid)",
    "validity_rate": "pooled: validated / divergent, both summed over sessions (the paper's Validity)",
    "pooled_recall": "pooled: distinct disagreements found / distinct disagreements, both summed over sessions "
                     "(the paper's PR)",
    "discovery": "per participant: mean over every participant of every session (the paper's Likert mean)",
    "willingness": "per participant: mean over every participant of every session (the paper's Likert mean)",
    "best_votes": "summed over participants; a session's three-way majority is the set with more votes than "
                  "every other, a tie for the most votes gives no winner",
    "per_session_means": "extra view: the plain mean of the per-session values (not the paper's way)",
    "pairs": "paired bootstrap with the session as unit on the per-session values; best set +1 / 0 / -1 per session",
}


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def session_winner(detectors: dict[str, dict[str, Any]]) -> str | None:
    """The three-way (n-way) majority of one session's best-set votes: the detector with more
    ``best_votes`` than every other, ``None`` on a tie for the most votes (or no vote)."""
    if not detectors:
        return None
    top = max(d["best_votes"] for d in detectors.values())
    leaders = [name for name, d in detectors.items() if d["best_votes"] == top]
    return leaders[0] if top > 0 and len(leaders) == 1 else None


def pooled_row(rows: list[dict[str, Any]], won: int) -> dict[str, Any]:
    """The paper's numbers of one detector from its per-session rows (see the module doc)."""
    divergent, validated = sum(x["divergent"] for x in rows), sum(x["validated"] for x in rows)
    merged = [x for x in rows if x.get("pooled_distinct") is not None]
    found, distinct = sum(x["pooled_found"] for x in merged), sum(x["pooled_distinct"] for x in merged)
    ratings = {item: [v for x in rows for v in x["ratings"][item]] for item in LIKERT}
    return {"sessions": len(rows), "participants": sum(len(x["ratings"][LIKERT[0]]) for x in rows),
            "questions": sum(x["questions"] for x in rows), "divergent": divergent, "validated": validated,
            "validated_per_session": _share(validated, len(rows)), "validity_rate": _share(validated, divergent),
            "found": found if merged else None, "distinct": distinct if merged else None,
            "pooled_recall": _share(found, distinct) if merged else None,
            **{item: _mean(ratings[item]) for item in LIKERT},
            "best_votes": sum(x["best_votes"] for x in rows), "sessions_won": won}


def _pair(a: str, b: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    both = [r["detectors"] for r in results if a in r["detectors"] and b in r["detectors"]]
    signs = [_sign(d[a]["best_votes"] - d[b]["best_votes"]) for d in both]
    tests = {}
    for metric in COMPARED:
        paired = [(d[a][metric], d[b][metric]) for d in both if d[a][metric] is not None and d[b][metric] is not None]
        if paired:
            tests[metric] = paired_bootstrap([x for x, _ in paired], [y for _, y in paired]).as_dict()
    best = {"per_session": signs, "a_better": signs.count(1), "tie": signs.count(0), "b_better": signs.count(-1)}
    if signs:  # a's value 1 where a got more votes, b's where b did: mean b - a = -(mean sign)
        best["test"] = paired_bootstrap([float(s > 0) for s in signs], [float(s < 0) for s in signs]).as_dict()
    return {"a": a, "b": b, "sessions": len(both), "tests": tests, "best_set": best}


def across_sessions(results: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"aggregation", "detectors", "per_session_means", "best_set", "pairs", "bootstrap"}``
    from :func:`ioa_synth.meetings.report.session_results` rows (with pooled recall filled in
    when a merge judge ran)."""
    names = sorted({d for r in results for d in r["detectors"]})
    winners = [session_winner(r["detectors"]) for r in results]
    detectors, per_session = {}, {}
    for name in names:
        rows = [r["detectors"][name] for r in results if name in r["detectors"]]
        detectors[name] = pooled_row(rows, winners.count(name))
        per_session[name] = {"sessions": len(rows), **{m: _mean([x[m] for x in rows if x[m] is not None])
                                                       for m in COMPARED}}
    return {"aggregation": AGGREGATION, "detectors": detectors, "per_session_means": per_session,
            "best_set": {"winners": winners, "ties": winners.count(None),
                         "rule": "a session's winner has more best-set votes than every other set; a tie for the "
                                 "most votes gives no winner"},
            "pairs": [_pair(a, b, results) for a, b in combinations(names, 2)],
            "bootstrap": {"unit": "session", "resamples": DEFAULT_RESAMPLES, "seed": DEFAULT_SEED,
                          "confidence": CONFIDENCE, "statistic": "mean per-session difference b - a", "p": "two-sided"}}
