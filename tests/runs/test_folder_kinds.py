"""Output folders of different commands never mix: each command refuses another's folder
with one `error:` line and writes nothing into it."""

from __future__ import annotations

import json

from ioa_helpers import one_line_error


def _belief_folder(path):
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"command": "belief run", "settings": {}}), encoding="utf-8")
    return path


def _evaluate_folder(path):
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"command": "evaluate", "fingerprint_parts": {}}), encoding="utf-8")
    return path


def test_belief_run_refuses_an_evaluate_results_folder(cli, tmp_path):
    out = _evaluate_folder(tmp_path / "ev")
    before = sorted(p.name for p in out.iterdir())
    res = cli("belief", "run", "--items", "samples/belief/items.jsonl", "--out", out, "--limit", "1")
    assert res.exit_code == 2
    one_line_error(res, "evaluate", "results folder")
    assert sorted(p.name for p in out.iterdir()) == before


def test_evaluate_and_build_commands_refuse_a_belief_results_folder(cli, tmp_path, seeds_file):
    out = _belief_folder(tmp_path / "bel")
    res = cli("evaluate", "--data", "samples/evaluate/test", "--out", out)
    assert res.exit_code == 2
    one_line_error(res, "belief run")
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out)
    assert res.exit_code == 2
    one_line_error(res, "belief run")
    res = cli("status", "--out", out)  # status reads every kind of folder, and writes nothing
    assert res.exit_code == 0 and "belief run" in res.stdout
    assert sorted(p.name for p in out.iterdir()) == ["run.json"]


def test_build_directory_commands_refuse_a_meeting_session(cli, tmp_path, seeds_file):
    """``seeds import`` wrote a catalog into a session folder and ``build`` went on to the
    endpoint; like ``evaluate``, every build-directory command now refuses the session."""
    session = tmp_path / "session"
    assert cli("meeting", "import", "samples/meetings/standup.txt", "--out", session).exit_code == 0
    before = sorted(p.name for p in session.iterdir())
    for args in (("seeds", "import", "seeds/snapshot.jsonl", "--out", session),
                 ("build", "--seeds", seeds_file(1), "--split", "test", "--out", session),
                 ("show", "--out", session), ("export", "--out", session, "--to", tmp_path / "pub")):
        res = cli(*args)
        assert res.exit_code == 2, (args, res.stderr)
        one_line_error(res, f"--out {session} is a live-meeting session folder, not a build directory")
    assert sorted(p.name for p in session.iterdir()) == before
