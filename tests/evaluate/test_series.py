"""Evaluation of a series of meetings (``build --meetings 3``) at the HTTP boundary: a probe
after each meeting k with the transcripts of meetings 1..k, scored against the points live
after k, and recall by meeting and by a point's age (k - planted_in).

The series (:func:`ioa_synth.testing.scripted_series.series_record`): MA1 planted in 1,
surfacing in 3; MA2 planted in 1, never surfacing; MA3 planted in 2, never surfacing. Live
after 1: MA1, MA2; after 2: MA1, MA2, MA3; after 3: MA2, MA3 (MA1 surfaced).

The questions of each probe, with M1 / M2's options and the filter's verdict:

| after | q | M1 | M2 | filter | category |
| --- | --- | --- | --- | --- | --- |
| 1 | which set | A | B | MA1 | A (MA1) |
| 1 | who reruns | A | A | (not shown) | C not diverging |
| 2 | which set again | A | B | MA1 | A (MA1) |
| 2 | ship bar | A | B | MA3 | A (MA3) |
| 2 | baseline how | A | B | not implicit | C |
| 3 | baseline source | A | B | MA2 | A (MA2) |
| 3 | which set now | A | B | not implicit (it surfaced) | C |

Per probe: after 1 P = 1/2, R = 1/2 (MA1 of MA1, MA2); after 2 P = 2/3, R = 2/3 (MA1, MA3 of
three); after 3 P = 1/2, R = 1/2 (MA2 of MA2, MA3).
Recall by meeting (hits / live): 1 -> 1/2 = .5; 2 -> 2/3 = .6667; 3 -> 1/2 = .5.
By age: age 0 = MA1 and MA2 after 1, MA3 after 2: live 3, hit MA1@1 and MA3@2 -> 2/3 = .6667;
age 1 = MA1, MA2 after 2, MA3 after 3: live 3, hit MA1@2 -> 1/3 = .3333; age 2 = MA2 after 3:
live 1, hit 1 -> 1.0.
"""

from __future__ import annotations

import json
import re

import pytest

from .eval_helpers import shown_questions, user_text, write_case
from ioa_synth.testing.scripted_series import series_record
from ioa_synth.testing.scripted_server import chat_reply

CASE = "ml_research/planning_000"

#: meeting -> [(stem, M1's option, M2's option, filter: MA id, "not implicit" or None)]
PROBES = {1: [("which set", "A", "B", "MA1"), ("who reruns", "A", "A", None)],
          2: [("which set again", "A", "B", "MA1"), ("ship bar", "A", "B", "MA3"),
              ("baseline how", "A", "B", "not implicit")],
          3: [("baseline source", "A", "B", "MA2"), ("which set now", "A", "B", "not implicit")]}
BY_STEM = {stem: (m1, m2, verdict) for qs in PROBES.values() for stem, m1, m2, verdict in qs}


class SeriesStudy:
    def __init__(self) -> None:
        self.transcripts: dict[int, str] = {}

    def prober(self, body, headers):
        text = user_text(body)
        k = 3 if "frozen in the team bucket" in text else 2 if "container by Friday" in text else 1
        self.transcripts[k] = text
        opts = lambda s: {"A": f"{s} one", "B": f"{s} two"}  # noqa: E731
        return chat_reply(json.dumps({"questions": [{"question": s, "options": opts(s)} for s, *_ in PROBES[k]]}))

    def simulator(self, body, headers):
        text = user_text(body)
        me = re.search(r"You are (M[12])\.", text).group(1)
        answers = []
        for number, stem, options in shown_questions(text):
            m1, m2, _ = BY_STEM[stem]
            want = f"{stem} {'one' if (m1 if me == 'M1' else m2) == 'A' else 'two'}"
            answers.append({"question": number, "option": next(k for k, v in options.items() if v == want)})
        return chat_reply(json.dumps({"answers": answers}))

    def filter(self, body, headers):
        out = []
        for number, stem, _ in shown_questions(user_text(body)):
            verdict = BY_STEM[stem][2]
            out.append({"question": number, "is_meaningful": True, "is_implicit": verdict != "not implicit",
                        "redundant_with": None, "hits_ground_truth": verdict if verdict != "not implicit" else None})
        return chat_reply(json.dumps({"judgements": out}))


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, f"{CASE}.json", series_record())
    return root


