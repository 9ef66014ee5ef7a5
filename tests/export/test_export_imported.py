"""The dataset card and Croissant file of an export say what each case is: cases the build
generated (two-stage protocol, seed papers, ``--license``) and cases brought in by ``build
import`` (from where, under their source's own licence), both in a mixed folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ioa_helpers import build

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"


def _source(tmp_path: Path, licence: str | None) -> Path:
    """A released-data folder ``ioa-suite/data/test/...`` with a dataset card stating ``licence``."""
    repo = tmp_path / "ioa-suite"
    shutil.copytree(SAMPLE, repo / "data" / "test")
    if licence:
        (repo / "README.md").write_text(f"---\nlicense: {licence}\n---\n# IoA-Suite\n", encoding="utf-8")
    return repo / "data"


def _export(cli, built: Path, to: Path) -> tuple[str, dict]:
    res = cli("export", "--out", built, "--to", to, "--splits", "test")
    assert res.exit_code == 0, res.output
    return (to / "README.md").read_text(encoding="utf-8"), json.loads((to / "croissant.json").read_text())


def test_imported_cases_keep_their_source_and_licence(cli, tmp_path):
    built = tmp_path / "b"
    assert cli("build", "import", _source(tmp_path, "cc-by-nc-4.0"), "--split", "test", "--out", built).exit_code == 0
    card, meta = _export(cli, built, tmp_path / "hub")
    header, body = card.split("\n---\n", 1)[0], card.split("\n---\n", 1)[1]
    assert "license: cc-by-nc-4.0" in header and "cc-by-4.0" not in header
    assert "pretty_name: IoA cases imported with ioa-synth (test)" in header
    assert "two-stage generate-and-judge" not in body and "grounded in a real scholarly paper" not in body
    assert "generated content is released under" not in body and "generated case(s) are released" not in body
    assert "imported with ioa-synth" in body and "`ioa-suite/data/test/software_engineering`: 1 case(s)" in body
    assert "cc-by-nc-4.0 (stated in `ioa-suite/README.md`)" in body
    assert str(tmp_path) not in card  # no local path of the user's machine in a published card
    assert meta["license"] == "cc-by-nc-4.0" and "imported with ioa-synth build import" in meta["description"]
    assert "scholarly paper" not in meta["description"]


def test_an_import_whose_source_states_no_licence_says_so(cli, tmp_path):
    built = tmp_path / "b"
    assert cli("build", "import", _source(tmp_path, None), "--split", "test", "--out", built).exit_code == 0
    card, meta = _export(cli, built, tmp_path / "hub")
    assert "license: unknown" in card.split("\n---\n", 1)[0]
    assert "not stated beside the records" in card and "released under cc-by-4.0" not in card
    assert meta["license"] == "unknown"


def test_a_mixed_folder_says_both(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    built = tmp_path / "b"
    build(cli, seeds_file(1), built)
    assert cli("build", "import", _source(tmp_path, "cc-by-nc-4.0"), "--split", "test", "--out", built).exit_code == 0
    card, meta = _export(cli, built, tmp_path / "hub")
    header = card.split("\n---\n", 1)[0]
    assert "- cc-by-4.0" in header and "- cc-by-nc-4.0" in header
    assert "pretty_name: IoA cases built and imported with ioa-synth (test)" in header
    assert "1 of the 2 cases are two-person" in card and "two-stage generate-and-judge" in card
    assert "The other 1 case(s) are records in the format of the IoA-Suite benchmark" in card
    assert "The 1 generated case(s) are released under cc-by-4.0" in card
    assert "The 1 imported case(s) keep the licence of their source" in card
    assert sorted(meta["license"]) == ["cc-by-4.0", "cc-by-nc-4.0"]
    assert "scholarly paper" in meta["description"] and "imported" in meta["description"]


def test_an_export_into_the_build_directory_is_refused(cli, tmp_path):
    # a new user exported to <build>/test/x: the card and croissant.json there were then read
    # back as cases, and evaluate and build import of the build refused it
    built = tmp_path / "b"
    assert cli("build", "import", _source(tmp_path, None), "--split", "test", "--out", built).exit_code == 0
    before = sorted(p.relative_to(built) for p in built.rglob("*"))
    for inside in (built / "test" / "x", built, built / "hub"):
        res = cli("export", "--out", built, "--to", inside, "--splits", "test")
        assert res.exit_code == 2 and res.stderr.startswith(f"error: --to {inside}: inside the build directory")
        assert len(res.stderr.strip().splitlines()) == 1
    assert sorted(p.relative_to(built) for p in built.rglob("*") if p.name != "catalog.duckdb.wal") == \
        [p for p in before if p.name != "catalog.duckdb.wal"]
