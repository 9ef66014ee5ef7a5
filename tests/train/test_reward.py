"""The training reward: the F1 of ``evaluate --questions-from`` for the same question set,
stored calls never paid twice, unparseable replies 0.0, failed calls ``None``, and the TRL
and verl adapters (simulator and filter played by scripted servers)."""

from __future__ import annotations

import json
import os

import pytest

from ioa_synth.evaluate.scoring import prf
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.testing.scripted_server import Reply
from ioa_synth.train.reward import IoAF1Reward, RewardScorer, RewardSetupError, UnknownCaseError

CASES = ["business/troubleshooting_010", "law/planning_003", "medicine/design_review_001", "ml_research/planning_000"]


def completion_of(record: dict) -> str:
    """A prober reply holding the record's question set (what the policy would write)."""
    return json.dumps({"questions": [{"question": q["question"], "options": q["options"]} for q in record["questions"]]})


def test_f1_equals_evaluate_questions_from(cli, teacher, tmp_path):
    again = tmp_path / "again"
    assert cli("evaluate", "--data", teacher.data, "--out", again, "--questions-from", teacher.results).exit_code == 0
    records = {c: json.loads((again / "records" / f"{c}.json").read_text()) for c in CASES}
    with RewardScorer(teacher.data, out=tmp_path / "reward", workers=4) as reward:
        results = reward.score_many(CASES, [completion_of(teacher.record(c)) for c in CASES])
    for case_id, r in zip(CASES, results):
        m = records[case_id]["metrics"]
        assert r.f1 == pytest.approx(m["f1"], abs=5e-5) and r.error is None
        assert (r.precision, r.recall, r.f1) == prf(m["a"], m["c"], len(m["mas_hit"]), m["num_mas"])
        assert (r.k, r.a, r.b, r.c) == (m["k"], m["a"], m["b"], m["c"])
    assert results[0].f1 == 2 * 0.8 * 1.0 / 1.8  # App. E.1 case 1, unrounded
    reward_requests = [r["body"] for s in (teacher.trio.simulator, teacher.trio.validity_filter) for r in s.requests]
    assert {b["temperature"] for b in reward_requests} == {0.2}  # simulator and filter at T 0.2 (App. D.1)
    assert [r.f1 for r in results[1:]] == [0.5, 0.0, 0.0]


def test_same_completion_is_never_paid_twice(teacher, tmp_path):
    t = teacher.trio
    text = completion_of(teacher.record(CASES[0]))
    before = t.counts()
    with RewardScorer(teacher.data, out=tmp_path / "reward") as reward:
        first = reward.score_many([CASES[0]] * 3, [text, text, "  " + text.replace(", ", ",\n")])
        assert [r.paid for r in first].count(3) == 1 and sum(r.paid for r in first) == 3
        assert t.counts()[1:] == (before[1] + 2, before[2] + 1)
    with RewardScorer(teacher.data, out=tmp_path / "reward") as reward:  # a new process resumes from the catalog
        again = reward.score(CASES[0], [{"role": "assistant", "content": f"<think>x</think>```json\n{text}\n```"}])
    assert again.f1 == first[0].f1 and again.paid == 0 and t.counts()[1:] == (before[1] + 2, before[2] + 1)
    from ioa_helpers import q

    assert q(tmp_path / "reward", "SELECT count(*), count(DISTINCT completion_key) FROM train_rewards") == [(1, 1)]
    calls = q(tmp_path / "reward", "SELECT DISTINCT case_id FROM llm_calls")
    assert len(calls) == 1 and calls[0][0].startswith(CASES[0] + "#")


def test_unparseable_scores_zero_without_calls(teacher, tmp_path):
    before = teacher.trio.counts()
    with RewardScorer(teacher.data, out=tmp_path / "reward") as reward:
        results = reward.score_many(CASES[:3], ["Here are my questions: none", '{"questions": [{"question": "q"}]}',
                                                '{"questions": [{"question": "<stem>", "options": {"A": "x", "B": "y"}}]}'])
    assert [r.f1 for r in results] == [0.0, 0.0, 0.0] and all(r.error.startswith("unparseable") for r in results)
    assert teacher.trio.counts() == before


def test_unknown_case_is_named_before_any_call(teacher, tmp_path):
    before = teacher.trio.counts()
    text = completion_of(teacher.record(CASES[0]))
    with RewardScorer(teacher.data, out=tmp_path / "reward") as reward:
        with pytest.raises(UnknownCaseError, match="law/planning_999"):
            reward.score_many([CASES[0], "law/planning_999"], [text, text])
    assert teacher.trio.counts() == before


def test_failed_call_gives_none(teacher, tmp_path):
    teacher.trio.simulator.responder = lambda body, headers: Reply(status=500, body={"error": {"message": "down"}})
    cfg = ToolkitConfig.model_validate({"simulator": {"max_retries": 0, "content_retries": 0}})
    with RewardScorer(teacher.data, config=cfg, out=tmp_path / "reward") as reward:
        r = reward.score(CASES[0], completion_of(teacher.record(CASES[0])))
    assert r.f1 is None and "500" in r.error


