"""Atomic writes: readers see the old file or the whole new one, and the file gets the
permissions of any new file of the process (not a temporary file's 0600)."""

from __future__ import annotations

import os
import stat

import pytest

from ioa_synth.core import atomic


def test_written_file_has_the_umask_mode_not_0600(tmp_path):
    path = atomic.write_json_atomic(tmp_path / "sub" / "summary.json", {"f1": 0.5})
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # how the process creates any file
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == atomic.FILE_MODE
    assert path.read_text() == '{\n  "f1": 0.5\n}\n'


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = atomic.write_text_atomic(tmp_path / "record.json", "old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        atomic.write_text_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]
