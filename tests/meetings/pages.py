"""Helpers of the page tests: links, a live uvicorn server in a thread, form payloads."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import uvicorn

from ioa_synth.meetings.web import make_app


def links(session: Path) -> dict[str, str]:
    """``{participant: token}``."""
    return {pid: token for token, pid in json.loads((session / "private" / "links.json").read_text()).items()}


def sets(session: Path) -> dict[str, list]:
    return json.loads((session / "sets.json").read_text())["sets"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server(session: Path) -> Iterator[str]:
    """The session's pages on a real uvicorn server in a thread; yields the base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(session), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def all_answers(session: Path, letter: str = "A") -> dict[str, str]:
    """Page-1 fields answering every question with ``letter``."""
    return {f"{label}-{n}": letter for label, qs in sets(session).items() for n in range(1, len(qs) + 1)}