def test_trl_adapter_logs_and_names(teacher, tmp_path):
    logged, metrics = {}, {}
    reward = IoAF1Reward(data=teacher.data, out=tmp_path / "reward", workers=8)
    try:
        assert reward.__name__ == "ioa_f1"
        completions = [[{"role": "assistant", "content": completion_of(teacher.record(c))}] for c in CASES] + [
            [{"role": "assistant", "content": "no json"}]]
        got = reward(prompts=[[{"role": "user", "content": "p"}]] * 5, completions=completions,
                     case_id=CASES + [CASES[0]], completion_ids=[[1]] * 5, trainer_state=None,
                     log_extra=logged.__setitem__, log_metric=metrics.__setitem__)
    finally:
        reward.close()
    assert got == pytest.approx([0.8 * 2 / 1.8, 0.5, 0.0, 0.0, 0.0])
    assert logged["ioa_precision"][:2] == [0.8, 0.5] and logged["ioa_k"] == [5, 5, 3, 12, None]
    assert logged["ioa_a"][0] == 4 and logged["ioa_c"][2] == 3
    assert metrics == {"ioa/unparseable": 0.2, "ioa/failed_calls": 0.0}


def test_verl_compute_score(teacher, tmp_path, monkeypatch):
    from ioa_synth.train import verl_reward

    monkeypatch.setattr(verl_reward, "_scorer", None)
    monkeypatch.setenv("IOA_REWARD_DATA", str(teacher.data))
    monkeypatch.setenv("IOA_REWARD_OUT", str(tmp_path / "reward"))
    try:
        one = verl_reward.compute_score("ioa-suite", completion_of(teacher.record(CASES[1])), CASES[1],
                                        {"case_id": CASES[1], "split": "train", "index": 1})
        many = verl_reward.compute_score(data_sources=["ioa-suite"] * 2, ground_truths=CASES[:2],
                                         solution_strs=[completion_of(teacher.record(c)) for c in CASES[:2]],
                                         extra_infos=[None, None])
    finally:
        verl_reward.scorer().close()
    assert one == {"score": 0.5, "precision": 0.5, "recall": 0.5, "k": 5.0, "failed": 0.0}
    assert many[0]["score"] == pytest.approx(0.8889, abs=1e-4) and many[1] == one


def test_refuses_an_evaluate_folder(teacher):
    with pytest.raises(RewardSetupError, match="results folder"):
        RewardScorer(teacher.data, out=teacher.results)


def test_score_command(cli, teacher, tmp_path):
    from ioa_helpers import one_line_error

    reply = tmp_path / "reply.json"
    reply.write_text(completion_of(teacher.record(CASES[1])))
    args = ("train", "score", "--data", teacher.data, "--completion", reply, "--out", tmp_path / "reward")
    res = cli(*args, "--case-id", CASES[1])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) | {"paid": 0} == {"case_id": CASES[1], "f1": 0.5, "precision": 0.5, "recall": 0.5,
                                                     "k": 5, "a": 2, "b": 1, "c": 2, "error": None, "paid": 0}
    res = cli(*args, "--case-id", "law/planning_999")
    assert res.exit_code == 2
    one_line_error(res, "law/planning_999", "is not a case of")
    res = cli("train", "score", "--data", teacher.data, "--completion", reply, "--out", teacher.results,
              "--case-id", CASES[1])
    assert res.exit_code == 2
    one_line_error(res, "results folder")


def test_score_command_checks_every_argument_before_opening_anything(cli, teacher, tmp_path):
    from ioa_helpers import one_line_error

    reply = tmp_path / "reply.json"
    reply.write_text(completion_of(teacher.record(CASES[1])))
    out = tmp_path / "reward"
    before = teacher.trio.counts()
    servers = (teacher.trio.prober, teacher.trio.simulator, teacher.trio.validity_filter)
    requests = sum(len(s.requests) for s in servers)  # GET /models included: no endpoint is opened
    base = ("train", "score", "--data", teacher.data, "--out", out)
    for args, needle in (((*base, "--case-id", "law/planning_999", "--completion", reply), "is not a case of"),
                         ((*base, "--case-id", "law/planning_999", "--completion", tmp_path / "missing"),
                          "is not a case of"),
                         ((*base, "--case-id", CASES[1], "--completion", tmp_path / "missing"), "cannot read"),
                         ((*base, "--case-id", CASES[1], "--completion", reply, "--local-model", "gpt-9"),
                          "--local-model must be one of"),
                         (("train", "score", "--data", tmp_path / "nowhere", "--out", out, "--case-id", CASES[1],
                           "--completion", reply), "is not a folder")):
        res = cli(*args)
        assert res.exit_code == 2, res.output
        one_line_error(res, needle)
    assert not out.exists()  # no catalog, no journal, no log
    assert teacher.trio.counts() == before and sum(len(s.requests) for s in servers) == requests


