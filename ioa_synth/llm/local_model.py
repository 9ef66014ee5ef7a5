"""The embedded local LLM server: llama.cpp's own ``llama-server`` on 127.0.0.1
(:class:`EmbeddedServer`) with :func:`embedded_slots` parallel slots, for the weights
:mod:`ioa_synth.llm.local_weights` locates; the binary is the one ``scripts/setup.sh``
builds (:mod:`ioa_synth.llm.llama_server`).
"""

from __future__ import annotations

import atexit
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

from ioa_synth.llm.llama_server import SERVER_ID, binary
from ioa_synth.llm.local_weights import LOCAL_MODELS, LocalModelError, model_path

#: Environment variable that sets the number of slots (requests decoded at once).
SLOTS_ENV = "IOA_SYNTH_EMBEDDED_SLOTS"
#: Most slots chosen without :data:`SLOTS_ENV`.
MAX_AUTO_SLOTS = 4
#: Context tokens of each slot: a stage-2 prompt and its ``max_tokens`` reply fit.
N_CTX = 8192
#: KV-cache bytes per context token of the larger embedded model (Qwen2.5-1.5B: 28 layers x
#: 2 KV heads x 128 dims x K and V x 2 bytes of f16); SmolLM2-135M needs 22.5 KiB.
KV_BYTES_PER_TOKEN = 28 * 2 * 128 * 2 * 2
#: Memory kept free for the weights (Qwen: 1.1 GB), the server's buffers and everything else.
MEMORY_RESERVE = 4 << 30


def _cores() -> int:
    getaff = getattr(os, "sched_getaffinity", None)
    return max(1, len(getaff(0)) if getaff else os.cpu_count() or 1)


def _available_memory() -> int:
    """Bytes of memory available for new work (``MemAvailable``; total RAM where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def embedded_slots() -> int:
    """Requests the embedded server decodes at once (its ``--parallel`` slots).

    :data:`SLOTS_ENV` when set (a whole number >= 1); else twice the usable cores, at most
    :data:`MAX_AUTO_SLOTS`, and no more than the free memory (after :data:`MEMORY_RESERVE`)
    holds KV caches of :data:`N_CTX` tokens for. Raises :class:`LocalModelError` for a bad
    :data:`SLOTS_ENV`."""
    value = os.environ.get(SLOTS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise LocalModelError(f"{SLOTS_ENV}={value!r}: expected a whole number of slots, 1 or more")
        return int(value)
    by_memory = (_available_memory() - MEMORY_RESERVE) // (KV_BYTES_PER_TOKEN * N_CTX)
    return max(1, min(MAX_AUTO_SLOTS, 2 * _cores(), by_memory))


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


# The server child: dies with its parent, then becomes llama-server (argv[1] is its path).
_LAUNCHER = dies_with_parent("SIGKILL") + "os.execv(sys.argv[1], sys.argv[1:])\n"

_LIVE: set[EmbeddedServer] = set()
atexit.register(lambda: [srv._stop() for srv in list(_LIVE)])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env() -> dict[str, str]:
    """The server's environment: this process's, without the ``LLAMA_*`` variables (llama-server
    reads them in place of flags we do not pass, ``LLAMA_ARG_*``, or to change its logging and
    cache), and with ``OMP_WAIT_POLICY=PASSIVE`` unless set: the build's OpenMP threads then
    sleep between steps instead of spinning, so a server beside other CPU work (a second
    process, a test suite) slows down in proportion instead of many times over (measured on 2
    shared cores: Qwen 1.5B decoded 7.5-16 tokens/s spinning, 17.6-20 passive)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


class EmbeddedServer:
    """llama.cpp's ``llama-server`` for a local model, as a context manager.

    ``with EmbeddedServer("smollm2-135m") as srv:`` starts the server on a free 127.0.0.1
    port with ``slots`` parallel slots (default :func:`embedded_slots`) of ``n_ctx`` context
    tokens each, one thread per usable core, and waits until ``GET /v1/models`` lists the
    model. Attributes: ``name``, ``model`` (served model id, equal to ``name``), ``base_url``
    (``http://127.0.0.1:PORT/v1``), ``port``, ``pid``, ``parallel`` (requests decoded at once:
    the slots), ``server`` (:data:`~ioa_synth.llm.llama_server.SERVER_ID`, fingerprinted).
    A streamed reply whose client goes away stops being decoded at the next token.
    Sampling as llama-cpp-python's server had it, which the demo configs were tuned on:
    ``repeat_penalty`` 1.1, and penalties (also ``presence_penalty``/``frequency_penalty``)
    over the whole reply (``--repeat-last-n`` = ``n_ctx``; llama.cpp's default is 64 tokens).
    Server output goes to ``log_path`` (appended) or to an unnamed temporary file; either way
    it never reaches the terminal, and its tail is quoted in startup errors.
    On exit (also on ``KeyboardInterrupt``) the server gets SIGTERM, then SIGKILL after
    ``grace`` seconds. On Linux the child is killed if the thread that started it dies, so
    start it in the main thread (or a thread that outlives its use).
    Raises :class:`LocalModelError` if the model or the llama-server build is missing, or the
    server exits or does not answer within ``startup_timeout`` seconds (message ends with the
    log tail).
    """

    def __init__(self, name: str, log_path: Path | None = None, n_ctx: int = N_CTX, *, slots: int | None = None,
                 startup_timeout: float = 180.0, grace: float = 10.0) -> None:
        if name not in LOCAL_MODELS:
            raise LocalModelError(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
        self.name = self.model = name
        self.parallel = slots if slots is not None else embedded_slots()
        self.server = SERVER_ID
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

    def command(self, exe: Path, gguf: Path, port: int) -> list[str]:
        """The ``llama-server`` command line (also what ``scripts/bench_embedded.py`` starts bare)."""
        cores = str(_cores())
        return [str(exe), "--model", str(gguf), "--alias", self.name, "--host", "127.0.0.1", "--port", str(port),
                "--ctx-size", str(self.n_ctx * self.parallel), "--parallel", str(self.parallel),
                "--threads", cores, "--threads-batch", cores,
                "--repeat-last-n", str(self.n_ctx), "--repeat-penalty", "1.1", "--no-webui"]

    def __enter__(self) -> EmbeddedServer:
        exe, gguf = binary("llama-server"), model_path(self.name)
        try:
            for attempt in range(3):  # a fresh port again if another process took ours
                if self._start(exe, gguf):
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

    def _start(self, exe: Path, gguf: Path) -> bool:
        """Start the server; True once it answers, False if it exited early. Raises on timeout."""
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab+")
        else:  # already unlinked: nothing is left behind even if we are SIGKILLed
            self._log = tempfile.TemporaryFile(prefix="ioa-synth-llama-")
        args = self.command(exe, gguf, self.port)
        self._log.write(f"\n=== ioa-synth: {' '.join(args)}\n".encode())
        self._log.flush()
        self._proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(os.getpid()), *args],
                                      stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                      start_new_session=True, env=server_env())
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
