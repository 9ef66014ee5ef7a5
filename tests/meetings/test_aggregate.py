"""``meeting report`` across sessions as the paper aggregates (§6.2, App. D.5): Valid,
Validity and PR pooled over sessions (per-session means only as an extra view), Likert per
participant, the best-set three-way majority with its ties, and the bootstrap p of the
best-set comparison. Every expected number is worked out by hand below."""

from __future__ import annotations

import json

import pytest

from ioa_synth.stats.bootstrap import paired_bootstrap
from ioa_synth.meetings.aggregate import session_winner
from ioa_synth.meetings.forms import save_answers, save_labels
from ioa_synth.meetings.session import Session

from .conftest import A, B, SAMPLES, MeetingResponder, set_of

G = "gammadetector"


def test_pooled_as_the_paper_and_per_session_means_as_extra_view(cli, three_sessions, tmp_path):
    # conftest.PLAN, rule any: alpha divergent 2, 1, 2 and validated 1, 1, 2;
    # beta divergent 2, 0, 1 and validated 2, 0, 1.
    res = cli("meeting", "report", *three_sessions, "--json")
    assert res.exit_code == 0, res.output
    across = json.loads(res.stdout)["across"]
    a, b = across["detectors"][A], across["detectors"][B]
    assert (a["divergent"], a["validated"], b["divergent"], b["validated"]) == (5, 4, 3, 3)
    assert a["validity_rate"] == pytest.approx(4 / 5)             # pooled: (1+1+2)/(2+1+2)
    assert a["validated_per_session"] == pytest.approx(4 / 3)     # Valid: 4 validated / 3 sessions
    assert b["validity_rate"] == pytest.approx(3 / 3)
    mean = across["per_session_means"][A]
    assert mean["validity_rate"] == pytest.approx((1 / 2 + 1 / 1 + 2 / 2) / 3)  # 0.833: not 0.8
    assert mean["validated"] == pytest.approx(4 / 3)
    assert "pooled" in across["aggregation"]["validity_rate"]
    assert "extra view" in across["aggregation"]["per_session_means"]

    # Valid / Validity = divergent per session (5/3 for alpha) under every rule only when pooled:
    # majority validates 0, 1, 2 of alpha's 2, 1, 2 divergent questions.
    res = cli("meeting", "report", *three_sessions, "--rule", "majority", "--json")
    maj = json.loads(res.stdout)["across"]
    pooled = maj["detectors"][A]
    assert pooled["validity_rate"] == pytest.approx(3 / 5) and pooled["validated_per_session"] == pytest.approx(1.0)
    assert pooled["validated_per_session"] / pooled["validity_rate"] == pytest.approx(5 / 3)
    assert a["validated_per_session"] / a["validity_rate"] == pytest.approx(5 / 3)
    per = maj["per_session_means"][A]
    assert per["validity_rate"] == pytest.approx((0 + 1 + 1) / 3)
    assert per["validated"] / per["validity_rate"] == pytest.approx(1.5)              # rule majority
    assert mean["validated"] / mean["validity_rate"] == pytest.approx((4 / 3) / (5 / 6))  # rule any: 1.6

    # the files and the terminal say which aggregation each number uses
    out = tmp_path / "report"
    assert cli("meeting", "report", *three_sessions, "--out", out).exit_code == 0
    md = (out / "report.md").read_text()
    assert "as the paper" in md and "Extra view: per-session means" in md and "Not the paper's" in md
    assert "| alphadetector | 3 | 9 | 5 | 4 | 1.33 | 80.0% |" in md
    assert "| alphadetector | 3 | 1.33 | 83.3% |" in md
    res = cli("meeting", "report", *three_sessions, "--out", out)
    assert "Validity (pooled)" in res.stdout and "Extra view (not the paper's)" in res.stdout


def test_best_set_comparison_has_a_bootstrap_p(cli, three_sessions):
    # conftest.BEST: alpha gets 3, 1, 0 votes and beta 0, 2, 3: sessions won alpha 1, beta 2.
    across = json.loads(cli("meeting", "report", *three_sessions, "--json").stdout)["across"]
    assert across["best_set"]["winners"] == [A, B, B] and across["best_set"]["ties"] == 0
    assert (across["detectors"][A]["sessions_won"], across["detectors"][B]["sessions_won"]) == (1, 2)
    assert (across["detectors"][A]["best_votes"], across["detectors"][B]["best_votes"]) == (4, 5)
    best = across["pairs"][0]["best_set"]
    assert best["per_session"] == [1, -1, -1]
    assert best["test"]["diff"] == pytest.approx(2 / 3 - 1 / 3)  # share b won - share a won
    assert best["test"] == paired_bootstrap([1, 0, 0], [0, 1, 1], resamples=10_000, seed=20260516).as_dict()
    assert 0 < best["test"]["p"] <= 1