def test_rows_resolve_by_their_split(teacher, tmp_path, monkeypatch):
    """A val case at a train case's path is its own dialogue: a row is found by split and case
    id; a split the reward has no folder of, or an ambiguous row without split, is refused."""
    from evaluate.eval_helpers import released_case, write_case

    from ioa_synth.train import verl_reward
    from ioa_synth.train.cases import CaseIndex, SplitMismatchError

    root = teacher.data.parent  # DIR, holding train/
    write_case(root / "val", "law/planning_003.json", released_case(tag=" STUDY1"))  # train's is STUDY2's
    text = completion_of(teacher.record(CASES[0]))  # STUDY1's question set: F1 8/9 on a STUDY1 dialogue
    index = CaseIndex(root)  # the build directory stands for its split folders
    assert index.splits == ["train", "val"] and index.folders == [root / "train", root / "val"]
    assert index.find("law/planning_003", "val").sha256 != index.find("law/planning_003", "train").sha256
    assert index.find("val/law/planning_003").sha256 == index.find("law/planning_003", "val").sha256
    with pytest.raises(SplitMismatchError, match="is a case of 2 splits"):
        index.find("law/planning_003")
    with pytest.raises(SplitMismatchError, match="lies in a 'train' folder but its row says split 'val'"):
        index.find("train/law/planning_003", "val")
    assert index.find(CASES[0]).case_id == CASES[0]  # in one split only: no split needed
    with pytest.raises(SplitMismatchError, match="'test' case"):
        index.find(CASES[0], "test")

    before = teacher.trio.counts()
    with RewardScorer(teacher.data, out=tmp_path / "r1") as reward:  # train only: a val row is refused
        with pytest.raises(SplitMismatchError, match=r"give the reward the val folder too"):
            reward.score_many([CASES[0], "law/planning_003"], [text, text], ["train", "val"])
    assert teacher.trio.counts() == before  # before any call

    monkeypatch.setattr(verl_reward, "_scorer", None)
    monkeypatch.setenv("IOA_REWARD_DATA", f"{root / 'train'}{os.pathsep}{root / 'val'}")
    monkeypatch.setenv("IOA_REWARD_OUT", str(tmp_path / "r2"))
    try:
        got = verl_reward.compute_score("ioa-suite", text, "law/planning_003",
                                        {"case_id": "law/planning_003", "split": "val", "index": 0})
    finally:
        verl_reward.scorer().close()
    assert got["score"] == pytest.approx(2 * 0.8 / 1.8)
    names = {json.dumps(r["body"]).count("STUDY1") > 0 for r in teacher.trio.simulator.requests[before[1]:]}
    assert names == {True}  # the val dialogue's participants were simulated

def test_a_belief_results_folder_is_named_as_one(teacher, tmp_path):
    """The reward said any results folder was an 'ioa-synth evaluate' one; it names the kind
    the folder registered (here a study's folder as the release wrote it)."""
    bel = tmp_path / "bel"
    bel.mkdir()
    (bel / "run.json").write_text(json.dumps({"command": "belief run", "settings": {}, "fingerprint_parts": {}}))
    with pytest.raises(RewardSetupError) as err:
        RewardScorer(teacher.data, out=bel)
    assert str(err.value) == f"{bel} is an 'ioa-synth belief run' results folder; give the reward a catalog folder " \
                             "of its own"
    assert sorted(p.name for p in bel.iterdir()) == ["run.json"]
    with pytest.raises(RewardSetupError, match="is an 'ioa-synth evaluate' results folder"):
        RewardScorer(teacher.data, out=teacher.results)


def test_a_reward_over_a_case_in_another_language_fingerprints_the_language_note(teacher, tmp_path):
    """The simulator and validity filter get evaluate's language note about a German case, so the
    note's template is part of the reward's setup there (a changed note is a changed setup), and
    not for English data (its setup described as before the note existed)."""
    from pathlib import Path

    from ioa_synth.core.templates import all_template_hashes
    from ioa_synth.probing.language import CAPABILITY

    note = all_template_hashes(CAPABILITY)
    case = json.loads((Path(__file__).resolve().parents[1] / "fixtures/languages/de_case.json").read_text("utf-8"))
    german = tmp_path / "de" / "train"
    (german / "ml_research").mkdir(parents=True)
    (german / "ml_research/planning_000.json").write_text(json.dumps(
        {"profiles": case["stage1"], "dialogue": {"num_turns": 6, "turns": case["stage2"]["turns"]}, "language": "de"}),
        encoding="utf-8")
    with RewardScorer(german, out=tmp_path / "reward-de") as reward:
        for component in ("simulator", "validity_filter"):
            assert note.items() <= reward.run.description["components"][component]["templates"].items()
    with RewardScorer(teacher.data, out=tmp_path / "reward-en") as reward:
        assert not set(note) & set(reward.run.description["components"]["simulator"]["templates"])
