"""``ioa-synth seeds ...`` end to end: exit codes, one-line errors, files written."""

from __future__ import annotations

import json

import pytest

from ioa_synth.seeds.tuples import load_seed_file

from .conftest import SNAPSHOT, read_jsonl
from .replay import Reply, arxiv_recording

SMALL = ["--per-cell", "train=3,val=1,test=1", "--reserve", "1"]


def _one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output + result.stderr
    return lines[0]


def test_import_assign_check(run, tmp_path):
    out = tmp_path / "b"
    imported = run("import", SNAPSHOT, "--out", out)
    assert imported.exit_code == 0 and "ml_research" in imported.stdout
    assigned = run("assign", "--out", out, *SMALL)
    assert assigned.exit_code == 0, assigned.stderr
    for split in ("train", "val", "test"):
        assert load_seed_file(out / "seeds" / f"{split}.jsonl")
        assert load_seed_file(out / "seeds" / f"{split}_reserve.jsonl")
    checked = run("check", "--out", out)
    assert checked.exit_code == 0 and "no leakage" in checked.stdout


def test_assign_short_exits_1_with_one_summary_line(run, tmp_path):
    """Short cells are one error line (how many, per split) and the table names them, not
    one stderr line per cell (the snapshot is short in all 90 cells of the default pools)."""
    run("import", SNAPSHOT, "--out", tmp_path)
    result = run("assign", "--out", tmp_path)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: 90 cells short of primary tuples (train 30, val 30, test 30; 1,423 tuples missing, see the table); "
        "nothing written (add papers, lower --per-cell, or pass --allow-short)"]
    law = [line for line in result.stdout.splitlines() if "│ law " in line]
    assert law and law[0].split("│")[2:6] == [" planning        ", "  0/40 ", " 0/4 ", " 5/10 "]
    assert not (tmp_path / "seeds" / "train.jsonl").exists()
    allowed = run("assign", "--out", tmp_path, "--allow-short")
    assert allowed.exit_code == 0 and (tmp_path / "seeds" / "test.jsonl").exists()
    assert allowed.stderr.splitlines() == [
        "warning: 90 cells short of primary tuples (train 30, val 30, test 30; 1,423 tuples missing, see the "
        "table); written anyway (--allow-short)"]


def test_assign_reserve_short_is_one_warning_and_the_table_fits_80_columns(run, tmp_path, monkeypatch):
    """``--reserve 1`` on the snapshot: one warning line for the 43 cells without a reserve
    tuple (it was one line per cell), and a table whose headers and names are whole at 80
    columns (task-type headers were cut to 'design_r…', domains to 'ml_resea…')."""
    from rich.console import Console

    from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES

    monkeypatch.setattr("ioa_synth.cli.seeds.console", Console(width=80))
    run("import", SNAPSHOT, "--out", tmp_path)
    result = run("assign", "--out", tmp_path, *SMALL)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "warning: 43 cells have fewer than 1 reserve tuple (train 28, val 10, test 5; see the +N counts in the "
        "table): a case discarded in those cells is not replaced"]
    lines = result.stdout.splitlines()
    wrote = [line for line in lines if line.startswith("wrote ")]  # a path is printed whole, never cut
    assert wrote and all(line.endswith(".jsonl") for line in wrote)
    lines = [line for line in lines if line not in wrote]
    assert max(map(len, lines)) <= 80 and "…" not in result.stdout
    header = next(line for line in lines if "domain" in line)
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == ["domain", "task type", "train", "val", "test"]
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    assert [r[1] for r in rows] == list(TASK_TYPES) * len(DOMAINS)
    assert [r[0] for r in rows[::len(TASK_TYPES)]] == list(DOMAINS)
    assert rows[-1] == ["", "brainstorming", "3/3 +0", "1/1 +0", "1/1 +0"]  # law (25 papers): no reserve left