def test_pooled_recall_sums_found_and_distinct_over_sessions(cli, three_sessions, meeting_server):
    # each validated question is its own disagreement: session 1 alpha 1 + beta 2 = 3 distinct,
    # session 2 alpha 1, session 3 alpha 2 + beta 1 = 3: alpha found 1 + 1 + 2 = 4 of 7.
    meeting_server.responder = MeetingResponder()
    res = cli("meeting", "report", *three_sessions, "--merge-judge", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    a = report["across"]["detectors"][A]
    assert (a["found"], a["distinct"], a["pooled_recall"]) == (4, 7, pytest.approx(4 / 7))
    assert report["across"]["detectors"][B]["pooled_recall"] == pytest.approx(3 / 7)
    assert report["across"]["per_session_means"][A]["pooled_recall"] == pytest.approx((1 / 3 + 1 + 2 / 3) / 3)


def test_session_winner_is_a_three_way_majority_and_a_tie_has_none():
    votes = lambda *v: {n: {"best_votes": x} for n, x in zip((A, B, G), v)}  # noqa: E731
    assert session_winner(votes(1, 3, 1)) == B
    assert session_winner(votes(2, 1, 0)) == A      # most votes, not more than half needed
    assert session_winner(votes(2, 2, 1)) is None   # tie for the most votes
    assert session_winner(votes(1, 1, 1)) is None
    assert session_winner(votes(0, 0, 0)) is None


def _probe_three(cli, tmp_path, transcript, name):
    specs = []
    for det, model in ((A, "model-one"), (B, "model-two"), (G, "model-one")):
        path = tmp_path / f"{det}.json"
        path.write_text(json.dumps({"prober": {"model": model}}))
        specs += ["--detector", f"{det}={path}"]
    out = tmp_path / name
    assert cli("meeting", "import", transcript, "--out", out).exit_code == 0
    res = cli("meeting", "probe", out, *specs, "--seed", "3")
    assert res.exit_code == 0, res.output
    return out


def _fill_survey(folder, discovery, best):
    """Everyone answers A everywhere (nothing diverges); participant i rates alpha's set
    ``discovery[i]`` (the others 3) and votes for ``best[i]``."""
    s = Session(folder)
    labels = {det: set_of(folder, det) for det in (A, B, G)}
    for pid in s.ids:
        save_answers(s, pid, {f"{label}-{n}": "A" for label, qs in s.question_sets().items()
                              for n in range(1, len(qs) + 1)})
    for i, pid in enumerate(s.ids):
        fields = {"best": labels[best[i]]}
        for det, label in labels.items():
            fields[f"discovery-{label}"] = str(discovery[i] if det == A else 3)
            fields[f"willingness-{label}"] = "3"
        save_labels(s, pid, fields)


def test_likert_per_participant_and_three_way_best_set(cli, tmp_path, meeting_server):
    big = _probe_three(cli, tmp_path, SAMPLES / "sample.vtt", "big")        # 3 participants
    small = _probe_three(cli, tmp_path, SAMPLES / "standup.txt", "small")   # 2 participants
    _fill_survey(big, [2, 3, 4], [A, A, G])     # alpha wins 2 of 3 votes
    _fill_survey(small, [5, 5], [B, G])         # 1-1: a tie, no winner
    res = cli("meeting", "report", big, small, "--json")
    assert res.exit_code == 0, res.output
    across = json.loads(res.stdout)["across"]
    alpha = across["detectors"][A]
    assert alpha["participants"] == 5
    assert alpha["discovery"] == pytest.approx((2 + 3 + 4 + 5 + 5) / 5)                   # 3.8, per participant
    assert across["per_session_means"][A]["discovery"] == pytest.approx((3 + 5) / 2)       # 4.0, per session
    assert across["best_set"]["winners"] == [A, None] and across["best_set"]["ties"] == 1
    assert {d: across["detectors"][d]["best_votes"] for d in (A, B, G)} == {A: 2, B: 1, G: 2}
    assert {d: across["detectors"][d]["sessions_won"] for d in (A, B, G)} == {A: 1, B: 0, G: 0}
    pairs = {(p["a"], p["b"]): p["best_set"]["per_session"] for p in across["pairs"]}
    assert pairs == {(A, B): [1, -1], (A, G): [1, -1], (B, G): [-1, 0]}
