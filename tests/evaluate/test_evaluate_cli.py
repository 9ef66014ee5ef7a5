"""Black-box ``ioa-synth evaluate`` against three scripted servers (one per component,
each with its own key) that play the paper's case studies (App. E.1)."""

from __future__ import annotations

import json
import shutil

import pytest

from .eval_helpers import KEYS, STUDY_1, STUDY_2, STUDY_3, Study, released_case, shown_questions, toolkit_case, user_text, write_case
from ioa_helpers import one_line_error, q


@pytest.fixture
def split(tmp_path):
    """A split folder: two released-format cases (studies 1 and 2) and one toolkit record (study 3)."""
    root = tmp_path / "data" / "test"
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    write_case(root, "ml_research/planning_000.json", toolkit_case())
    return root


def studies() -> Study:
    return Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})


def evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "2", *extra)


def test_case_studies_end_to_end(cli, trio, split, tmp_path):
    t = trio(studies())
    out = tmp_path / "results"
    res = evaluate(cli, split, out)
    assert res.exit_code == 0, res.output
    # one prober call per case, one simulator call per participant, one filter call per case with divergence
    assert t.counts() == (3, 6, 3)
    for server, comp in ((t.prober, "prober"), (t.simulator, "simulator"), (t.validity_filter, "validity_filter")):
        assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEYS[comp]}"}
        assert {r["body"]["temperature"] for r in server.requests} == {{"prober": 0.7}.get(comp, 0.2)}

    r1 = json.loads((out / "records/business/troubleshooting_010.json").read_text())
    assert r1["status"] == "scored" and r1["domain"] == "business" and r1["task_type"] == "troubleshooting"
    assert r1["source_file"] == "business/troubleshooting_010.json"
    assert [q["category"] for q in r1["questions"]] == ["A", "A", "A", "A", "C"]
    assert r1["metrics"] == {"precision": 0.8, "recall": 1.0, "f1": 0.8889, "k": 5, "a": 4, "b": 0, "c": 1,
                             "mas_hit": ["MA1", "MA2", "MA3", "MA4"], "num_mas": 4}
    assert r1["c_breakdown"] == {"not_diverging": 1, "not_meaningful": 0, "not_implicit": 0, "redundant": 0}
    assert [m["type"] for m in r1["misalignment_points"]] == [None] * 4  # released data: no type
    q5 = r1["questions"][4]
    assert q5["divergent"] is False and q5["filter"] is None and q5["reason"] == "not_diverging"
    assert q5["answers"]["M1"] == {"option": "A", "rollouts": ["A"], "consistency": 1.0}
    assert r1["questions"][0]["ma_id"] == "MA1" and len(r1["questions"][0]["key"]) == 12
    assert [(c["component"], c["participant"]) for c in r1["calls"]] == [
        ("prober", None), ("simulator", "M1"), ("simulator", "M2"), ("validity_filter", None)]
    assert all(c["error"] is None and c["messages"][1]["role"] == "user" for c in r1["calls"])

    r2 = json.loads((out / "records/law/planning_003.json").read_text())
    assert [q["category"] for q in r2["questions"]] == ["A", "A", "B", "C", "C"]
    assert (r2["metrics"]["precision"], r2["metrics"]["recall"], r2["metrics"]["f1"]) == (0.5, 0.5, 0.5)
    assert r2["c_breakdown"]["not_meaningful"] == 1 and r2["metrics"]["b"] == 1

    r3 = json.loads((out / "records/ml_research/planning_000.json").read_text())
    assert r3["metrics"]["k"] == 12 and r3["metrics"]["a"] == 0
    assert (r3["metrics"]["precision"], r3["metrics"]["recall"], r3["metrics"]["f1"]) == (0, 0, 0)
    assert r3["c_breakdown"] == {"not_diverging": 6, "not_meaningful": 1, "not_implicit": 2, "redundant": 2}
    assert r3["misalignment_points"][0]["type"] == "definitional"

    # the filter saw only the divergent questions, numbered as the prober asked them
    divergent_numbers = sorted(n for body in (r["body"] for r in t.validity_filter.requests)
                               for n, _, _ in shown_questions(user_text(body)) if "S3 q" in user_text(body))
    assert divergent_numbers == [7, 8, 9, 10, 11, 12]

    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["cases"] == {"requested": 3, "scored": 3, "failed": 0}
    assert summary["precision"] == pytest.approx((0.8 + 0.5 + 0) / 3, abs=1e-4)
    assert summary["f1"] == pytest.approx((0.8889 + 0.5) / 3, abs=1e-4)
    assert summary["mean_k"] == pytest.approx(22 / 3, abs=1e-4) and summary["mean_b"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["by_domain"]["business"] == {"cases": 1, "precision": 0.8, "recall": 1.0, "f1": 0.8889}
    assert summary["by_task_type"]["planning"]["cases"] == 2
    assert summary["type_recall"] == {"definitional": {"hit": 0, "total": 1, "recall": 0.0},
                                      "procedural": {"hit": 0, "total": 1, "recall": 0.0},
                                      "criterial": {"hit": 0, "total": 1, "recall": 0.0},
                                      "scopal": {"hit": 0, "total": 1, "recall": 0.0},
                                      "untyped": {"hit": 6, "total": 8, "recall": 0.75}}
    assert summary["c_breakdown"] == {"not_diverging": 8, "not_meaningful": 2, "not_implicit": 2, "redundant": 2}
    assert (summary["mode"], summary["access"], summary["rollouts"], summary["permute_seed"]) == ("mcq", "public", 1, None)

    run = json.loads((out / "run.json").read_text())
    assert run["command"] == "evaluate" and run["args"]["access"] == "public" and run["finished_at"]
    assert run["components"]["simulator"] == {"model": "simulator-model", "temperature": 0.2,
                                              "structured_output": "json_schema", "request_options": {},
                                              "base_url_kind": "remote"}
    assert len(run["fingerprint"]) == 16
    assert sorted(run["fingerprint_parts"]["inputs"]) == ["business/troubleshooting_010.json",
                                                         "law/planning_003.json", "ml_research/planning_000.json"]
    assert "evaluate/prober_mcq.jinja2" in run["fingerprint_parts"]["templates"]
    every_file = "".join(p.read_text() for p in out.rglob("*.json"))
    assert not any(k in every_file for k in KEYS.values())
    assert q(out, "SELECT role, count(*) FROM llm_calls WHERE error IS NULL GROUP BY 1 ORDER BY 1") == [
        ("prober", 3), ("simulator:M1", 3), ("simulator:M2", 3), ("validity_filter", 3)]
    assert "precision" in res.stdout and "80.0%" in res.stdout

    # re-running resumes: no call at all
    before = t.counts()
    res = evaluate(cli, split, out)
    assert res.exit_code == 0 and t.counts() == before
    assert "3 already scored" in res.stderr


def test_rollouts_one_call_per_participant_per_rollout(cli, trio, split, tmp_path):
    study = studies()
    study.flips = {"M2": 2}  # M2's second rollout answers every question differently
    t = trio(study)
    out = tmp_path / "r"
    assert evaluate(cli, split, out, "--rollouts", "3", "--limit", "1").exit_code == 0
    assert t.counts() == (1, 6, 1)
    sims = [user_text(r["body"]) for r in t.simulator.requests]
    assert all(len(shown_questions(s)) == 5 for s in sims)  # the whole set each time
    rec = json.loads((out / "records/business/troubleshooting_010.json").read_text())
    a = rec["questions"][0]["answers"]["M2"]
    assert a["option"] == "B" and a["rollouts"] == ["B", "C", "B"] and a["consistency"] == pytest.approx(0.6667, abs=1e-4)
    assert rec["questions"][0]["answers"]["M1"]["consistency"] == 1.0
    assert [c["rollout"] for c in rec["calls"] if c["component"] == "simulator"] == [1, 1, 2, 2, 3, 3]
    assert q(out, "SELECT DISTINCT attempt FROM llm_calls WHERE stage = 1 ORDER BY 1") == [(1,), (2,), (3,)]


def test_permutation_maps_answers_back_and_questions_from(cli, trio, split, tmp_path):
    t = trio(studies())
    base, perm, again = tmp_path / "base", tmp_path / "perm", tmp_path / "again"
    assert evaluate(cli, split, base, "--limit", "1").exit_code == 0
    res = evaluate(cli, split, perm, "--limit", "1", "--permute-seed", "7", "--questions-from", base)
    assert res.exit_code == 0, res.output
    assert len(t.prober.requests) == 1  # questions reused: no prober call
    shown = shown_questions(user_text(t.simulator.requests[-1]["body"]))
    assert [s for _, s, _ in shown] != [f"S1 q{i}" for i in range(1, 6)]  # the order was shuffled
    a, b = (json.loads((d / "records/business/troubleshooting_010.json").read_text()) for d in (base, perm))
    assert [x["key"] for x in a["questions"]] == [x["key"] for x in b["questions"]]
    assert [x["answers"] for x in a["questions"]] == [x["answers"] for x in b["questions"]]
    assert b["metrics"] == a["metrics"] and sorted(b["permutation"]["questions"]) == [1, 2, 3, 4, 5]
    # same seed, same permutation
    assert evaluate(cli, split, again, "--limit", "1", "--permute-seed", "7", "--questions-from", base).exit_code == 0
    c = json.loads((again / "records/business/troubleshooting_010.json").read_text())
    assert c["permutation"] == b["permutation"]


def test_changed_model_is_refused(cli, trio, split, tmp_path):
    out = tmp_path / "r"
    trio(studies())
    assert evaluate(cli, split, out, "--limit", "1").exit_code == 0
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"simulator": {"model": "another-simulator"}}))
    res = evaluate(cli, split, out, "--limit", "1", "--config", cfg)
    one_line_error(res, "2 successful simulator call(s)", "simulator.model: 'simulator-model' -> 'another-simulator'",
                   "use a new --out")
    res = evaluate(cli, split, out, "--limit", "1", "--access", "private")
    one_line_error(res, "access", "use a new --out")


