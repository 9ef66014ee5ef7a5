"""Evaluation of a three-person case at the HTTP boundary: one simulator call per
participant, the validity filter shown every participant's answer, and the found rule: a
question counts for a point only when it separates the point's named sides (answers agree
within each side and differ between them; neutral participants do not count).

The case (:func:`ioa_synth.testing.scripted_multi.valid_stage1_multi`): MA1 sides a = M1, M3
and b = M2; MA2 a = M1, b = M2, M3 neutral; MA3 a = M3, b = M1, M2. The questions, with
the options M1 / M2 / M3 choose and the filter's verdict:

| q | M1 | M2 | M3 | filter | separates | category |
| --- | --- | --- | --- | --- | --- | --- |
| 1 | A | B | A | MA1 | MA1, MA2 | A (MA1) |
| 2 | A | B | B | MA1 | MA2 (MA1's side a splits: M1 A, M3 B) | B: the filter's MA1 is not separated |
| 3 | B | A | C | MA2 | MA2 (M3 is neutral) | A (MA2) |
| 4 | A | A | B | MA3, not meaningful | MA3 | C (not meaningful) |
| 5 | C | C | C | (not shown) | none | C (not diverging) |
| 6 | A | B | C | MA3 | MA2 (MA3's side b splits) | B |

|A| = 2, |C| = 2 -> P = 2/4 = .5; MAs hit {MA1, MA2} of 3 -> R = 2/3 = .6667;
F1 = 2 * .5 * .6667 / (.5 + .6667) = .6667 / 1.1667 = .5714. Read by the filter alone, as a
dyad would be, q2 and q6 would be A too: P 4/6, R 3/3; the found rule is what changes it.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass

import pytest

from .eval_helpers import shown_questions, user_text, write_case
from ioa_synth.testing.scripted_multi import valid_stage1_multi, valid_stage2_multi
from ioa_synth.testing.scripted_server import chat_reply

CASE = "ml_research/planning_000"


@dataclass
class MQ:
    stem: str
    picks: dict[str, str]
    hit: str | None = None
    meaningful: bool = True

    def options(self) -> dict[str, str]:
        return {"A": f"{self.stem} option one", "B": f"{self.stem} option two", "C": f"{self.stem} option three"}


QUESTIONS = [MQ("q1 which questions", {"M1": "A", "M2": "B", "M3": "A"}, "MA1"),
             MQ("q2 which questions again", {"M1": "A", "M2": "B", "M3": "B"}, "MA1"),
             MQ("q3 how is the baseline made", {"M1": "B", "M2": "A", "M3": "C"}, "MA2"),
             MQ("q4 what is the bar", {"M1": "A", "M2": "A", "M3": "B"}, "MA3", meaningful=False),
             MQ("q5 when is the release", {"M1": "C", "M2": "C", "M3": "C"}),
             MQ("q6 what is the bar again", {"M1": "A", "M2": "B", "M3": "C"}, "MA3")]


#: --mode direct items and the point the filter names (no answers: nothing to separate)
ITEMS = [("M2 reads the held-out set as a fresh sample", "MA1"), ("The ship bar differs", "MA3"),
         ("They disagree about lunch", None)]


class MultiStudy:
    """The three components for :data:`QUESTIONS` (prober, simulator per participant, filter)."""

    def __init__(self) -> None:
        self.by_stem = {q.stem: q for q in QUESTIONS}
        self.simulated: list[str] = []
        self.flips: dict[str, int] = {}  # participant -> rollout whose answers are all another option
        self._lock = threading.Lock()

    def prober(self, body, headers):
        if '"items"' in user_text(body):  # --mode direct
            return chat_reply(json.dumps({"items": [{"description": d} for d, _ in ITEMS]}))
        return chat_reply(json.dumps({"questions": [{"question": q.stem, "options": q.options()} for q in QUESTIONS]}))

    def simulator(self, body, headers):
        text = user_text(body)
        me = re.search(r"You are (M\d)\.", text).group(1)
        with self._lock:
            self.simulated.append(me)
            rollout = sum(1 for who in self.simulated if who == me)
        answers = []
        for number, stem, options in shown_questions(text):
            pick = self.by_stem[stem].picks[me]
            if self.flips.get(me) == rollout:
                pick = "C" if pick != "C" else "B"
            want = self.by_stem[stem].options()[pick]
            answers.append({"question": number, "option": next(k for k, v in options.items() if v == want)})
        return chat_reply(json.dumps({"answers": answers}))

    def filter(self, body, headers):
        items = dict(ITEMS)
        shown = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^Item (\d+): (.+)$", user_text(body), re.M)]
        if shown:  # --mode direct: the filter's attribution alone
            return chat_reply(json.dumps({"judgements": [
                {"question": n, "is_meaningful": True, "is_implicit": True, "redundant_with": None,
                 "hits_ground_truth": items[d]} for n, d in shown]}))
        out = [{"question": n, "is_meaningful": self.by_stem[stem].meaningful, "is_implicit": True,
                "redundant_with": None, "hits_ground_truth": self.by_stem[stem].hit}
               for n, stem, _ in shown_questions(user_text(body))]
        return chat_reply(json.dumps({"judgements": out}))


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data" / "test"
    turns = valid_stage2_multi()["turns"]
    write_case(root, f"{CASE}.json", {
        "case_id": f"test/{CASE}", "profiles": valid_stage1_multi(),
        "dialogue": {"num_turns": len(turns), "turns": turns},
        "seed": {"seed_id": "arxiv:0000.00000", "domain": "ml_research", "task_type": "planning", "title": "t",
                 "abstract": "a"}})
    return root


def test_a_point_is_found_only_by_a_question_that_separates_its_sides(cli, trio, data, tmp_path):
    study = MultiStudy()
    servers = trio(study=study)
    out = tmp_path / "res"
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    record = json.loads((out / "records" / f"{CASE}.json").read_text(encoding="utf-8"))
    assert record["status"] == "scored"
    cats = [(q["category"], q["reason"], q["ma_id"]) for q in record["questions"]]
    assert cats == [("A", None, "MA1"), ("B", None, None), ("A", None, "MA2"), ("C", "not_meaningful", None),
                    ("C", "not_diverging", None), ("B", None, None)]
    assert [q["separates"] for q in record["questions"]] == [["MA1", "MA2"], ["MA2"], ["MA2"], ["MA3"], [], ["MA2"]]
    assert record["questions"][1]["filter"]["hits_ground_truth"] == "MA1"  # the filter's word is kept
    m = record["metrics"]
    assert (m["precision"], m["recall"], m["f1"]) == (0.5, 0.6667, 0.5714)
    assert (m["a"], m["b"], m["c"], m["mas_hit"], m["num_mas"]) == (2, 2, 2, ["MA1", "MA2"], 3)
    assert record["misalignment_points"][1]["between"] == {"a": ["M1"], "b": ["M2"]}
    assert record["misalignment_points"][1]["neutral"] == ["M3"]
    # one simulator call per participant, each with the two others' public profiles
    assert sorted(study.simulated) == ["M1", "M2", "M3"]
    sim = user_text(servers.simulator.requests[0]["body"])
    assert "The other participants, as you know them:" in sim
    assert sum(f"{mid}:" in sim for mid in ("M1", "M2", "M3")) == 3
    # the filter sees the five divergent questions with every participant's answer, and the sides
    (flt,) = [user_text(r["body"]) for r in servers.validity_filter.requests]
    assert [n for n, _, _ in shown_questions(flt)] == [1, 2, 3, 4, 6]
    assert "M1 chose A; M2 chose B; M3 chose A." in flt
    assert "M1 understand: retrain the 2023" in flt and "neutral: M3" in flt
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["precision"], summary["recall"], summary["f1"]) == (0.5, 0.6667, 0.5714)


def test_a_multi_party_case_without_sides_is_refused_before_any_call(cli, trio, data, tmp_path):
    servers = trio(study=MultiStudy())
    path = data / f"{CASE}.json"
    case = json.loads(path.read_text(encoding="utf-8"))
    del case["profiles"]["misalignment_points"][0]["between"]
    path.write_text(json.dumps(case), encoding="utf-8")
    res = cli("evaluate", "--data", data, "--out", tmp_path / "res")
    assert res.exit_code == 2 and "misalignment_points.0.between" in res.stderr, res.stderr
    assert servers.counts() == (0, 0, 0)


def test_estimate_evaluate_counts_one_simulator_call_per_participant(cli, data, tmp_path):
    res = cli("estimate", "evaluate", "--data", data, "--out", tmp_path / "res", "--rollouts", "2",
              "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert est["components"]["simulator"]["calls"] == 3 * 2  # three participants, two rollouts
    assert not (tmp_path / "res").exists()


def test_each_simulator_sees_only_its_own_thoughts_and_the_others_public_profiles(cli, trio, data, tmp_path):
    servers = trio(study=MultiStudy())
    assert cli("evaluate", "--data", data, "--out", tmp_path / "res", "--workers", "1").exit_code == 0
    turns = valid_stage2_multi()["turns"]
    private = {m["id"]: m for m in valid_stage1_multi()["members"]}
    for request in servers.simulator.requests:
        text = user_text(request["body"])
        me = re.search(r"You are (M\d)\.", text).group(1)
        for t in turns:  # own unspoken thoughts only
            assert (t["inner_thought"] in text) == (t["speaker_id"] == me), (me, t["turn_idx"])
        for mid, m in private.items():  # own private fields; another's public profile only
            assert (m["private_state"] in text) == (mid == me), (me, mid)
            assert all((h in text) == (mid == me) for h in m["hidden_assumptions"]), (me, mid)
            assert m["background"] in text


def test_separation_reads_only_the_named_sides():
    from ioa_synth.evaluate.multiparty import found, separated, separates

    sides = {"a": ["M1", "M3"], "b": ["M2"], "neutral": ["M4"]}
    assert separates({"M1": "A", "M2": "B", "M3": "A", "M4": "B"}, sides)  # neutral M4 does not count
    assert separates({"M1": "A", "M2": "B", "M3": "A", "M4": "C"}, sides)
    assert not separates({"M1": "A", "M2": "B", "M3": "B", "M4": "A"}, sides)  # side a splits
    assert not separates({"M1": "A", "M2": "A", "M3": "A", "M4": "B"}, sides)  # the sides agree
    assert not separates({"M1": "A", "M3": "A"}, sides)  # no answer from side b
    assert separated({"M1": "A", "M2": "B", "M3": "A"}, {"X": sides, "Y": {"a": ["M2"], "b": ["M3"]}}) == ["X", "Y"]
    assert found("A", None, "MA1", ["MA2"]) == ("B", None, None)
    assert found("A", None, "MA1", ["MA1"]) == ("A", None, "MA1")
    assert found("C", "not_meaningful", None, []) == ("C", "not_meaningful", None)


def test_a_two_person_record_has_no_multi_party_field():
    from ioa_synth.evaluate.case import score_questions
    from ioa_synth.evaluate.replies import Judgement
    from ioa_synth.probing.replies import Question

    qs = [Question(question="q", options={"A": "x", "B": "y"})]
    answers = [{p: {"option": o, "rollouts": [o], "consistency": 1.0} for p, o in (("M1", "A"), ("M2", "B"))}]
    j = Judgement(question=1, is_meaningful=True, is_implicit=True, redundant_with=None, hits_ground_truth="MA1")
    entries, metrics = score_questions(qs, answers, {1: j}, ["MA1", "MA2"])
    assert "separates" not in entries[0] and list(entries[0]["answers"]) == ["M1", "M2"]
    assert (entries[0]["category"], entries[0]["ma_id"], metrics["recall"]) == ("A", "MA1", 0.5)


def test_a_rerun_asks_nothing_again(cli, trio, data, tmp_path):
    servers = trio(study=MultiStudy())
    out = tmp_path / "res"
    assert cli("evaluate", "--data", data, "--out", out, "--workers", "1").exit_code == 0
    before = servers.counts()
    assert before == (1, 3, 1)  # one prober call, one simulator call per participant, one filter call
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert servers.counts() == before


def test_direct_mode_on_a_three_person_case_takes_the_filters_attribution(cli, trio, data, tmp_path):
    servers = trio(study=MultiStudy())
    out = tmp_path / "res"
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1", "--mode", "direct")
    assert res.exit_code == 0, res.output
    record = json.loads((out / "records" / f"{CASE}.json").read_text(encoding="utf-8"))
    assert [(q["category"], q["ma_id"]) for q in record["questions"]] == [("A", "MA1"), ("A", "MA3"), ("B", None)]
    assert (record["metrics"]["precision"], record["metrics"]["recall"]) == (1.0, 0.6667)
    assert all("separates" not in q for q in record["questions"])
    (flt,) = [user_text(r["body"]) for r in servers.validity_filter.requests]
    assert "A detector suspects" in flt and "neutral: M3" in flt and "M1, M3 understand:" in flt
    assert not servers.simulator.requests


def test_simulator_stability_reads_every_participant(cli, trio, data, tmp_path):
    # k = 3 rollouts; M3's second rollout picks another option on all six questions. P1, P2:
    # 6 answers x 3 picks, all modal = 18/18 = 100.0%; P3: rollouts 1 and 3 modal = 12/18 = 66.7%
    study = MultiStudy()
    study.flips = {"M3": 2}
    trio(study=study)
    out = tmp_path / "k3"
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1", "--rollouts", "3")
    assert res.exit_code == 0, res.output
    res = cli("table", "ioa-13", out, "--format", "csv")
    assert res.exit_code == 0, res.output
    import io

    import polars as pl

    first, paper = pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()
    assert first == {"run": "k3", "dialogues": "1", "k": "3", "P1 (%)": "100.0 (18/18)", "P2 (%)": "100.0 (18/18)",
                     "P3 (%)": "66.7 (12/18)"}
    assert (paper["P1 (%)"], paper["P2 (%)"], paper["P3 (%)"]) == ("97.7", "96.8", "–")  # App. C.1: two people
    report = json.loads(cli("report", out, "--json").stdout)["stability"]["participants"]
    assert {who: (v["picks"], v["agreeing"]) for who, v in report.items()} == {
        "M1": (18, 18), "M2": (18, 18), "M3": (18, 12)}
    shown = cli("report", out).stdout
    assert "P3 (M3)" in shown
