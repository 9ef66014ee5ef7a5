"""scripts/setup.sh installs bigcodebench --no-deps (its checker needs none of the vllm, e2b
and provider SDKs it declares), so every later pip install printed pip's red resolver ERROR
listing them, unexplained. That block, naming bigcodebench alone, becomes one line saying it is
expected; any other conflict, and pip's exit status, stay as they were."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are "
          "installed. This behaviour is the source of the following dependency conflicts.")
EXPECTED = [HEADER, "bigcodebench 0.2.5 requires vllm, which is not installed.",
            "bigcodebench 0.2.5 requires e2b, which is not installed."]
OTHER = "torch 2.13.0 requires sympy>=1.13, but you have sympy 1.12 which is incompatible."

pytestmark = pytest.mark.skipif(shutil.which("awk") is None or shutil.which("bash") is None,
                                reason="needs bash and awk, as setup.sh does")


def _pip_install(tmp_path: Path, output: list[str], status: int) -> subprocess.CompletedProcess:
    """Run setup.sh's own ``pip_install`` function against a fake ``.venv/bin/pip``."""
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    function = re.search(r"^pip_install\(\) \{\n.*?^\}\n", setup, re.S | re.M).group(0)
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "pip_expected_conflicts.awk", tmp_path / "scripts")
    pip = tmp_path / ".venv" / "bin" / "pip"
    pip.parent.mkdir(parents=True)
    pip.write_text("#!/bin/sh\ncat <<'EOF' >&2\n" + "\n".join(output) + f"\nEOF\nexit {status}\n")
    pip.chmod(0o755)
    script = f"set -uo pipefail\n{function}pip_install -e .\necho \"status=$?\"\n"
    return subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)


def test_the_expected_bigcodebench_block_is_one_line(tmp_path):
    done = _pip_install(tmp_path, ["Collecting x", *EXPECTED, "Successfully installed x-1"], 0)
    lines = done.stdout.splitlines()
    assert "ERROR" not in done.stdout and done.stdout.count("bigcodebench") == 1
    assert lines[0] == "Collecting x" and "expected, it is installed --no-deps" in lines[1]
    assert lines[2:] == ["Successfully installed x-1", "status=0"]


def test_a_real_conflict_and_a_failure_stay_visible(tmp_path):
    done = _pip_install(tmp_path, [*EXPECTED, OTHER, "ERROR: No matching distribution found for y"], 1)
    assert done.stdout.splitlines() == [*EXPECTED, OTHER, "ERROR: No matching distribution found for y",
                                        "status=1"]


def test_every_pip_install_of_setup_goes_through_the_filter():
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    direct = [ln for ln in setup.splitlines() if ".venv/bin/pip install" in ln and "\"$@\"" not in ln]
    assert direct == [] and setup.count("pip_install ") >= 4
