"""``ioa-synth table``: the list of ids, the refusals (one ``error:`` line, exit 2) and the
four output formats of one table value."""

from __future__ import annotations

import io

import polars as pl
import pytest

from ioa_synth.tables.formats import latex_escape, render
from ioa_synth.tables.model import PaperTable
from ioa_synth.tables.registry import all_specs


def test_list_names_every_paper_id_and_says_which_are_implemented(cli):
    res = cli("table", "--list", "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}
    assert {f"ioa-{n}" for n in range(1, 28)} <= set(rows)
    assert {"belief-3", "belief-fig4"} <= set(rows)
    assert rows["ioa-12"]["implemented"] == "yes" and "evaluate" in rows["ioa-12"]["needs"]
    assert rows["ioa-12"]["made by"].startswith("ioa-synth evaluate")
    assert rows["ioa-8"]["implemented"].startswith("no: ")
    assert rows["ioa-15"]["implemented"] == "yes" and "configs/paper-models.json" in rows["ioa-15"]["needs"]
    assert all(r["implemented"] == "yes" or r["implemented"].startswith("no: ") for r in rows.values())
    shown = cli("table", "--list")
    assert shown.exit_code == 0 and "ioa-27" in shown.stdout


@pytest.mark.parametrize("args, needle", [
    (("ioa-99",), "unknown table id 'ioa-99'"),
    (("ioa-4", "x"), "ioa-4 is not implemented yet: "),
    (("ioa-12",), "ioa-12 needs 1+ × 'ioa-synth evaluate' results folder"),
    ((), "give a table ID"),
    (("--list", "ioa-1"), "--list takes no ID"),
    (("ioa-1", "x", "--format", "pdf"), "--format must be one of term, md, csv, latex"),
])
def test_bad_input_is_one_error_line(cli, args, needle):
    res = cli("table", *args)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1 and needle in res.stderr


def test_folders_of_another_kind_or_missing(cli, tmp_path):
    res = cli("table", "ioa-1", tmp_path / "nope")
    assert res.exit_code == 2 and "not a folder; ioa-1 needs" in res.stderr
    res = cli("table", "ioa-1", tmp_path, tmp_path / "." )
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "is given twice" in res.stderr
    res = cli("table", "ioa-21", tmp_path)  # an empty folder: no kind
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "a folder of no known kind; ioa-21 needs" in res.stderr


def test_every_unimplemented_id_says_what_is_missing():
    for s in all_specs():
        assert s.implemented or s.missing, s.table_id


T = PaperTable("t", "Table 0: a 50% cut & more", ["name", "P (%)", "note"],
               [["a_b", "43.3†", "x, \"y\""], ["c|d", "–", "#1"]], ["a note"])


def test_formats_keep_every_cell():
    csv = render(T, "csv")
    assert pl.read_csv(io.StringIO(csv)).rows() == [("a_b", "43.3†", 'x, "y"'), ("c|d", "–", "#1")]
    md = render(T, "md")
    assert md.startswith("## Table 0") and "c\\|d" in md and "a note" in md
    tex = render(T, "latex")
    assert r"\caption{Table 0: a 50\% cut \& more}" in tex and r"a\_b & 43.3\textdagger{} & x, " in tex
    assert r"c|d & -- & \#1 \\" in tex
    assert r"\begin{tabular}{lrr}" in tex
    assert "43.3†" in render(T, "term")
    assert latex_escape("~^\\") == r"\textasciitilde{}\textasciicircum{}\textbackslash{}"
    assert latex_escape("ΔPass@1 within ±0.5") == r"$\Delta$Pass@1 within $\pm$0.5"
    with pytest.raises(ValueError):
        PaperTable("t", "x", ["a", "a"], [])
    with pytest.raises(ValueError):
        PaperTable("t", "x", ["a", "b"], [["1"]])


def test_out_writes_the_file(cli, tmp_path):
    target = tmp_path / "list.tex"
    res = cli("table", "--list", "--format", "latex", "--out", target)
    assert res.exit_code == 0 and target.read_text().startswith("\\begin{table}")
    res = cli("table", "--list", "--out", tmp_path)
    assert res.exit_code == 2 and "is a folder" in res.stderr


def test_an_existing_file_is_never_replaced_without_overwrite(cli, tmp_path):
    mine = tmp_path / "README.md"
    mine.write_text("a user's own notes\n")
    res = cli("table", "--list", "--format", "md", "--out", mine)
    assert res.exit_code == 2 and "exists" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert mine.read_text() == "a user's own notes\n"
    res = cli("table", "--list", "--format", "md", "--out", mine, "--overwrite")
    assert res.exit_code == 0 and "| id" in mine.read_text()


def test_out_that_cannot_be_written_is_one_line(cli, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    res = cli("table", "--list", "--format", "md", "--out", blocker / "list.md")
    assert res.exit_code == 2 and res.stderr.startswith("error: cannot write") and res.stderr.count("\n") == 1
    assert blocker.read_text() == "x"


def test_a_catalog_held_by_a_run_is_one_line(cli, tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "build"
    folder.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('ready', flush=True); time.sleep(60)", str(folder / "catalog.duckdb")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        res = cli("table", "ioa-9", folder)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "in use by another" in res.stderr
    finally:
        holder.kill()
        holder.wait()


def test_docs_name_every_id():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "tables.md").read_text(encoding="utf-8")
    implemented = [s.table_id for s in all_specs() if s.implemented]
    assert [i for i in implemented if f"| `{i}` |" not in text] == []  # each implemented id has its row
    for s in all_specs():
        if not s.implemented:
            assert f"`{s.table_id}`" in text or s.table_id in ("ioa-26",), s.table_id  # 25-27 as a range