def test_a_series_is_probed_after_each_meeting_against_the_points_live_then(cli, trio, data, tmp_path):
    study = SeriesStudy()
    trio(study=study)
    out = tmp_path / "res"
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    records = {k: json.loads((out / "records" / f"{CASE}@meeting{k}.json").read_text(encoding="utf-8"))
               for k in (1, 2, 3)}
    # the transcript up to meeting k: meeting 2's lines only from the probe after 2 on
    assert "container by Friday" not in study.transcripts[1] and "container by Friday" in study.transcripts[2]
    assert "frozen in the team bucket" not in study.transcripts[2]
    for k, live, ages in ((1, ["MA1", "MA2"], [0, 0]), (2, ["MA1", "MA2", "MA3"], [1, 1, 0]),
                          (3, ["MA2", "MA3"], [2, 1])):
        r = records[k]
        assert r["meeting"] == k
        assert [p["id"] for p in r["misalignment_points"]] == live
        assert [p["age"] for p in r["misalignment_points"]] == ages
    metrics = {k: (r["metrics"]["precision"], r["metrics"]["recall"], r["metrics"]["mas_hit"])
               for k, r in records.items()}
    assert metrics == {1: (0.5, 0.5, ["MA1"]), 2: (0.6667, 0.6667, ["MA1", "MA3"]), 3: (0.5, 0.5, ["MA2"])}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["cases"]["scored"] == 3
    assert {k: (v["live"], v["hit"], v["recall"]) for k, v in summary["by_meeting"].items()} == \
        {"1": (2, 1, 0.5), "2": (3, 2, 0.6667), "3": (2, 1, 0.5)}
    assert {a: (v["live"], v["hit"], v["recall"]) for a, v in summary["by_age"].items()} == \
        {"0": (3, 2, 0.6667), "1": (3, 1, 0.3333), "2": (1, 1, 1.0)}
    # the closing table and the report show the same numbers a researcher reads
    assert "after meeting 2" in res.stdout and "66.7% (2/3)" in res.stdout and "MA age 2" in res.stdout
    rep = cli("report", out, "--by", "domain")
    assert rep.exit_code == 0, rep.output
    report = json.loads((out / "reports" / "report_domain.json").read_text(encoding="utf-8"))
    assert report["by_meeting"] == summary["by_meeting"] and report["by_age"] == summary["by_age"]
    md = (out / "reports" / "report_domain.md").read_text(encoding="utf-8")
    assert "A series of meetings: after each meeting" in md and "recall by MA age" in md


def test_a_single_meeting_summary_has_no_series_keys(cli, trio, tmp_path):
    from .eval_helpers import toolkit_case
    from ioa_synth.evaluate.series import series_summary

    assert series_summary([]) == {}
    root = tmp_path / "data" / "test"
    write_case(root, f"{CASE}.json", toolkit_case())
    from ioa_synth.evaluate.inputs import load_cases

    (case,) = load_cases(root)
    assert case.meeting is None and case.case_id == CASE


def test_a_series_case_with_a_turn_without_its_meeting_is_refused(cli, trio, data, tmp_path):
    servers = trio(study=SeriesStudy())
    path = data / f"{CASE}.json"
    case = json.loads(path.read_text(encoding="utf-8"))
    del case["dialogue"]["turns"][4]["meeting"]
    path.write_text(json.dumps(case), encoding="utf-8")
    res = cli("evaluate", "--data", data, "--out", tmp_path / "res")
    assert res.exit_code == 2 and "dialogue.turns.4.meeting" in res.stderr, res.stderr
    assert servers.counts() == (0, 0, 0)
