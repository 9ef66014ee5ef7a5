"""What a fresh user found in ``evaluate``, ``compare``, ``report`` and folder handling:
``--questions-from`` checked up front and fingerprinted by content, ``--out`` that is a file
or a folder of the other kind refused in one line, input errors naming an openable path,
ambiguity questions tied to their expressions, and a chart title that is never cut off."""

from __future__ import annotations

import json
import shutil

import pytest

from .eval_helpers import STUDY_1, STUDY_2, Study, released_case, write_case
from ioa_helpers import one_line_error


def evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "1", *extra)


@pytest.fixture
def two_cases(tmp_path):
    root = tmp_path / "data"
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    return root


def studies() -> Study:
    return Study(STUDY_1, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})


def test_questions_from_lacking_a_case_or_not_a_results_folder_is_refused_up_front(cli, trio, two_cases, tmp_path):
    t = trio(studies())
    base = tmp_path / "base"
    assert evaluate(cli, two_cases, base, "--limit", "1").exit_code == 0
    before = t.counts()
    out = tmp_path / "reuse"
    one_line_error(evaluate(cli, two_cases, out, "--questions-from", base), f"--questions-from {base}",
                   "no scored record", "1 case(s) to evaluate: law/planning_003")
    assert t.counts() == before and not out.exists()  # no call, nothing written: --out is not locked
    one_line_error(evaluate(cli, two_cases, out, "--questions-from", two_cases),
                   "not an 'ioa-synth evaluate' results folder")
    assert not out.exists()
    assert evaluate(cli, two_cases, out, "--questions-from", base, "--limit", "1").exit_code == 0  # still free
    assert evaluate(cli, two_cases, out, "--questions-from", base, "--limit", "1").stderr.count("error") == 0


def test_questions_from_is_fingerprinted_by_content_not_by_path(cli, trio, two_cases, tmp_path, monkeypatch):
    t = trio(studies())
    base = tmp_path / "base"
    assert evaluate(cli, two_cases, base).exit_code == 0
    out = tmp_path / "perm"
    assert evaluate(cli, two_cases, out, "--permute-seed", "3", "--questions-from", base, "--limit", "1").exit_code == 0
    monkeypatch.chdir(tmp_path)  # the same folder, named relatively: resumes (and --limit may grow)
    res = evaluate(cli, "data", "perm", "--permute-seed", "3", "--questions-from", "base")
    assert res.exit_code == 0, res.output
    assert json.loads((out / "summary.json").read_text())["cases"]["scored"] == 2
    # a copy holding the same questions is the same source; other questions are refused
    shutil.copytree(base, tmp_path / "copy")
    assert evaluate(cli, "data", "perm", "--permute-seed", "3", "--questions-from", "copy").exit_code == 0
    rec_path = tmp_path / "copy/records/business/troubleshooting_010.json"
    rec = json.loads(rec_path.read_text())
    rec["questions"][0]["question"] = "another stem"
    rec_path.write_text(json.dumps(rec))
    one_line_error(evaluate(cli, "data", "perm", "--permute-seed", "3", "--questions-from", "copy"),
                   "questions_from: other questions for business/troubleshooting_010", "use a new --out")
    assert len(t.prober.requests) == 2  # only the base run asked the prober


def test_input_error_names_the_path_as_given(cli, trio, two_cases, tmp_path, monkeypatch):
    t = trio(studies())
    (two_cases / "law/planning_003.json").write_text("{not json")
    monkeypatch.chdir(tmp_path)
    res = evaluate(cli, "data", "out")
    line = one_line_error(res, "error: data/law/planning_003.json: invalid JSON at line 1, column 2: ")
    assert (tmp_path / line.split()[1].rstrip(":")).is_file()  # a path the user can open from here
    assert t.counts() == (0, 0, 0)


