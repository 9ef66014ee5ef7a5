"""``ioa-synth train sft``: a teacher run's prober messages (as stored) and its question sets
without Category-C questions (paper App. D.1), black-box against scripted servers."""

from __future__ import annotations

import json

from ioa_helpers import one_line_error

from evaluate.eval_helpers import released_case, write_case


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def sent_prober_messages(teacher) -> dict[str, list]:
    """What the teacher run sent the prober, by the study marker in the request."""
    return {marker: r["body"]["messages"] for r in teacher.trio.prober.requests
            for marker in ("STUDY1", "STUDY2", "ALLC", "Ada Okafor") if marker in json.dumps(r["body"]["messages"])}


def test_messages_rows_filter_c_and_keep_the_sent_prompt(cli, teacher, tmp_path):
    out = tmp_path / "sft"
    # re-rendering would now differ: the export must use the stored request, not the case file
    write_case(teacher.data, "business/troubleshooting_010.json", released_case(tag=" STUDY1 EDITED"))
    res = cli("train", "sft", "--results", teacher.results, "--out", out)
    assert res.exit_code == 0, res.output
    assert "1 dialogue(s) dropped" in res.stderr and "9 removed" not in res.stderr
    got = {r["case_id"]: r for r in rows(out / "sft.jsonl")}
    assert set(got) == {"business/troubleshooting_010", "law/planning_003", "ml_research/planning_000"}
    sent = sent_prober_messages(teacher)
    r1 = got["business/troubleshooting_010"]
    assert r1["messages"][:2] == sent["STUDY1"] and "EDITED" not in json.dumps(r1["messages"])
    assert r1["messages"][2]["role"] == "assistant" and set(r1) == {"messages", "case_id", "split", "n_removed_c",
                                                                     "teacher"}
    assert (r1["split"], r1["teacher"], r1["n_removed_c"]) == ("train", "prober-model", 1)
    reply = json.loads(r1["messages"][2]["content"])
    assert [q["question"] for q in reply["questions"]] == ["S1 q1", "S1 q2", "S1 q3", "S1 q4"]  # q5 was C
    assert reply["questions"][0]["options"] == {"A": "S1 q1 option one", "B": "S1 q1 option two",
                                                "C": "S1 q1 option three"}
    r2 = got["law/planning_003"]  # A, A, B, C, C: the B question stays
    assert [q["question"] for q in json.loads(r2["messages"][2]["content"])["questions"]] == ["S2 q1", "S2 q2", "S2 q3"]
    assert r2["n_removed_c"] == 2 and r2["messages"][:2] == sent["STUDY2"]
    r3 = got["ml_research/planning_000"]  # eleven C questions and one B
    assert r3["n_removed_c"] == 11 and len(json.loads(r3["messages"][2]["content"])["questions"]) == 1


def test_keep_c_and_prompt_completion_format(cli, teacher, tmp_path):
    out = tmp_path / "sft"
    res = cli("train", "sft", "--results", teacher.results, "--out", out, "--keep-c", "--format", "prompt-completion")
    assert res.exit_code == 0, res.output
    got = {r["case_id"]: r for r in rows(out / "sft.jsonl")}
    assert len(got) == 4 and all(r["n_removed_c"] == 0 for r in got.values())
    r = got["medicine/design_review_001"]
    assert [m["role"] for m in r["prompt"]] == ["system", "user"] and [m["role"] for m in r["completion"]] == ["assistant"]
    assert len(json.loads(r["completion"][0]["content"])["questions"]) == 3


def test_refuses_other_splits_unless_allowed(cli, trio, tmp_path):
    from .conftest import studies, write_split

    trio(studies())
    data = write_split(tmp_path / "data" / "test")
    results = tmp_path / "teacher"
    assert cli("evaluate", "--data", data, "--out", results, "--workers", "2").exit_code == 0
    out = tmp_path / "sft"
    one_line_error(cli("train", "sft", "--results", results, "--out", out), "'test' split", "--allow-split")
    assert not out.exists()
    res = cli("train", "sft", "--results", results, "--out", out, "--allow-split")
    assert res.exit_code == 0 and {r["split"] for r in rows(out / "sft.jsonl")} == {"test"}


def test_bad_results_folders(cli, teacher, tmp_path):
    out = tmp_path / "sft"
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, needle in ((empty, f"--results {empty / 'run.json'}: missing (is this an 'ioa-synth evaluate' "
                                   "results folder?)"), (tmp_path / "nope", "not a folder")):
        res = cli("train", "sft", "--results", folder, "--out", out)
        assert res.exit_code == 2
        assert one_line_error(res, needle).count("results folder") <= 1  # said once, not wrapped in itself
    direct = tmp_path / "direct"
    res = cli("evaluate", "--data", teacher.data, "--out", direct, "--mode", "direct", "--limit", "1")
    one_line_error(cli("train", "sft", "--results", direct, "--out", out), "--mode direct", "mcq")
    reused = tmp_path / "reused"
    assert cli("evaluate", "--data", teacher.data, "--out", reused, "--questions-from", teacher.results).exit_code == 0
    one_line_error(cli("train", "sft", "--results", reused, "--out", out), "--questions-from")
    res = cli("train", "sft", "--results", teacher.results, "--out", out, "--format", "chatml")
    assert res.exit_code == 2
    one_line_error(res, "--format")
    assert not out.exists()


def test_sample_warm_start_subset_is_stratified_and_reproducible(cli, teacher, tmp_path):
    # Table 17's warm-start is 300 of the 1,200 train dialogues; here 2 of the teacher's 4 (one per cell each)
    got = []
    for name in ("a", "b"):
        res = cli("train", "sft", "--results", teacher.results, "--out", tmp_path / name, "--keep-c",
                  "--sample", "2", "--seed", "5")
        assert res.exit_code == 0, res.output
        got.append([r["case_id"] for r in rows(tmp_path / name / "sft.jsonl")])
    assert got[0] == got[1] and len(got[0]) == 2
    from ioa_synth.evaluate.analysis.results import load_results
    from ioa_synth.protocol.sample import stratified_sample

    scored = list(load_results(teacher.results).scored.values())
    assert got[0] == [r.case_id for r in stratified_sample(scored, lambda r: (r.domain, r.task_type), 2, 5)]
    res = cli("train", "sft", "--results", teacher.results, "--out", tmp_path / "c", "--sample", "5")
    one_line_error(res, "--sample 5 asks for more scored dialogues than the 4")
    assert not (tmp_path / "c" / "sft.jsonl").exists()
