"""``status`` reads every kind of folder the toolkit writes, and a build while it runs; its
errors say what is wrong with the folder (a damaged catalog is not a write error, a file
is not a results folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ioa_helpers import build, one_line_error

ROOT = Path(__file__).resolve().parent.parent


def test_a_damaged_catalog_is_said_to_be_unreadable_not_unwritable(cli, tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    (out / "catalog.duckdb").write_bytes(b"not a duckdb file " * 400)
    for extra in ((), ("--json",)):
        line = one_line_error(cli("status", "--out", out, *extra), "cannot read", "catalog.duckdb", "damaged")
        assert "cannot write" not in line


@pytest.mark.parametrize("command", [("collab", "report"), ("belief", "report")])
def test_a_report_of_a_file_says_it_is_a_file(cli, tmp_path, command):
    afile = tmp_path / "results.txt"
    afile.write_text("x\n")
    line = one_line_error(cli(*command, afile), str(afile), "is not a folder")
    assert "no such" not in line
    one_line_error(cli(*command, tmp_path / "missing"), "no such results folder")
