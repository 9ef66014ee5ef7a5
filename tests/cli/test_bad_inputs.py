"""Bad input a new user meets, black-box through the CLI: each gets one ``error:`` line that
names the path or value, exit 2, and leaves nothing half-written (no empty catalog, no
stranded folder); a UTF-8 byte-order mark is accepted in every input file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ioa_helpers import one_line_error

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"
BOM = "\ufeff"


def _exit2(res, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.stderr)
    line = one_line_error(res, *needles)
    assert "Traceback" not in res.stderr
    return line


@pytest.mark.parametrize("where", ["inside", "itself"])
@pytest.mark.parametrize("remote", [True, False])
def test_build_into_a_read_only_folder(cli, endpoint, seeds_file, read_only, where, remote):
    if remote:
        endpoint()
    ro = read_only()
    out = ro / "demo" if where == "inside" else ro
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out)
    _exit2(res, str(out))
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize("remote", [True, False])  # False: refused before the embedded model would start
def test_evaluate_into_a_read_only_folder(cli, endpoint, read_only, remote):
    if remote:
        endpoint()
    ro = read_only()
    res = cli("evaluate", "--data", SAMPLE, "--out", ro / "ev", "--limit", "1")
    _exit2(res, str(ro / "ev"))
    assert list(ro.iterdir()) == []


def test_folder_names_that_are_not_utf8(tmp_path, seeds_file):
    folder = os.fsencode(tmp_path) + b"/lat\xe9"
    os.mkdir(folder)
    seeds = folder + b"/s.jsonl"
    shutil.copy(seeds_file(1), seeds)
    out = folder + b"/o"
    res = subprocess.run([sys.executable, "-m", "ioa_synth", "build", "--seeds", seeds, "--split", "test",
                          "--out", out], capture_output=True, timeout=120, cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert "lat\\xe9" in err and "UTF-8" in err
    assert sorted(os.listdir(folder)) == [b"s.jsonl"]  # no folder left behind


def test_evaluate_refuses_a_folder_of_imported_seeds(cli, tmp_path):
    out = tmp_path / "pool"
    assert cli("seeds", "import", ROOT / "seeds" / "snapshot.jsonl", "--out", out).exit_code == 0
    manifest = (out / "run.json").read_bytes()  # the build directory's own (kind build)
    res = cli("evaluate", "--data", SAMPLE, "--out", out)
    _exit2(res, str(out), "build")
    assert (out / "run.json").read_bytes() == manifest and b'"kind": "build"' in manifest  # evaluate wrote none
    res = cli("status", "--out", out)  # the folder is still a build directory, with nothing built yet
    assert res.exit_code == 0 and "(no case judged yet)" in res.stdout and "(no calls yet)" in res.stdout


@pytest.fixture
def built(cli, endpoint, seeds_file, tmp_path) -> Path:
    endpoint()
    out = tmp_path / "b"
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1").exit_code == 0
    return out


def test_annotate_report_checks_its_split_as_the_other_commands_do(cli, built):
    res = cli("annotate", "report", "--out", built, "--split", "foo")
    assert _exit2(res) == "error: --split must be one of train, val, test (got 'foo')"


@pytest.mark.parametrize("sql", [
    "COPY cases TO '{x}.csv'",
    "COPY (SELECT 1) TO '{x}.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{x}'",
    "ATTACH '{x}.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SELECT * FROM read_csv('{seeds}')",
    "SELECT * FROM '{seeds}'",
])
def test_sql_reads_only_the_catalog(cli, built, tmp_path, sql):
    target = tmp_path / "leak"
    query = sql.format(x=target, seeds=ROOT / "seeds" / "demo.jsonl")
    res = cli("sql", built, query)
    _exit2(res)
    assert not any(p.name.startswith("leak") for p in tmp_path.iterdir())


def test_sql_still_answers_queries(cli, built):
    res = cli("sql", built, "SELECT count(*) AS n FROM cases", "--csv")
    assert res.exit_code == 0 and res.stdout == "n\n1\n"
    assert cli("sql", built, "DESCRIBE cases").exit_code == 0


def test_sql_on_a_table_that_is_not_there_lists_the_tables(cli, built):
    res = cli("sql", built, "SELECT count(*) FROM calls")  # the calls table is llm_calls
    _exit2(res)
    assert "tables here: " in res.stderr and "llm_calls" in res.stderr.split("tables here: ")[1]


def test_a_bom_is_accepted_in_every_input_file(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    seeds = seeds_file(1)
    seeds.write_text(BOM + seeds.read_text(encoding="utf-8"), encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(BOM + json.dumps({"generator": {"temperature": 0.5}}), encoding="utf-8")
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", tmp_path / "b", "--config", config)
    assert res.exit_code == 0, res.stderr
    papers = tmp_path / "papers.jsonl"
    papers.write_text(BOM + (ROOT / "seeds" / "snapshot.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    assert cli("seeds", "import", papers, "--out", tmp_path / "pool").exit_code == 0
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    case = next(data.rglob("*.json"))
    case.write_text(BOM + case.read_text(encoding="utf-8"), encoding="utf-8")
    from ioa_synth.evaluate.inputs import load_cases

    assert len(load_cases(data)) == 1


@pytest.mark.parametrize("config, needles", [
    ({"generator": {"temprature": 0.5}}, ['generator.temprature: unknown key', 'did you mean "temperature"',
                                          "valid keys: model, temperature"]),
    ({"genrator": {"temperature": 0.5}}, ['genrator: unknown component', 'did you mean "generator"',
                                          "valid components: generator, judge"]),
])
def test_config_typos_list_the_valid_names(cli, seeds_file, tmp_path, config, needles):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "b", "--config", path)
    _exit2(res, str(path), *needles)
    assert not (tmp_path / "b").exists()


def test_a_blank_url_is_called_blank(cli, seeds_file, tmp_path, monkeypatch):
    monkeypatch.setenv("GENERATOR_BASE_URL", "   ")
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "b")
    _exit2(res, "GENERATOR_BASE_URL", "blank")
    assert not (tmp_path / "b").exists()


def test_evaluate_refuses_a_case_without_turns(cli, endpoint, tmp_path):
    endpoint()
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    case = next(data.rglob("*.json"))
    record = json.loads(case.read_text(encoding="utf-8"))
    record["dialogue"]["turns"] = []
    case.write_text(json.dumps(record), encoding="utf-8")
    _exit2(cli("evaluate", "--data", data, "--out", tmp_path / "ev"), str(case), "dialogue.turns", "no turns")
    assert not (tmp_path / "ev").exists()


def test_evaluate_refuses_a_folder_holding_several_splits(cli, endpoint, tmp_path):
    endpoint()
    data = tmp_path / "released"
    for split in ("test", "val"):
        shutil.copytree(SAMPLE, data / split)
    _exit2(cli("evaluate", "--data", data, "--out", tmp_path / "ev"), "2 splits (test/, val/)",
           f"--data {data / 'test'}")
    assert not (tmp_path / "ev").exists()


def test_a_setup_error_leaves_no_empty_catalog(cli, seeds_file, tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused-0000")
    out = tmp_path / "new" / "b"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out)
    _exit2(res, "cannot reach")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("args", [("audit", "--out", "{nope}", "--split", "test"),
                                  ("regenerate", "--out", "{nope}"),
                                  ("audit", "--out", "{built}", "--split", "val"),
                                  ("regenerate", "--out", "{built}", "--case", "test/law/planning_999")])
def test_embedded_runs_refuse_bad_input_before_the_workers_note(cli, built, tmp_path, monkeypatch, args):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):  # the embedded model: --workers 4 would be lowered
        monkeypatch.delenv(var, raising=False)
    args = [a.format(nope=tmp_path / "nope", built=built) for a in args]
    res = cli(*args)
    _exit2(res)  # the error line alone: no "note: --workers ... lowered" before it
    assert "note:" not in res.stderr and not (tmp_path / "nope").exists()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_report_and_compare_name_a_build_directory(cli, built, command):
    res = cli(command, built, *([built] if command == "compare" else []))
    line = _exit2(res, "'ioa-synth build' directory", "ioa-synth evaluate")
    assert "missing" not in line


def test_a_folder_in_use_gives_its_error_alone(cli, built, seeds_file, monkeypatch):
    """Another process holds the catalog: build says so in one line, without the workers note
    first (the note is said once the catalog is open)."""
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(built / "catalog.duckdb")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):  # the embedded model: --workers 4 would be lowered
            monkeypatch.delenv(var, raising=False)
        res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", built, "--workers", "4")
        _exit2(res, "in use")
        assert "note:" not in res.stderr
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("kind", ["evaluate case", "meeting transcript", "seed papers", "config", "belief items"])
def test_a_utf16_file_is_not_utf8_text_for_every_reader(cli, endpoint, tmp_path, kind):
    """Every reader of a user's file says a UTF-16 file (what Windows tools save as
    "Unicode") is not UTF-8, through one helper: evaluate called it "not valid JSON" or took
    it (json.loads on bytes guesses UTF-16), belief items import ended in a traceback."""
    endpoint()  # nothing may be called; an endpoint so that no embedded model could start
    where = tmp_path / "data"
    where.mkdir()
    source = {"evaluate case": next(SAMPLE.rglob("*.json")), "meeting transcript": ROOT / "samples" / "meetings" / "standup.txt",
              "seed papers": ROOT / "seeds" / "snapshot.jsonl", "config": ROOT / "config.example.json",
              "belief items": ROOT / "samples" / "belief" / "items.jsonl"}[kind]
    path = where / source.name
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-16")
    out = tmp_path / "out"
    args = {"evaluate case": ("evaluate", "--data", where, "--out", out),
            "meeting transcript": ("meeting", "import", path, "--out", out),
            "seed papers": ("seeds", "import", path, "--out", out),
            "config": ("evaluate", "--data", SAMPLE, "--out", out, "--config", path),
            "belief items": ("belief", "items", "import", path, "--format", "jsonl", "--out", out / "items.jsonl")}[kind]
    assert _exit2(cli(*args)) == f"error: {path}: not UTF-8 text (it is UTF-16); save it as UTF-8"
    assert not out.exists()
    path.write_bytes(source.read_text(encoding="utf-8").replace("a", "\xe9", 1).encode("latin-1", "replace"))
    assert f"error: {path}: not UTF-8 text (byte " in _exit2(cli(*args))


@pytest.mark.parametrize("kind", ["type mix", "evaluate run.json", "belief run.json", "annotation CSV"])
def test_a_utf16_file_read_by_the_later_commands_says_so_too(cli, built, tmp_path, kind):
    """The same UTF-16 line from the readers the first test leaves out: ``--type-mix`` ended
    in a traceback, report/compare and belief report said "cannot read ('utf-8' codec ...)"
    or "unreadable (...)", and annotate import blamed a UTF-16 CSV's columns."""
    folder = tmp_path / "f"
    folder.mkdir()
    name = {"type mix": "mix.json", "annotation CSV": "scores.csv"}.get(kind, "run.json")
    path = folder / name
    path.write_text({"type mix": '{"goal": 1}', "annotation CSV": "item_id,score\nx,1\n"}.get(kind, "{}"),
                    encoding="utf-16")
    where = f"--type-mix {path}" if kind == "type mix" else str(path)
    args = {"type mix": ("build", "--seeds", ROOT / "seeds" / "snapshot.jsonl", "--split", "test",
                         "--out", tmp_path / "new", "--type-mix", path),
            "evaluate run.json": ("report", folder), "belief run.json": ("belief", "report", folder),
            "annotation CSV": ("annotate", "import", path, "--out", built, "--annotator", "a1")}[kind]
    assert _exit2(cli(*args)) == f"error: {where}: not UTF-8 text (it is UTF-16); save it as UTF-8"
    assert not (tmp_path / "new").exists() and sorted(p.name for p in folder.iterdir()) == [name]


