"""A build directory copied, moved or read from another working directory reads its own
records: ``cases.path`` holds the path as the writing command was given it (relative to
the directory it ran in), so readers find a record from the folder and the case id."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"


def test_a_copied_build_folder_reads_its_own_records_from_anywhere(cli, tmp_path, monkeypatch):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    assert cli("build", "import", SAMPLE.resolve(), "--split", "test", "--out", "data/d1").exit_code == 0
    copy = tmp_path / "copy"
    shutil.copytree(work / "data" / "d1", copy)
    record = next(copy.glob("test/**/*.json"))
    data = json.loads(record.read_text())
    data["dialogue"]["turns"][0]["utterance"] = "HAND EDITED in the copy"
    record.write_text(json.dumps(data))
    monkeypatch.chdir(elsewhere)  # data/d1 means nothing here
    res = cli("export", "--out", copy, "--to", tmp_path / "export")
    assert res.exit_code == 0, res.output
    exported = "".join(p.read_text() for p in (tmp_path / "export").rglob("*.jsonl"))
    assert "HAND EDITED in the copy" in exported
    status = json.loads(cli("status", "--out", copy, "--json").stdout)
    types = status["ma_types"]["test"]
    assert types["unreadable_records"] == 0
    assert types["points"] + types["untyped"] == len(data["profiles"]["misalignment_points"])
    case_id = str(record.relative_to(copy).with_suffix(""))
    shown = cli("show", "--out", copy, case_id)
    assert shown.exit_code == 0, shown.output
    assert "HAND EDITED in the copy" in shown.stdout
