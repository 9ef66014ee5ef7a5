"""The package's layers (docs/architecture.md) hold: core -> llm -> runs -> capabilities -> cli,
each importing only from below (the import-linter contract in pyproject.toml), and no two
top-level packages import each other, even through a third."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_no_import_cycle_between_packages():
    graph = grimp.build_graph("ioa_synth")
    packages = sorted(m for m in graph.modules if m.count(".") == 1 and graph.find_children(m))
    cycles = []
    for a in packages:
        for b in packages:
            if a < b and graph.chain_exists(a, b, as_packages=True) and graph.chain_exists(b, a, as_packages=True):
                cycles.append(f"{a} <-> {b}")
    assert not cycles, cycles