@pytest.mark.parametrize("kind", ["evaluate case", "meeting transcript", "seed papers", "config", "belief items",
                                  "type mix"])
def test_text_that_is_not_json_reads_the_same_for_every_reader(cli, endpoint, tmp_path, kind):
    """A file that is not JSON gets one wording from every command, naming where the decoder
    stopped (build said "invalid JSON at line", evaluate "not valid JSON (...)", belief "not
    JSON" or "not a JSON line"); a JSONL line is named ``path:N`` and only its column given."""
    endpoint()
    where = tmp_path / "data"
    where.mkdir()
    name = {"evaluate case": "case.json", "meeting transcript": "talk.json", "seed papers": "papers.jsonl",
            "config": "config.json", "belief items": "items.jsonl", "type mix": "mix.json"}[kind]
    path = where / name
    path.write_text('\n{"b": 2,,}\n' if name.endswith(".jsonl") else '{\n  "a": 1,\n}\n')
    out = tmp_path / "out"
    args = {"evaluate case": ("evaluate", "--data", where, "--out", out),
            "meeting transcript": ("meeting", "import", path, "--out", out),
            "seed papers": ("seeds", "import", path, "--out", out),
            "config": ("evaluate", "--data", SAMPLE, "--out", out, "--config", path),
            "belief items": ("belief", "items", "import", path, "--format", "jsonl", "--out", out / "items.jsonl"),
            "type mix": ("build", "--seeds", ROOT / "seeds" / "snapshot.jsonl", "--split", "test", "--out", out,
                         "--type-mix", path)}[kind]
    at = f"{path}:2: invalid JSON at column 9: " if name.endswith(".jsonl") else \
        f"{path}: invalid JSON at line 3, column 1: "
    if kind == "type mix":
        at = f"--type-mix {path}: invalid JSON at line 3, column 1: "
    assert _exit2(cli(*args)).startswith(f"error: {at}")
    assert not out.exists()


@pytest.mark.parametrize("name", ["missing.csv", "missing.json", "folder.csv"])
def test_annotate_import_of_a_file_that_is_not_there_says_so_once(cli, built, tmp_path, name):
    (tmp_path / "folder.csv").mkdir()
    res = cli("annotate", "import", tmp_path / name, "--out", built, "--annotator", "a1")
    assert res.exit_code != 0 and res.stderr.startswith("error: ")
    assert len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.count(str(tmp_path / name)) == 1 and "os error" not in res.stderr
    assert ("is a directory" if name == "folder.csv" else "no such file") in res.stderr