def test_check_reports_leak_and_exits_1(run, tmp_path):
    run("import", SNAPSHOT, "--out", tmp_path)
    run("assign", "--out", tmp_path, *SMALL)
    val = read_jsonl(tmp_path / "seeds" / "val.jsonl")
    moved = dict(val[0], seed_id="train-copied", doi=(val[0].get("doi") or "").upper() or None)
    with (tmp_path / "seeds" / "train.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(moved) + "\n")
    result = run("check", "--out", tmp_path)
    assert result.exit_code == 1
    assert "train:train-copied" in result.stderr and f"val:{val[0]['seed_id']}" in result.stderr
    assert "1 paper leaked across splits" in _one_error_line(result)


def test_fetch_cli_summary(run, cli_env, tmp_path):
    result = run("fetch", "--source", "arxiv", "--domain", "software_engineering", "--out", tmp_path,
                 "--max", "10", "--query", "all:testing")
    assert result.exit_code == 0, result.stderr
    assert "kept (this run)" in result.stdout and "off_domain" in result.stdout
    records = read_jsonl(tmp_path / "seeds" / "fetched" / "arxiv_software_engineering.jsonl")
    assert len(records) == 10 and records[0]["query"] == "cat:cs.SE AND (all:testing)"


def test_fetch_budget_spent_stops_cleanly(run, cli_env, tmp_path):
    cli_env.fault("openalex_list", Reply(429, b"", {"Retry-After": "86400"}),
                  when=lambda p: p.get("cursor") != "*")
    result = run("fetch", "--source", "openalex", "--domain", "law", "--out", tmp_path)
    assert result.exit_code == 0
    assert "stopped early" in result.stderr and "resume after" in result.stderr
    assert len(read_jsonl(tmp_path / "seeds" / "fetched" / "openalex_law.jsonl")) == 1


def test_fetch_api_error_is_one_line_exit_2(run, cli_env, tmp_path):
    cli_env.fault("arxiv", Reply(200, arxiv_recording("id_abc")["body"]))
    result = run("fetch", "--source", "arxiv", "--domain", "business", "--out", tmp_path)
    assert result.exit_code == 2 and "incorrect id format for abc" in _one_error_line(result)


@pytest.mark.parametrize("args, message", [
    (["--source", "pmc", "--domain", "law"], "pmc does not serve domain 'law'"),
    (["--source", "gopher", "--domain", "law"], "--source must be one of arxiv, pmc, openalex (got 'gopher')"),
    (["--source", "arxiv", "--domain", "physics"], "--domain must be one of "),
    (["--source", "arxiv", "--domain", "ml_research", "--since", "2024/01/01"], "--since must be YYYY-MM-DD"),
    (["--source", "arxiv", "--domain", "ml_research", "--doi-file", "x.txt"], "use --source openalex"),
    (["--source", "openalex", "--domain", "law", "--doi-file", "missing.txt"], "cannot read --doi-file"),
])
def test_fetch_bad_input_exit_2(run, cli_env, tmp_path, args, message):
    result = run("fetch", *args, "--out", tmp_path)
    assert result.exit_code == 2 and message in _one_error_line(result)
    assert result.stderr.endswith(_one_error_line(result) + "\n")  # no blank line after it from a bar's teardown
    assert not cli_env.requests


def test_unreachable_source_exit_1(run, tmp_path, monkeypatch):
    monkeypatch.setenv("ARXIV_API_URL", "http://127.0.0.1:9/api/query")  # nothing listens there
    monkeypatch.setenv("IOA_SYNTH_DELAY_SCALE", "0")
    result = run("fetch", "--source", "arxiv", "--domain", "ml_research", "--out", tmp_path)
    assert result.exit_code == 1 and "network failure after retries" in _one_error_line(result)


@pytest.mark.parametrize("content, message", [
    ("{not json\n", "invalid JSON"), ('{"domain": "law", "source": "arxiv", "source_id": "1", "title": "t"}\n',
                                      "missing field 'abstract'"), ("", "no records")])
def test_import_bad_file_exit_2(run, tmp_path, content, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    result = run("import", bad, "--out", tmp_path / "b")
    assert result.exit_code == 2 and message in _one_error_line(result)


def test_assign_and_check_without_catalog_exit_2(run, tmp_path):
    assert "no papers in the catalog" in _one_error_line(run("assign", "--out", tmp_path))
    assert "no seed assignment" in _one_error_line(run("check", "--out", tmp_path / "none"))
    bad = run("assign", "--out", tmp_path, "--per-cell", "train=x")
    assert bad.exit_code == 2 and "whole number" in _one_error_line(bad)


def test_registered_under_main_app():
    from typer.main import get_command

    from ioa_synth.cli import app

    assert {"fetch", "import", "assign", "check"} <= set(get_command(app).commands["seeds"].commands)