def test_bad_input_names_file_and_field_and_calls_nothing(cli, trio, split, tmp_path):
    t = trio(studies())
    broken = released_case()
    del broken["profiles"]["members"][1]["hidden_assumptions"]
    write_case(split, "medicine/coordination_001.json", broken)
    out = tmp_path / "r"
    res = evaluate(cli, split, out)
    one_line_error(res, "medicine/coordination_001.json", "profiles.members.1.hidden_assumptions")
    assert t.counts() == (0, 0, 0) and not out.exists()


def test_unusable_filter_reply_is_re_requested_then_fails_the_case(cli, trio, split, tmp_path):
    study = studies()
    t = trio(study)
    bad = iter([True])

    def wrong_ma(body, headers):
        reply = study.filter(body, headers)
        if next(bad, False):  # first reply names an MA the case does not have
            data = json.loads(reply.body["choices"][0]["message"]["content"])
            data["judgements"][0]["hits_ground_truth"] = "MA9"
            reply.body["choices"][0]["message"]["content"] = json.dumps(data)
        return reply

    t.validity_filter.responder = wrong_ma
    out = tmp_path / "r"
    assert evaluate(cli, split, out, "--limit", "1", "--workers", "1").exit_code == 0
    rec = json.loads((out / "records/business/troubleshooting_010.json").read_text())
    assert rec["status"] == "scored" and rec["metrics"]["f1"] == 0.8889
    tries = [(c["component"], c["try_index"], bool(c["error"])) for c in rec["calls"]]
    assert tries[-2:] == [("validity_filter", 0, True), ("validity_filter", 1, False)]
    assert "MA9" in rec["calls"][-2]["error"]

    t.validity_filter.responder = lambda body, headers: study.filter({"messages": []}, headers)  # judges nothing
    out2 = tmp_path / "r2"
    res = evaluate(cli, split, out2, "--limit", "1")
    assert res.exit_code == 1  # a failed case: exit 1 after saying how to retry
    assert "1 case(s) failed" in res.stderr and "run the same command again to retry them" in res.stderr
    rec = json.loads((out2 / "records/business/troubleshooting_010.json").read_text())
    assert rec["status"] == "failed" and "not judged" in rec["error"] and "metrics" not in rec
    summary = json.loads((out2 / "summary.json").read_text())
    assert summary["complete"] is False and summary["cases"] == {"requested": 1, "scored": 0, "failed": 1}
    # the failed case is retried on the next run
    t.validity_filter.responder = study.filter
    assert evaluate(cli, split, out2, "--limit", "1").exit_code == 0
    assert json.loads((out2 / "summary.json").read_text())["complete"] is True


