"""``label-types``, the results viewer and ``build import`` on meetings of more than two people
(``build --participants 3``, the scripted three-person case of
:mod:`ioa_synth.testing.scripted_multi`: MA1 sides M1, M3 | M2; MA2 M1 | M2 with M3 neutral;
MA3 M3 | M1, M2), at the HTTP boundary; the two-person prompts and pages stay as they were."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

from ioa_helpers import one_line_error, q

from ioa_synth.testing.scripted_multi import MultiResponder
from ioa_synth.testing.type_judge import TypeJudgeResponder

CASE = "test/ml_research/planning_000"


def _build(cli, endpoint, seeds: Path, out: Path, *extra: str) -> None:
    endpoint(responder=MultiResponder() if extra else None)
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", "--type-mix", "none",
              *extra)
    assert res.exit_code == 0, res.output


def test_label_types_shows_the_judge_each_readings_holders(cli, endpoint, seeds_file, tmp_path):
    seeds = seeds_file(1)
    three, two = tmp_path / "three", tmp_path / "two"
    _build(cli, endpoint, seeds, three, "--participants", "3")
    _build(cli, endpoint, seeds, two)
    judge = TypeJudgeResponder(lambda i: {"MA1": "definitional", "MA2": "procedural"}.get(i, "criterial"))
    endpoint(responder=judge, env="TYPE_JUDGE")
    res = cli("label-types", three, "--out", tmp_path / "labels3", "--json")
    assert res.exit_code == 0, res.output
    (prompt,) = judge.prompts
    assert prompt.startswith("The 3 members of a meeting (M1 Ada Okafor, research lead, M2 Ben Lindqvist, ML "
                             "engineer, M3 Chiara Zanetti, product manager)")
    assert "- MA1: topic: evaluation data; surface form: \"the held-out set\"; M1, M3 understand: the 2,400" in prompt
    assert "; M2 understands: a fresh random tenth" in prompt
    assert "M2 understands: reuse the cached January leaderboard scores and recompute only the new model; " \
           "neutral (neither reading): M3; why" in prompt
    assert "M3 understands: recall at 10 of at least 0.82" in prompt and "M1, M2 understand: mean recall" in prompt
    summary = json.loads(res.stdout)
    assert (summary["points"], summary["labelled"], summary["failed"]) == (3, 3, 0)
    labels = [json.loads(x) for x in (tmp_path / "labels3" / "labels.jsonl").read_text().splitlines()]
    assert [(lab["ma_id"], lab["type"]) for lab in labels] == [("MA1", "definitional"), ("MA2", "procedural"),
                                                               ("MA3", "criterial")]
    manifest = json.loads((tmp_path / "labels3" / "run.json").read_text())
    assert set(manifest["fingerprint_parts"]["components"]["type_judge"]["templates"]) == {
        "typelabels/type_judge.jinja2", "typelabels/type_judge_multi.jinja2"}
    # a two-person build: the paper's prompt and template, as before
    assert cli("label-types", two, "--out", tmp_path / "labels2").exit_code == 0
    assert judge.prompts[1].startswith("Two members of a meeting (M1 ")
    assert "; M1 understands: " in judge.prompts[1] and "neutral" not in judge.prompts[1]
    manifest = json.loads((tmp_path / "labels2" / "run.json").read_text())
    assert set(manifest["fingerprint_parts"]["components"]["type_judge"]["templates"]) == {
        "typelabels/type_judge.jinja2"}


def _page(folder: Path, path: str) -> str:
    from starlette.testclient import TestClient

    from ioa_synth.view.app import make_app
    from ioa_synth.view.read.folders import open_library

    library = open_library([folder])
    with TestClient(make_app(library)) as client:
        res = client.get(path)
    assert res.status_code == 200
    return unescape(" ".join(re.sub(r"<[^>]+>", " ", res.text).split()))


def test_the_viewer_shows_each_readings_holders(cli, endpoint, seeds_file, tmp_path):
    seeds = seeds_file(1)
    three, two = tmp_path / "three", tmp_path / "two"
    _build(cli, endpoint, seeds, three, "--participants", "3")
    _build(cli, endpoint, seeds, two)
    page = _page(three, f"/f/0/case/{CASE}")
    assert "side a understands side b understands" in page and "M1 understands" not in page
    assert "“the held-out set” M1, M3 the 2,400 questions" in page
    assert "MA2 neutral: M3 " in page and "“good enough to ship” M3 recall at 10" in page
    assert "cue “the held-out set”: M1, M3 the 2,400 questions" in page  # a turn's cue: the holders of each reading
    assert "Chiara Zanetti" in page and "3. M3 Chiara Zanetti" in page
    assert "ml_research" in _page(three, "/f/0/")
    page = _page(two, f"/f/0/case/{CASE}")
    assert "M1 understands M2 understands" in page and "side a" not in page and "neutral" not in page


def test_build_import_of_three_person_records_keeps_their_sides_and_refuses_broken_ones(cli, endpoint, seeds_file,
                                                                                      tmp_path):
    built = tmp_path / "three"
    _build(cli, endpoint, seeds_file(1), built, "--participants", "3")
    records = tmp_path / "records" / "test"
    shutil.copytree(built / "test", records)
    out = tmp_path / "imported"
    res = cli("build", "import", records, "--split", "test", "--out", out)
    assert res.exit_code == 0, res.output
    (path,) = [p for (p,) in q(out, "SELECT path FROM cases WHERE status = 'accepted'")]
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    assert record["profiles"]["misalignment_points"][1]["neutral"] == ["M3"]
    shown = " ".join(cli("show", "--out", out).stdout.replace("│", " ").split())
    assert "side a" in shown and "(M1, M3)" in shown and "neutral: M3" in shown
    res = cli("check", "--out", out, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["accepted_cases"] == 1
    # a point whose sides leave M3 out, a member placed twice, ids not M1..MN: one line each, nothing written
    (case_file,) = records.rglob("*.json")
    original = json.loads(case_file.read_text(encoding="utf-8"))
    for change, needle in ((lambda r: r["profiles"]["misalignment_points"][1].update(neutral=[]),
                            "misalignment_points.1.between: MA2: M3 is on no side"),
                           (lambda r: r["profiles"]["misalignment_points"][0]["between"].update(b=["M2", "M3"]),
                            "misalignment_points.0.between: MA1: M3 is placed twice"),
                           (lambda r: r["profiles"]["members"][2].update(id="M7"),
                            "profiles.members ids are M1, M2, M7")):
        broken = json.loads(json.dumps(original))
        change(broken)
        case_file.write_text(json.dumps(broken), encoding="utf-8")
        fresh = tmp_path / "refused"
        res = cli("build", "import", records, "--split", "test", "--out", fresh)
        assert res.exit_code == 2
        one_line_error(res, needle)
        assert not fresh.exists()


def test_build_import_refuses_records_of_another_meeting_size_or_language(cli, endpoint, seeds_file, tmp_path):
    """A directory holds one meeting size and language (its manifest's): two-person records
    into a three-person build, or three-person records into a two-person build, are refused
    in one line with nothing written; German records into an English build too."""
    seeds = seeds_file(1)
    three, two = tmp_path / "three", tmp_path / "two"
    _build(cli, endpoint, seeds, three, "--participants", "3")
    _build(cli, endpoint, seeds, two)
    sample = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"
    before = sorted(p.relative_to(three) for p in three.rglob("*") if p.name != "catalog.duckdb")
    res = cli("build", "import", sample, "--split", "test", "--out", three)
    assert one_line_error(res).endswith("it is a meeting of 2 but the directory was built with --participants 3; "
                                        "nothing imported (import into another --out)")
    assert sorted(p.relative_to(three) for p in three.rglob("*") if p.name != "catalog.duckdb") == before
    records = tmp_path / "records" / "test" / "ml_research"
    records.mkdir(parents=True)
    record = json.loads((three / f"{CASE}.json").read_text())
    (records / "planning_007.json").write_text(json.dumps({**record, "case_id": "test/ml_research/planning_007"}))
    res = cli("build", "import", tmp_path / "records" / "test", "--split", "test", "--out", two)
    assert "it is a meeting of 3 but the directory was built with --participants 2" in one_line_error(res)
    german = {**json.loads((two / f"{CASE}.json").read_text()), "case_id": "test/ml_research/planning_007",
              "language": "de"}
    (records / "planning_007.json").write_text(json.dumps(german))
    res = cli("build", "import", tmp_path / "records" / "test", "--split", "test", "--out", two)
    assert "it is written in 'de' but the directory was built with --language en" in one_line_error(res)


def test_estimate_refuses_a_directory_that_build_refuses_for_another_meeting_size(cli, endpoint, seeds_file, tmp_path):
    """What build refuses, estimate refuses with the same line: a three-person directory
    estimated (or resumed) as a two-person build."""
    seeds = seeds_file(1)
    three = tmp_path / "three"
    config = tmp_path / "config.json"  # a model named: the setup is known before any endpoint is asked
    config.write_text(json.dumps({"generator": {"model": "scripted"}, "judge": {"model": "scripted"}}))
    _build(cli, endpoint, seeds, three, "--participants", "3", "--config", config)
    argv = ["--seeds", seeds, "--split", "test", "--out", three, "--type-mix", "none", "--config", config]
    assert cli("estimate", "build", *argv, "--participants", "3").exit_code == 0
    estimated = one_line_error(cli("estimate", "build", *argv))
    built = one_line_error(cli("build", *argv))
    assert estimated == built and "were made with another setup" in estimated