def test_out_that_is_a_file_is_one_line_for_every_command(cli, trio, two_cases, tmp_path):
    trio(studies())
    results = tmp_path / "results"
    assert evaluate(cli, two_cases, results).exit_code == 0
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    one_line_error(cli("compare", results, results, "--out", afile, "--resamples", "50"),
                   f"--out {afile} exists and is not a folder")
    for args in (("evaluate", "--data", two_cases, "--out", afile), ("status", "--out", afile),
                 ("show", "x", "--out", afile), ("build", "--seeds", afile, "--split", "test", "--out", afile),
                 ("audit", "--out", afile, "--split", "test"), ("sql", afile, "SELECT 1"),
                 ("seeds", "assign", "--out", afile), ("seeds", "check", "--out", afile)):
        res = cli(*args)
        assert res.exit_code == 2, args
        one_line_error(res, str(afile), "not a folder")
    assert afile.read_text() == "keep me"
    (results / "reports").write_text("not a folder")
    one_line_error(cli("report", results), f"{results / 'reports'} exists and is not a folder")
    (results / "reports").unlink()
    (results / "reports").mkdir()
    (results / "reports" / "report_domain.md").mkdir()  # something in the way of one output file
    one_line_error(cli("report", results), "cannot write", "report_domain.md")


def test_build_and_evaluate_folders_are_not_mixed(cli, trio, endpoint, seeds_file, two_cases, tmp_path):
    endpoint({"stage1_judge": ["low"]})
    build_dir = tmp_path / "build"
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", build_dir, "--workers", "1").exit_code == 0
    t = trio(studies())
    calls_before = build_dir.joinpath("catalog.duckdb").stat().st_mtime_ns
    manifest = (build_dir / "run.json").read_bytes()  # the build directory's own (kind build)
    one_line_error(evaluate(cli, two_cases, build_dir), f"--out {build_dir} is an 'ioa-synth build' directory")
    assert t.counts() == (0, 0, 0) and (build_dir / "run.json").read_bytes() == manifest  # no evaluate manifest
    assert build_dir.joinpath("catalog.duckdb").stat().st_mtime_ns == calls_before
    results = tmp_path / "results"
    assert evaluate(cli, two_cases, results).exit_code == 0
    assert cli("status", "--out", results).exit_code == 0  # status reads both kinds
    for args in (("show", "test/law/planning_000", "--out", results),
                 ("audit", "--out", results, "--split", "test"),
                 ("regenerate", "test/law/planning_000", "--out", results),
                 ("annotate", "export", "--out", results, "--split", "test", "--format", "csv"),
                 ("build", "--seeds", seeds_file(1), "--split", "test", "--out", results)):
        one_line_error(cli(*args), f"--out {results} is an 'ioa-synth evaluate' results folder")
    assert evaluate(cli, two_cases, results).exit_code == 0  # its own kind is still accepted


def test_ambiguity_questions_must_follow_their_expressions():
    from ioa_synth.probing.replies import parse_question_per_expression

    exprs = [{"expression": e, "turn": 1} for e in ("learn Torch", "nightly build", "the budget", "stays")]

    def reply(*stems):
        return {"questions": [{"question": s, "options": {"A": "one reading", "B": "another reading"}} for s in stems]}

    ok = parse_question_per_expression(reply("What does learn  TORCH mean?", "Who owns the nightly-build?",
                                             "Is the budget fixed?", "What stays?"), exprs)
    assert [q.question for q in ok][0] == "What does learn  TORCH mean?"
    with pytest.raises(ValueError, match="question 1 does not mention expression 1"):  # order swapped
        parse_question_per_expression(reply("Who owns the nightly build?", "What does learn Torch mean?",
                                            "Is the budget fixed?", "What stays?"), exprs)
    for scaffold in ("Expression 2: 'nightly build'", 'Expression 2 (turn 1): "nightly build"', "nightly build"):
        with pytest.raises(ValueError, match="question 2: the stem .* is not a question"):
            parse_question_per_expression(reply("What does learn Torch mean?", scaffold, "Is the budget fixed?",
                                                "What stays?"), exprs)
    # the expression may sit in an option rather than the stem
    in_option = reply("What does learn Torch mean?", "Which is meant?", "Is the budget fixed?", "What stays?")
    in_option["questions"][1]["options"]["A"] = "the nightly build of the app"
    assert len(parse_question_per_expression(in_option, exprs)) == 4


