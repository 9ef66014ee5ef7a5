"""Every script in ``scripts/`` still imports what it uses: a runnable one answers ``--help``
with exit 0, a helper module imports.

The benchmarks import the toolkit's internals (stage specs, endpoints, the embedded server)
and are run by hand, so a move inside the package would otherwise break them unseen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS_DIR = Path(__file__).resolve().parents[2] / "scripts"
SCRIPTS = sorted(SCRIPTS_DIR.glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_script_imports(script: Path) -> None:
    if '__name__ == "__main__"' in script.read_text(encoding="utf-8"):
        cmd = [sys.executable, str(script), "--help"]
    else:
        cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(SCRIPTS_DIR)!r}); import {script.stem}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=SCRIPTS_DIR.parent)
    assert res.returncode == 0, res.stderr[-2000:]
