"""Every command prints under an output encoding that cannot show its text: a Windows
console (``PYTHONIOENCODING=cp1252``: no "−", "∑" or "θ") and the C locale without UTF-8
mode (``LC_ALL=C PYTHONUTF8=0``: ASCII only). Each command runs as a real subprocess; the
cp1252 workspace's folder name holds characters cp1252 lacks, so every "wrote <path>" line
meets them too. Characters that cannot be shown become "?" instead of a UnicodeEncodeError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import real_seed_tuples
from evaluate.eval_helpers import KEYS, STUDY_1, Study, released_case, write_case
from evaluate.analysis.factory import case_studies, write_results
from ioa_helpers import KEY
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

ENCODINGS = {
    "cp1252": {"PYTHONIOENCODING": "cp1252"},
    "C": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""},
}
FOLDER = {"cp1252": "ws−∑é", "C": "ws"}


@pytest.fixture(scope="module")
def servers():
    study = Study(STUDY_1)
    with ScriptedServer(ProtocolResponder()) as build_server, ScriptedServer(study.prober) as p, \
            ScriptedServer(study.simulator) as s, ScriptedServer(study.filter) as f:
        env = {"OPENAI_BASE_URL": build_server.base_url, "OPENAI_API_KEY": KEY}
        for comp, server in (("prober", p), ("simulator", s), ("validity_filter", f)):
            env[f"{comp.upper()}_BASE_URL"], env[f"{comp.upper()}_API_KEY"] = server.base_url, KEYS[comp]
        yield env


def _environ(llm_env: dict[str, str], encoding: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_BASE_URL", "_API_KEY")) and k != "COLUMNS"}
    env.update(llm_env)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    for k, v in ENCODINGS[encoding].items():
        if v:
            env[k] = v
        else:
            env.pop(k, None)
    env.pop("LC_CTYPE", None)
    return env


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory, servers):
    """Per encoding: a built directory (2 accepted cases, a papers catalog), seeds, an
    evaluate data folder and two results folders, under a folder named per :data:`FOLDER`."""
    from ioa_synth.cli import app

    out = {}
    runner = CliRunner()
    for encoding, name in FOLDER.items():
        root = tmp_path_factory.mktemp("enc") / name
        root.mkdir()
        seeds = root / "seeds.jsonl"
        seeds.write_text("".join(json.dumps(s) + "\n" for s in real_seed_tuples(2)), encoding="utf-8")
        res = runner.invoke(app, ["build", "--seeds", str(seeds), "--split", "test", "--out", str(root / "b"),
                                  "--workers", "1"], env=servers, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        for i in range(2):
            write_case(root / "data", f"law/planning_{i:03d}.json", released_case())
        snapshot = str(Path(__file__).parents[2] / "seeds" / "snapshot.jsonl")
        for args in (["seeds", "import", snapshot, "--out", str(root / "papers")],
                     ["seeds", "assign", "--out", str(root / "papers"), "--per-cell", "train=1,val=1,test=1",
                      "--allow-short"]):
            res = runner.invoke(app, args, catch_exceptions=False)
            assert res.exit_code == 0, res.output
        write_results(root / "ra", case_studies())
        write_results(root / "rb", case_studies(), permute_seed=7)
        out[encoding] = root
    return out


def commands(root: Path) -> dict[str, list[str]]:
    b = str(root / "b")
    return {
        "--version": ["--version"],
        "--help": ["--help"],
        "build": ["build", "--seeds", str(root / "seeds.jsonl"), "--split", "test", "--out", str(root / "b2"),
                  "--workers", "1"],
        "status": ["status", "--out", b],
        "show": ["show", "--out", b],
        "regenerate": ["regenerate", "--out", b, "--case", "test/ml_research/planning_000"],
        "audit": ["audit", "--out", b, "--split", "test", "--workers", "1"],
        "annotate export": ["annotate", "export", "--out", b, "--split", "test", "--per-cell", "1",
                            "--calibration", "0", "--format", "csv"],
        "annotate report": ["annotate", "report", "--out", b],
        "seeds import": ["seeds", "import", str(Path(__file__).parents[2] / "seeds" / "snapshot.jsonl"),
                         "--out", str(root / "papers2")],
        "seeds assign": ["seeds", "assign", "--out", str(root / "papers"), "--per-cell", "train=1,val=1,test=1",
                         "--allow-short"],
        "seeds check": ["seeds", "check", "--out", str(root / "papers")],
        "evaluate": ["evaluate", "--data", str(root / "data"), "--out", str(root / "ev"), "--workers", "1"],
        "compare": ["compare", str(root / "ra"), str(root / "rb"), "--out", str(root / "cmp"), "--resamples", "200"],
        "report": ["report", str(root / "ra")],
        "sql": ["sql", b, "SELECT 'B ' || chr(8722) || ' A ' || chr(8721) || ' ' || chr(167) AS text, case_id FROM cases"],
    }


NAMES = list(commands(Path("x")))


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("name", NAMES)
def test_every_command_prints_under_a_narrow_encoding(name, encoding, workspaces, servers):
    root = workspaces[encoding]
    args = commands(root)[name]
    proc = subprocess.run([sys.executable, "-m", "ioa_synth", *args], env=_environ(servers, encoding),
                          capture_output=True, timeout=600)
    # (click writes UTF-8 when it finds an ASCII stream: not a crash either)
    stderr = proc.stderr.decode("utf-8" if encoding == "C" else "cp1252", errors="replace")
    stdout = proc.stdout.decode("utf-8" if encoding == "C" else "cp1252", errors="replace")
    assert "Traceback" not in stderr and "UnicodeEncodeError" not in stderr, stderr
    if name == "annotate report":  # nothing annotated yet: its one error line, not a crash
        assert proc.returncode == 2 and stderr.startswith("error: "), stderr
        return
    assert proc.returncode in (0, 1), (proc.returncode, stderr)
    if name == "sql":
        assert "B ? A ?" in stdout
    if name == "compare":
        assert "B ? A" in stdout and "wrote" in stdout
