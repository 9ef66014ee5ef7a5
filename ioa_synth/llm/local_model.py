"""The embedded local LLM server: llama-cpp-python's OpenAI-compatible server on
127.0.0.1 (:class:`EmbeddedServer`), for the weights :mod:`ioa_synth.llm.local_weights`
locates.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from ioa_synth.llm.local_weights import LOCAL_MODELS, LocalModelError, model_path

#: Requests llama-cpp-python's server (0.3.36) decodes at once: one. Every completion runs
#: under one global lock (``llama_cpp.server.app``) and no setting changes that; more
#: requests only queue inside the server.
SERVER_PARALLEL = 1


# Runs in the server child: die with the parent (Linux PR_SET_PDEATHSIG, kept across exec),
# quit at once if the parent is already gone, drop env vars that the server would read instead
# of our flags (its settings read any field from the env, and HOST/PORT override --host/--port),
# then run ``python -m llama_cpp.server``.
def dies_with_parent(signal_name: str) -> str:
    """Start of a ``python -c`` child program that takes its parent's pid as its first
    argument, gets ``signal.<signal_name>`` when that parent dies (Linux PR_SET_PDEATHSIG, kept
    across exec) and quits at once if the parent is already gone."""
    return f"""\
import ctypes, os, runpy, signal, sys
parent = int(sys.argv.pop(1))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.{signal_name}), 0, 0, 0)
except Exception:
    pass
if os.getppid() != parent:
    sys.exit(1)
"""


_LAUNCHER = dies_with_parent("SIGKILL") + """\
from llama_cpp.server.settings import ConfigFileSettings, Settings
names = {*Settings.model_fields, *ConfigFileSettings.model_fields, "config_file"}
for key in [k for k in os.environ if k.lower() in names]:
    del os.environ[key]
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""

_LIVE: set[EmbeddedServer] = set()
atexit.register(lambda: [srv._stop() for srv in list(_LIVE)])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cores() -> int:
    getaff = getattr(os, "sched_getaffinity", None)
    return max(1, len(getaff(0)) if getaff else os.cpu_count() or 1)


class EmbeddedServer:
    """llama-cpp-python's OpenAI-compatible server for a local model, as a context manager.

    ``with EmbeddedServer("smollm2-135m") as srv:`` starts ``python -m llama_cpp.server`` on a
    free 127.0.0.1 port with ``n_ctx`` tokens of context and one thread per usable core, and
    waits until ``GET /v1/models`` answers. Attributes: ``name``, ``model`` (served model id,
    equal to ``name``), ``base_url`` (``http://127.0.0.1:PORT/v1``), ``port``, ``pid``,
    ``parallel`` (requests decoded at once, :data:`SERVER_PARALLEL`). A streamed reply is
    never cut short because another request arrives (``--interrupt_requests False``).
    Server output goes to ``log_path`` (appended) or to an unnamed temporary file; either way
    it never reaches the terminal, and its tail is quoted in startup errors.
    On exit (also on ``KeyboardInterrupt``) the server gets SIGTERM, then SIGKILL after
    ``grace`` seconds. On Linux the child is killed if the thread that started it dies, so
    start it in the main thread (or a thread that outlives its use).
    Raises :class:`LocalModelError` if the model or llama-cpp-python is missing, or the server
    exits or does not answer within ``startup_timeout`` seconds (message ends with the log tail).
    """

    def __init__(self, name: str, log_path: Path | None = None, n_ctx: int = 8192, *,
                 startup_timeout: float = 180.0, grace: float = 10.0) -> None:
        if name not in LOCAL_MODELS:
            raise LocalModelError(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
        self.name = self.model = name
        self.parallel = SERVER_PARALLEL
        self.log_path = Path(log_path) if log_path is not None else None
        self.n_ctx, self.startup_timeout, self.grace = n_ctx, startup_timeout, grace
        self.port: int | None = None
        self.base_url = ""
        self._proc: subprocess.Popen | None = None
        self._log = None  # binary file the server writes to (unnamed temp file without log_path)

    @property
    def pid(self) -> int | None:
        """Process id of the running server, or ``None``."""
        return self._proc.pid if self._proc else None

    def __enter__(self) -> EmbeddedServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError("llama-cpp-python is not installed; pip install 'ioa-synth[local]'")
        gguf = model_path(self.name)
        try:
            for attempt in range(3):  # a fresh port again if another process took ours
                if self._start(gguf):
                    return self
                tail = self._log_tail()
                self._stop()
                if "address already in use" not in tail.lower() or attempt == 2:
                    raise LocalModelError(f"embedded server for {self.name} exited; log tail:\n{tail}")
        except BaseException:
            self._stop()
            raise
        return self  # not reached

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _start(self, gguf: Path) -> bool:
        """Start the server; True once it answers, False if it exited early. Raises on timeout."""
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab+")
        else:  # already unlinked: nothing is left behind even if we are SIGKILLed
            self._log = tempfile.TemporaryFile(prefix="ioa-synth-llama-")
        cmd = [sys.executable, "-c", _LAUNCHER, str(os.getpid()),
               "--model", str(gguf), "--model_alias", self.name,
               "--host", "127.0.0.1", "--port", str(self.port),
               "--n_ctx", str(self.n_ctx), "--n_threads", str(_cores()),
               # the server's default ends a stream as soon as another request waits
               "--interrupt_requests", "False",
               # penalties over the whole reply, as OpenAI's presence/frequency_penalty (llama.cpp: last 64 tokens)
               "--last_n_tokens_size", str(self.n_ctx)]
        self._log.write(f"\n=== ioa-synth: {' '.join(cmd[3:])}\n".encode())
        self._log.flush()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        _LIVE.add(self)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as resp:
                    ids = [m.get("id") for m in json.load(resp).get("data", [])]
                if self.name in ids:
                    return True
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        raise LocalModelError(
            f"embedded server for {self.name} did not answer within {self.startup_timeout:.0f}s; "
            f"log tail:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 30) -> str:
        if self._log is None:
            return "(no log)"
        fd = self._log.fileno()
        size = os.fstat(fd).st_size
        text = os.pread(fd, 65536, max(0, size - 65536)).decode(errors="replace")
        if "\nusage: " in text:  # the server prints its error, then its whole --help
            text = text[: text.rindex("\nusage: ")]
        return "\n".join(text.splitlines()[-lines:])

    def _stop(self) -> None:
        """Terminate (then kill) and reap the server; idempotent."""
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(self.grace)
            except BaseException:  # grace period over, or a second Ctrl-C while waiting
                proc.kill()
                proc.wait()
                if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
                    raise
        if self._log is not None:
            self._log.close()
            self._log = None
