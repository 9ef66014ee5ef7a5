"""Fixtures of the viewer tests: every kind of results folder made once per module by real
runs against the scripted servers (:mod:`.folders`), and ``ioa-synth view`` serving them in
a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .folders import KEY, make_all

ROOT = Path(__file__).resolve().parents[2]


def start_view(*paths: Path, port: int = 0, extra: tuple[str, ...] = (), env: dict | None = None):
    """``python -m ioa_synth view PATHS`` in a process of its own; returns ``(process, url)``
    once the server answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    args = [sys.executable, "-m", "ioa_synth", "view", *map(str, paths), "--port", str(port or free_port()), *extra]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("http://"):
        proc.kill()
        raise AssertionError(line + proc.stderr.read())
    url = line.split()[0].rstrip("/")
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/static/view.css", timeout=2)
            return proc, url
        except httpx.TransportError:
            assert time.monotonic() < deadline and proc.poll() is None, "the viewer did not start"
            time.sleep(0.1)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """``{kind: path}`` of the folders made by real runs (see :func:`.folders.make_all`)."""
    return make_all(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def served(folders):
    """The viewer serving the folders' parent (the key in its environment, as a user's would be)."""
    proc, url = start_view(folders["build"].parent, env={"OPENAI_API_KEY": KEY})
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def ids(served):
    """Folder name -> its number in the URLs, read off the index."""
    import re

    html = httpx.get(served + "/").text
    return {name.rsplit("/", 1)[-1]: int(n) for n, name in re.findall(r'href="/f/(\d+)/">([^<]+)</a>', html)}
