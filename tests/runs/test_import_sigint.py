"""Ctrl-C on a real ``build import`` subprocess at any moment: the import happens whole or not
at all (as many record files as catalog rows), with one ``error:`` line or the success line
and never a traceback; the same command again completes it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"


def _many_records(folder: Path, n: int) -> Path:
    source = next(SAMPLE.rglob("*.json"))
    for i in range(n):
        target = folder / "ml_research" / f"planning_{i:03d}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    return folder


def _state(out: Path) -> tuple[int, int]:
    files = len(list((out / "test").rglob("*.json"))) if (out / "test").exists() else 0
    if not (out / "catalog.duckdb").exists():
        return files, 0
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        rows = con.execute("SELECT count(*) FROM cases").fetchone()[0] if "cases" in tables else 0
    finally:
        con.close()
    return files, rows


def test_ctrl_c_during_build_import_imports_whole_or_nothing(tmp_path):
    records = _many_records(tmp_path / "records", 300)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for k, delay in enumerate((0.6, 1.0, 1.4, 1.8, 2.2, 2.8)):
        out = tmp_path / f"out{k}"
        cmd = [sys.executable, "-m", "ioa_synth", "build", "import", str(records), "--split", "test", "--out", str(out)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        assert "Traceback" not in stderr, stderr
        files, rows = _state(out)
        assert files == rows and rows in (0, 300), (delay, proc.returncode, files, rows, stderr)
        if proc.returncode == -signal.SIGINT:  # before Python had started the command, or after it ended
            assert stderr == ""
        elif proc.returncode == 130:
            # one error line (none when the signal came before the interpreter had started the command)
            assert stderr == "" or (stderr.startswith("error: ") and stderr.count("\n") == 1), (delay, stderr)
        else:
            assert proc.returncode == 0 and rows == 300, (proc.returncode, stderr)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert _state(out) == (300, 300)
        assert json.loads((out / "run.json").read_text())["kind"] == "build"


def test_a_caught_interrupt_from_string_compiled_code_exits_130_under_python_m(tmp_path):
    """A Ctrl-C that lands inside ``exec`` of a string (classes built lazily while a command runs)
    and is caught: ``python -m ioa_synth`` exits 130 with the one line, not by SIGINT."""
    (tmp_path / "interrupted_inside_exec.py").write_text(
        "import ioa_synth.cli as cli\n"
        "cli.app = lambda: exec('raise KeyboardInterrupt')\n"
        "cli.main()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-m", "interrupted_inside_exec"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (130, "error: interrupted\n")
