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