def test_prober_asking_nothing_scores_zero_without_further_calls(cli, trio, split, tmp_path):
    t = trio(Study([]))
    out = tmp_path / "r"
    assert evaluate(cli, split, out, "--limit", "1").exit_code == 0
    assert t.counts() == (1, 0, 0)
    rec = json.loads((out / "records/business/troubleshooting_010.json").read_text())
    assert rec["status"] == "scored" and rec["questions"] == []
    assert (rec["metrics"]["precision"], rec["metrics"]["recall"], rec["metrics"]["f1"], rec["metrics"]["k"]) == (0, 0, 0, 0)


def test_changed_setup_refused_even_before_any_record(cli, trio, split, tmp_path):
    """Stored calls of an unfinished first run would be replayed: another setup is refused."""
    t = trio(studies())
    out = tmp_path / "r"
    t.simulator.responder = lambda body, headers: study_500()
    assert evaluate(cli, split, out, "--limit", "1", "--config", _no_retries(tmp_path)).exit_code == 1
    assert json.loads((out / "summary.json").read_text())["cases"]["failed"] == 1
    assert q(out, "SELECT count(*) FROM llm_calls WHERE error IS NULL AND role = 'prober'") == [(1,)]
    shutil.rmtree(out / "records")  # as if killed before any record was written: the prober call is stored
    res = evaluate(cli, split, out, "--limit", "1", "--rollouts", "2", "--config", _no_retries(tmp_path))
    one_line_error(res, "rollouts", "use a new --out")


def study_500():
    from ioa_synth.testing.scripted_server import Reply

    return Reply(status=500, body={"error": {"message": "scripted 500"}})


def _no_retries(tmp_path):
    cfg = tmp_path / "noretry.json"
    cfg.write_text(json.dumps({"simulator": {"max_retries": 0}}))
    return cfg
