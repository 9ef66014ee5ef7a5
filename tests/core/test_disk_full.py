"""A disk that fills up mid-run (ENOSPC, EFBIG), simulated at the write layer (the journal's
``os.write``, the atomic writer's ``fsync``): one ``error:`` line naming the file and what to
do, exit 1, and the next run recovers. Also: ``report`` writes all its files or none, and
``audit`` exits 1 when some stage could not be scored."""

from __future__ import annotations

import errno
import os

from ioa_helpers import q

from ioa_synth.testing.scripted_server import ProtocolResponder


class FullDisk:
    """Stands in for the ``os`` module of one writer: ``fail`` (``write`` or ``fsync``) raises
    ``code`` from its ``after + 1``-th call on; everything else is the real ``os``."""

    def __init__(self, fail: str, after: int, code: int = errno.ENOSPC) -> None:
        self.fail, self.after, self.code, self.calls = fail, after, code, 0

    def __getattr__(self, name):
        real = getattr(os, name)
        if name != self.fail:
            return real

        def failing(*args):
            self.calls += 1
            if self.calls > self.after:
                raise OSError(self.code, os.strerror(self.code))
            return real(*args)

        return failing


def error_lines(res) -> list[str]:
    assert "Traceback" not in res.output
    return [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]


def build(cli, seeds, out):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")


def test_full_disk_in_the_catalog_journal_is_one_line_then_the_next_run_recovers(cli, endpoint, seeds_file,
                                                                                  tmp_path, monkeypatch):
    endpoint()
    seeds, out = seeds_file(3), tmp_path / "out"
    monkeypatch.setattr("ioa_synth.runs.journal.os", FullDisk("write", after=6))
    res = build(cli, seeds, out)
    assert res.exit_code == 1
    (line,) = error_lines(res)
    assert line.startswith(f"error: cannot write {out / 'catalog.journal'}: No space left on device; free space")
    assert "run the same command again to resume" in line
    monkeypatch.setattr("ioa_synth.runs.journal.os", os)  # space freed
    res = build(cli, seeds, out)
    assert res.exit_code == 0, res.output
    assert [s for (s,) in q(out, "SELECT status FROM cases")] == ["accepted"] * 3


def test_file_too_large_for_a_record_names_the_record(cli, endpoint, seeds_file, tmp_path, monkeypatch):
    endpoint()
    seeds, out = seeds_file(2), tmp_path / "out"
    # a record is staged without fsync (the catalog's writer syncs it): fail the staging's last step
    monkeypatch.setattr("ioa_synth.core.atomic.os", FullDisk("fchmod", after=0, code=errno.EFBIG))
    res = build(cli, seeds, out)
    assert res.exit_code == 1
    (line,) = error_lines(res)
    assert line.startswith("error: cannot write ") and "File too large" in line and str(out) in line
    assert not list(out.rglob("*.tmp"))  # no temporary file left behind
    monkeypatch.setattr("ioa_synth.core.atomic.os", os)
    res = build(cli, seeds, out)
    assert res.exit_code == 0, res.output


def test_report_writes_all_its_files_or_none(cli, tmp_path, monkeypatch):
    from evaluate.analysis.factory import case_studies, write_results

    results = write_results(tmp_path / "run", case_studies())
    monkeypatch.setattr("ioa_synth.core.atomic.os", FullDisk("fsync", after=2))  # json, md staged; png fails
    res = cli("report", results)
    assert res.exit_code == 1
    (line,) = error_lines(res)
    assert "report_domain.png: No space left on device" in line
    reports = results / "reports"
    assert not reports.exists() or sorted(p.name for p in reports.iterdir()) == []
    monkeypatch.setattr("ioa_synth.core.atomic.os", os)
    res = cli("report", results)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in reports.iterdir()) == ["report_domain.json", "report_domain.md", "report_domain.png"]


def test_audit_exits_1_when_some_stage_could_not_be_scored(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    out = tmp_path / "out"
    assert build(cli, seeds_file(2), out).exit_code == 0
    server.responder = ProtocolResponder(script={"stage1_judge": ["badjson"] * 3})
    res = cli("audit", "--out", out, "--split", "test", "--workers", "1")
    assert res.exit_code == 1, res.output
    assert "1 stage(s) could not be scored; run the same command again" in res.stderr
    server.responder = ProtocolResponder()
    res = cli("audit", "--out", out, "--split", "test", "--workers", "1")
    assert res.exit_code == 0, res.output
