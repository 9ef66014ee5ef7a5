"""Faults a new user met following README from a clean clone and typing bad input: each is
one ``error:`` line (or a note) and leaves the user's files as they were."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from ioa_helpers import one_line_error

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"
ITEMS = ROOT / "samples" / "belief" / "items.jsonl"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def user_folder(tmp_path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("my notes\n")
    return folder


@pytest.mark.parametrize("command", [
    ("build", "import", str(SAMPLE), "--split", "test"),
    ("build", "--seeds", str(ROOT / "seeds" / "demo.jsonl"), "--split", "test"),
    ("evaluate", "--data", str(SAMPLE)),
    ("belief", "run", "--items", str(ITEMS)),
], ids=["build import", "build", "evaluate", "belief run"])
def test_a_run_never_writes_among_a_users_own_files(cli, user_folder, command):
    before = _tree(user_folder)
    res = cli(*command, "--out", user_folder)
    assert res.exit_code == 2
    one_line_error(res, str(user_folder), "is not empty (README.md)", "give a new or empty folder")
    assert _tree(user_folder) == before


def test_an_export_folder_is_not_a_build_directory(cli, tmp_path):
    built, published = tmp_path / "b", tmp_path / "hub"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", built).exit_code == 0
    assert cli("export", "--out", built, "--to", published, "--splits", "test").exit_code == 0
    before = _tree(published)
    res = cli("build", "import", SAMPLE, "--split", "test", "--out", published)
    one_line_error(res, "is an 'ioa-synth export' dataset folder")
    assert res.exit_code == 2 and _tree(published) == before


def test_a_folder_with_only_what_a_run_leaves_before_its_first_row_is_resumed(cli, tmp_path):
    out = tmp_path / "b"
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "embedded-server.log").write_text("started\n")
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", out).exit_code == 0


def test_the_export_folder_gets_the_usual_mode_and_an_unwritable_target_one_line(cli, tmp_path):
    built, published = tmp_path / "b", tmp_path / "hub"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", built).exit_code == 0
    assert cli("export", "--out", built, "--to", published, "--splits", "test").exit_code == 0
    assert stat.S_IMODE(published.stat().st_mode) & 0o055 == 0o055  # readable by group and others (umask 022)
    res = cli("export", "--out", built, "--to", "/proc/ioa-x/hub", "--splits", "test")
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    one_line_error(res, "--to", "/proc/ioa-x/hub")


def test_an_imported_only_card_says_none_instead_of_empty_tables(cli, tmp_path):
    built, published = tmp_path / "b", tmp_path / "hub"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", built).exit_code == 0
    assert cli("export", "--out", built, "--to", published, "--splits", "test").exit_code == 0
    card = (published / "README.md").read_text()
    assert "(none: no case was generated here)" in card and "(none: no verdict was given here)" in card
    assert "Type mix target(s): ." not in card


@pytest.mark.parametrize("command", [("belief", "items", "import", str(ITEMS), "--format", "jsonl"),
                                     ("belief", "screen", "--items", str(ITEMS))], ids=["items import", "screen"])
def test_an_items_file_out_never_replaces_a_users_file(cli, tmp_path, command):
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    res = cli(*command, "--out", precious)
    one_line_error(res, "exists and is not an items file")
    assert res.exit_code == 2 and precious.read_text() == "precious\n"


def test_an_items_file_out_is_not_its_input(cli, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_bytes(ITEMS.read_bytes())
    res = cli("belief", "screen", "--items", items, "--out", items)
    one_line_error(res, "is the input file")
    assert res.exit_code == 2 and items.read_bytes() == ITEMS.read_bytes()


@pytest.mark.parametrize("prices, needle", [
    ({"judge": {"input": 1, "output": 2, "batch": 2}}, "judge.batch: must be a share of the live price from 0 to 1"),
    ('{"judge": {"input": NaN, "output": 2}}', "judge.input: Input should be a finite number"),
])
def test_prices_that_make_no_sense_are_refused(cli, tmp_path, prices, needle):
    f = tmp_path / "prices.json"
    f.write_text(prices if isinstance(prices, str) else json.dumps(prices))
    res = cli("estimate", "evaluate", "--data", SAMPLE, "--out", tmp_path / "r", "--prices", f)
    assert res.exit_code == 2
    one_line_error(res, needle)


def test_a_price_for_a_name_the_run_does_not_have_is_said(cli, tmp_path):
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"prober": {"input": 1, "output": 2}, "probr": {"input": 1, "output": 2}}))
    res = cli("estimate", "evaluate", "--data", SAMPLE, "--out", tmp_path / "r", "--prices", f, "--json")
    assert res.exit_code == 0
    assert "note: --prices: 'probr' names no component or model of this run" in res.stderr
    assert "'prober'" not in res.stderr


def test_a_detector_config_without_a_prober_block_is_refused_by_meeting_probe(cli, tmp_path):
    session = tmp_path / "s"
    assert cli("meeting", "import", ROOT / "samples" / "meetings" / "sample.vtt", "--out", session).exit_code == 0
    res = cli("meeting", "probe", session, "--detector", f"demo={ROOT / 'config.demo.json'}")
    assert res.exit_code == 2
    one_line_error(res, 'no "prober" block')


def test_a_whisper_segment_without_a_speaker_is_called_a_segment(cli, tmp_path):
    f = tmp_path / "w.json"
    f.write_text(json.dumps({"segments": [{"start": 0, "end": 1, "text": "hello"},
                                          {"start": 1, "end": 2, "text": "hi", "speaker": "B"}]}))
    res = cli("meeting", "import", f, "--out", tmp_path / "s")
    assert res.exit_code == 2
    one_line_error(res, "segment 1 names no speaker", '"speaker" field')


def test_a_sessions_private_files_are_the_owners_alone(cli, tmp_path):
    session = tmp_path / "s"
    assert cli("meeting", "import", ROOT / "samples" / "meetings" / "sample.vtt", "--out", session).exit_code == 0
    assert stat.S_IMODE((session / "private").stat().st_mode) == 0o700
    files = list((session / "private").iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_meeting_report_refuses_the_same_session_twice(cli, tmp_path):
    session = tmp_path / "s"
    assert cli("meeting", "import", ROOT / "samples" / "meetings" / "sample.vtt", "--out", session).exit_code == 0
    res = cli("meeting", "report", session, session, "--out", tmp_path / "study")
    assert res.exit_code == 2 and not (tmp_path / "study").exists()
    one_line_error(res, "again", "give each meeting once")


def test_belief_report_points_at_the_judge_when_fpi_moves_without_an_attacker():
    from ioa_synth.belief.report import judge_check_lines

    summary = {"conditions": {"m|simpleqa|k=0": {"fpi": 1.0}, "m|popqa|k=0": {"fpi": 0.0},
                              "m|simpleqa|k=1": {"fpi": 1.0}, "m|counterfact|k=0": {"fpi": None}}}
    lines = judge_check_lines(summary)
    assert len(lines) == 1 and "m|simpleqa|k=0: FPI 100% with no attacker" in lines[0]
    assert "belief agreement" in lines[0]


def test_a_build_whose_run_json_does_not_read_is_read_with_a_warning_and_refused_for_writing(cli, tmp_path):
    """status and show read a build from its catalog and say its run.json is broken; a command
    that writes the folder names the broken file instead of calling the build someone else's."""
    out = tmp_path / "b"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", out).exit_code == 0
    (out / "run.json").write_text('{"kind": "build", oops')
    for command in (("status",), ("show",)):
        res = cli(*command, "--out", out)
        assert res.exit_code == 0, res.output
        warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning: ")]
        assert len(warnings) == 1 and "run.json: invalid JSON" in warnings[0], res.stderr
    before = _tree(out)
    res = cli("build", "import", SAMPLE, "--split", "test", "--out", out)
    one_line_error(res, "run.json: invalid JSON", "repair it")
    assert _tree(out) == before


def test_evaluate_of_a_build_with_no_accepted_case_says_so_and_where_cases_go(cli, tmp_path):
    """A new user gave evaluate the demo build that had accepted nothing (2026-12-07)."""
    import shutil

    out = tmp_path / "demo"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", out).exit_code == 0
    shutil.rmtree(out / "test")  # as after a build whose cases were all discarded
    res = cli("evaluate", "--data", out, "--out", tmp_path / "eval")
    one_line_error(res, "is a build directory with no accepted case", f"--data {out / 'test'}")
    assert not (tmp_path / "eval").exists()
