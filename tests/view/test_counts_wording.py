"""The viewer's counts read as English for one item: '1 case.', not '1 cases.' (a researcher
opening the shipped sample, imported into a build directory, sees exactly that page)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from .conftest import start_view, stop

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_one_case_and_one_match_are_singular(cli, tmp_path):
    out = tmp_path / "imported"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", out).exit_code == 0
    proc, url = start_view(out)
    try:
        page = _text(httpx.get(url + "/f/0/").text)
        assert "1 case." in page and "1 cases" not in page, page
        page = _text(httpx.get(url + "/f/0/", params={"status": "accepted"}).text)
        assert "1 case matches." in page, page
    finally:
        stop(proc)


def test_a_meeting_session_counts_forms_as_status_does(cli, tmp_path):
    """The index's progress of a session counts its answer and label forms (one each per
    participant), as 'status --out SESSION' does; answers alone read '3 / 3' while the labels
    were still missing."""
    from ioa_synth.view.read.folders import open_library, summary

    session = tmp_path / "session"
    assert cli("meeting", "import", "samples/meetings/sample.vtt", "--out", session).exit_code == 0
    lib = open_library([session])
    try:
        row = summary(lib.folders[0], lib.catalog)
    finally:
        lib.close()
    assert (row["done"], row["total"]) == (0, 6)
    import json

    status = json.loads(cli("status", "--out", session, "--json").stdout)["progress"]
    assert sum(g["total"] for g in status["groups"]) == row["total"]


def test_an_evaluate_run_whose_cases_all_failed_shows_none_done(tmp_path):
    """A failed case has a record too; the index counts cases scored (as the run's summary
    does), so a run whose one case failed reads 0 / 1, not 1 / 1."""
    import json
    import shutil

    from ioa_synth.view.read.folders import open_library, summary

    folder = tmp_path / "eval"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "folders_r0" / "evaluate", folder)
    data = json.loads((folder / "summary.json").read_text())
    data["cases"] = {"requested": 1, "scored": 0, "failed": 1}
    (folder / "summary.json").write_text(json.dumps(data))
    lib = open_library([folder])
    try:
        row = summary(lib.folders[0], lib.catalog)
    finally:
        lib.close()
    assert (row["done"], row["total"]) == (0, 1)
