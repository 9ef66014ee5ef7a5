"""``ioa-synth status``: counts per cell, θ pass rates first attempt and after
regeneration (per stage and dimension), discard reasons, tokens per component, and the
accepted misalignment types next to the paper's; ``--json`` stays machine-readable."""

from __future__ import annotations

import json

from ioa_helpers import build, one_line_error

from ioa_synth.protocol.cells import MA_TYPES, PAPER_MA_TYPE_DISTRIBUTION
from ioa_synth.build.status import reason_kind


def status_json(cli, out) -> dict:
    res = cli("status", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_status_reports_pass_rates_discards_tokens_and_types(cli, endpoint, seeds_file, tmp_path):
    # one worker, cases in order: case 1 fails stage 1 twice (discarded), case 2 fails once then
    # passes, cases 3-4 pass at once; case 4's dialogue fails once then passes
    endpoint({"stage1_judge": ["low", "low", "low"], "stage2_judge": ["ok", "ok", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(4), out)
    report = status_json(cli, out)

    assert report["totals"] == {"accepted": 3, "discarded": 1, "failed": 0, "pending": 0, "total": 4}
    assert sum(c["accepted"] for c in report["cells"]) == 3 and len(report["cells"]) == 4
    s1, s2 = report["pass_rates"]["test"]["stage1"], report["pass_rates"]["test"]["stage2"]
    assert (s1["cases"], s1["first_attempt"], s1["after_regeneration"]) == (4, 0.5, 0.75)
    sub = s1["dimensions"]["subtlety"]
    # first attempts: 4 cases x 2 points, 2 cases low -> 4/8; final: case 1 still low at attempt 2 -> 6/8
    assert (sub["items_first"], sub["first_attempt"], sub["items_final"], sub["after_regeneration"]) == (8, 0.5, 8, 0.75)
    assert s1["dimensions"]["specificity"]["first_attempt"] == 1.0
    assert (s2["cases"], s2["first_attempt"], s2["after_regeneration"]) == (3, 2 / 3, 1.0)
    nat = s2["dimensions"]["naturalness"]
    assert (nat["items_first"], nat["first_attempt"], nat["after_regeneration"]) == (3, 2 / 3, 1.0)
    assert s2["dimensions"]["coverage"]["first_attempt"] == 1.0

    assert report["discards"] == {"test": {"discarded": {"stage 1: below theta_1": 1}, "failed": {}}}
    tokens = {r["role"]: r for r in report["tokens"]}
    # generator: case 1: 2, case 2: 2+1, cases 3, 4: 1+1 and 1+2 -> 10 calls of 100 prompt tokens each
    assert tokens["generator"]["calls"] == 10 and tokens["generator"]["prompt_tokens"] == 1000
    assert tokens["judge"]["completion_tokens"] == 500 and tokens["judge"]["failed_calls"] == 0

    types = report["ma_types"]["test"]
    assert types["points"] == 6 and [t["type"] for t in types["types"]] == list(MA_TYPES)
    shares = {t["type"]: t for t in types["types"]}
    assert shares["definitional"]["count"] == 3 and shares["definitional"]["share"] == 0.5
    # the other point of each case has its planted type (the scripted server keeps the schema's constants)
    assert sum(t["count"] for t in types["types"]) == 6 and shares["other"]["count"] == 0
    assert report["type_mix"]["test"]["cases"] == 4
    assert all(t["paper_share"] == PAPER_MA_TYPE_DISTRIBUTION[t["type"]] for t in types["types"])

    res = cli("status", "--out", out)
    assert res.exit_code == 0
    for text in ("θ pass rates", "75.0%", "stage 1: below theta_1", "generator", "24.2%", "definitional"):
        assert text in res.stdout
    # who made the build and when (a new user could not tell from status which model made it)
    run = report["run"]
    assert run["runs"] == 1 and run["last_finished_at"] and set(run["components"]) == {"generator", "judge"}
    model = run["components"]["generator"]
    assert model and res.stdout.splitlines()[0].startswith("build: last started ")
    assert f"generator {model}, judge {run['components']['judge']}" in res.stdout.splitlines()[0]


def test_pass_rates_after_regenerate(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(2), out)
    assert status_json(cli, out)["pass_rates"]["test"]["stage1"]["after_regeneration"] == 0.5
    assert cli("regenerate", "--out", out, "--status", "discarded").exit_code == 0
    report = status_json(cli, out)
    s1 = report["pass_rates"]["test"]["stage1"]
    assert (s1["first_attempt"], s1["after_regeneration"]) == (0.5, 1.0)
    assert s1["dimensions"]["subtlety"]["after_regeneration"] == 1.0
    assert report["discards"] == {} and report["totals"]["accepted"] == 2


def test_audit_calls_count_as_tokens_but_not_pass_rates(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    before = status_json(cli, out)
    assert cli("audit", "--out", out, "--split", "test").exit_code == 0
    after = status_json(cli, out)
    assert after["pass_rates"] == before["pass_rates"]
    assert {r["role"]: r["calls"] for r in after["tokens"]}["audit_judge"] == 2


def test_reason_kinds():
    assert reason_kind("stage 1 failed twice (attempt 1: below theta_1 on MA1 | attempt 2: invalid output: x)") == \
        "stage 1: invalid output"
    assert reason_kind("stage 2 failed twice (attempt 1: invalid output: x | attempt 2: below theta_2 on dialogue)") == \
        "stage 2: below theta_2"
    assert reason_kind(None) == "other"


def test_status_of_a_non_build_dir(cli, tmp_path):
    one_line_error(cli("status", "--out", tmp_path / "none"), "no such folder")
    (tmp_path / "empty").mkdir()
    one_line_error(cli("status", "--out", tmp_path / "empty"), "no catalog.duckdb")
    one_line_error(cli("status", "--out", tmp_path / "empty", "--json"), "no catalog.duckdb")


def test_cell_table_splits_no_word_at_80_columns():
    from rich.console import Console

    from ioa_synth.build.status import STATUSES, cell_table

    cells = [("business", "troubleshooting"), ("ml_research", "planning"), ("software_engineering", "coordination")]
    rows = [dict(split="test", domain=d, task_type=t, **{s: i for i, s in enumerate(STATUSES)}, total=6)
            for d, t in cells]
    console = Console(width=80, record=True, force_terminal=False)
    console.print(cell_table(rows))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    said = text.split()
    for word in ("business", "troubleshooting", "ml_research", "software_engineering", "coordination",
                 *STATUSES, "total"):
        assert word in said, word  # whole, not split across lines or cut with an ellipsis
    assert "…" not in text


def test_tokens_no_call_reported_are_unknown_not_zero(cli, endpoint, seeds_file, tmp_path):
    """A server that reports no prompt count (the embedded one streams none) leaves the
    column NULL: status says n/a and JSON null, never 0."""
    import duckdb

    endpoint({})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    with duckdb.connect(str(out / "catalog.duckdb")) as con:
        con.execute("UPDATE llm_calls SET prompt_tokens = NULL WHERE role = 'generator'")
    tokens = {r["role"]: r for r in status_json(cli, out)["tokens"]}
    assert tokens["generator"]["prompt_tokens"] is None and tokens["generator"]["completion_tokens"] > 0
    assert tokens["judge"]["prompt_tokens"] > 0
    res = cli("status", "--out", out)
    row = next(line for line in res.stdout.splitlines() if "generator" in line and "│" in line)
    assert "n/a" in row


def test_a_case_still_running_counts_only_once_its_stage_is_decided(cli, endpoint, seeds_file, tmp_path):
    """A pending case whose stage has not passed yet is left out of that stage's rates (a stage
    in progress is not a failed one) and of its final-attempt items; one whose stage passed counts."""
    import duckdb

    endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(2), out)  # case 1: stage 1 failed twice; case 2: accepted
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("UPDATE cases SET status = 'pending'")  # as a resumed run sees them mid-build
    con.close()
    s1 = status_json(cli, out)["pass_rates"]["test"]["stage1"]
    assert (s1["cases"], s1["first_attempt"], s1["after_regeneration"]) == (1, 1.0, 1.0)
    # a first attempt's verdicts are settled once given: the running case's failing items count
    # there (mid-run, status had shown 100% on a dimension the judge had just failed), not at the
    # final attempt, which is still open
    sub = s1["dimensions"]["subtlety"]
    assert (sub["items_first"], sub["items_final"]) == (4, 2)
    assert sub["first_attempt"] < 1.0 and sub["after_regeneration"] == 1.0


def test_status_says_a_stopped_build_was_interrupted_not_finished(tmp_path):
    # a build stopped by Ctrl-C or an error gets its runs row closed with the time it stopped:
    # status said "finished" for it, which read as a build that ran to the end
    from ioa_synth.build.status import build_runs, run_line
    from ioa_synth.runs.catalog import Catalog
    from ioa_synth.runs.run_rows import finish_run, start_run

    with Catalog(tmp_path) as catalog:
        done = start_run(catalog, "build", {}, {"components": {"generator": {"model": "m"}}})
        finish_run(catalog, done, {"tokens": 0})
        assert run_line(build_runs(catalog)).split("; ")[0].endswith("(UTC)")
        assert "finished " in run_line(build_runs(catalog))
        cut = start_run(catalog, "build", {}, {"components": {"generator": {"model": "m"}}})
        finish_run(catalog, cut, {"stopped": "RunInterrupted: interrupted", "tokens": 0})
        line = run_line(build_runs(catalog))
        assert "interrupted " in line and "finished" not in line and "resumes" in line
        failed = start_run(catalog, "build", {}, None)
        finish_run(catalog, failed, {"stopped": "ConnectionError: cannot reach"})
        assert "stopped by an error" in run_line(build_runs(catalog))
        start_run(catalog, "build", {}, None)
        assert "running or killed" in run_line(build_runs(catalog))