def test_chart_title_is_wrapped_inside_the_figure():
    from ioa_synth.evaluate.analysis.render import bar_chart_figure

    title = "F1 per task type (n = dialogues)\nmcq, access private+thoughts, rollouts 3, permute seed 20260516"
    fig = bar_chart_figure(title, ["a", "b"], [0.5, None], "F1", [1, 0])
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    ax = fig.axes[0]
    box, frame = ax.title.get_window_extent(renderer), fig.bbox
    assert ax.title.get_text().count("\n") >= 2  # the long second line was wrapped
    assert box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y1 <= frame.y1


def test_build_stopped_by_a_setup_error_prints_only_the_error(cli, endpoint, seeds_file, tmp_path):
    from ioa_synth.testing.scripted_server import Reply

    endpoint(responder=lambda body, headers: Reply(status=401, body={"error": {"message": "Incorrect API key"}}))
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", tmp_path / "b", "--workers", "1")
    assert res.exit_code == 2
    line = one_line_error(res, "HTTP 401", "Incorrect API key")  # no 'cases: 0/2 done: ...' line before it
    assert "done:" not in res.stderr and line.startswith("error: ")


def test_ambiguity_reply_out_of_order_is_asked_again_through_the_server(cli, trio, tmp_path):
    from .test_modes import AMB_QUESTIONS, EXPRESSIONS, ModeStudy, ambiguous_case
    from ioa_synth.testing.scripted_server import chat_reply

    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", ambiguous_case())
    study = ModeStudy(AMB_QUESTIONS, expressions=[[(e, t) for e, t, _ in EXPRESSIONS]])
    t = trio(study)
    wrong = iter([True])

    def swapped_once(body, headers):
        reply = study.prober(body, headers)
        data_ = json.loads(reply.body["choices"][0]["message"]["content"])
        if "questions" in data_ and next(wrong, False):  # first MCQ reply: questions 1 and 2 swapped
            data_["questions"][0], data_["questions"][1] = data_["questions"][1], data_["questions"][0]
            return chat_reply(json.dumps(data_))
        return reply

    t.prober.responder = swapped_once
    out = tmp_path / "amb"
    res = evaluate(cli, data, out, "--mode", "ambiguity")
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "records/ml_research/planning_000.json").read_text())
    prober_tries = [(c["try_index"], c["error"] is not None) for c in rec["calls"] if c["component"] == "prober"]
    assert prober_tries == [(0, False), (0, True), (1, False)]  # selection, swapped MCQs, asked again
    assert "question 1 does not mention expression 1" in rec["calls"][1]["error"]
    assert [q["category"] for q in rec["questions"]] == ["A", "C", "A", "B"]


def test_case_missing_from_stored_questions_is_a_clean_case_error(tmp_path):
    """A case ``StoredQuestions`` has no questions for fails with a one-line reason, not
    as an "internal error" (KeyError)."""
    from ioa_synth.evaluate.case import EvalSettings, evaluate_case
    from ioa_synth.evaluate.inputs import load_cases
    from ioa_synth.evaluate.stored_questions import StoredQuestions
    from ioa_synth.probing.calls import CaseCalls

    from .eval_helpers import toolkit_case

    write_case(tmp_path, "test/ml_research/planning_000.json", toolkit_case())
    (case,) = load_cases(tmp_path)
    record = evaluate_case(case, EvalSettings(), StoredQuestions({}), {}, CaseCalls(None, case.case_id))
    assert record.status == "failed" and record.calls == []
    assert record.error == f"--questions-from: no stored questions of {case.case_id}"
