"""Build llama.cpp's ``llama-server`` and ``llama-tokenize`` for the embedded models, once.

Called by ``scripts/setup.sh``; safe to re-run. Steps: reuse the build in the cache when it
is there (``ioa_synth.llm.llama_server.build_dir``: keyed by the pinned sdist's sha256 and
the CMake flags); else ``pip download`` the pinned ``llama-cpp-python`` sdist (pip's
registry is the only network used), check its sha256, extract its ``vendor/llama.cpp``,
configure and build the two targets statically with CMake, check that ``llama-server
--version`` runs, and move the binaries into the cache with the build stamp written last.

Progress goes to stdout as ``[setup]`` lines, the tools' output to
``<cache>/llama.cpp/build-<key>.log``. A failure prints one ``[setup] ERROR:`` line on stderr
(the step, the last line of its output, the log) and exits 1; nothing half-built is left
in the cache. ``--force`` rebuilds even when a build is cached.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from ioa_synth.llm import llama_server as ls


class BuildError(RuntimeError):
    """A step failed; the message is the one line setup prints."""


def say(msg: str) -> None:
    print(f"[setup] {msg}", flush=True)


def _cores() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _tool(name: str) -> str | None:
    """``name`` from this venv's bin folder (the ``cmake``/``ninja`` wheels), else from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() and os.access(here, os.X_OK) else shutil.which(name)


def _run(step: str, cmd: list[str], log: Path, **kw) -> None:
    """Run ``cmd`` with its output appended to ``log``; :class:`BuildError` naming ``step`` on failure."""
    with open(log, "ab") as out:
        out.write(f"\n=== {step}: {' '.join(cmd)}\n".encode())
        out.flush()
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, **kw)
    if done.returncode != 0:
        raise BuildError(f"{step} failed (exit {done.returncode}): {_last_error(log)}; full log: {log}")


def _last_error(log: Path) -> str:
    """The most telling line at the end of ``log``: the last CMake error (with its indented
    message), else the last compiler/linker ``error``, else the last line."""
    lines = [ln.rstrip() for ln in log.read_text(errors="replace").splitlines()[-400:]]
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("CMake Error"):
            told = [lines[i]] + [ln.strip() for ln in lines[i + 1:i + 6] if ln.startswith("  ") and ln.strip()]
            return " ".join(told)[:300]
    said = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("===")]
    errors = [ln for ln in said if "error" in ln.lower()]
    return (errors or said or ["(no output)"])[-1][:300]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def pip_download(dest: Path, log: Path) -> None:
    """``pip download`` the pinned sdist (no wheel, no dependencies) into ``dest``."""
    _run("pip download of the llama.cpp source",
         [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--progress-bar", "off",
          "-d", str(dest), ls.SDIST], log)


def fetch_source(work: Path, log: Path) -> Path:
    """The pinned sdist from pip's registry, checked and extracted; returns the llama.cpp folder."""
    dl = work / "sdist"
    pip_download(dl, log)
    sdist = dl / ls.SDIST_FILE
    if not sdist.is_file():
        raise BuildError(f"pip download gave no {ls.SDIST_FILE} in {dl}; full log: {log}")
    got = sha256_of(sdist)
    if got != ls.SDIST_SHA256:
        raise BuildError(f"{ls.SDIST_FILE} has sha256 {got}, not the pinned {ls.SDIST_SHA256}; refusing to build it")
    src = work / "src"
    prefix = ls.SDIST_SOURCE + "/"
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            if m.name.startswith(prefix) and m.name != prefix + ".git":  # .git: a link into the sdist's own repo
                m.name = m.name[len(prefix):]
                members.append(m)
        if not members:
            raise BuildError(f"{ls.SDIST_FILE} holds no {ls.SDIST_SOURCE}")
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.11.4
        tar.extractall(src, members=members, **safe)
    sdist.unlink()
    return src


def compile_targets(src: Path, work: Path, log: Path) -> Path:
    """Configure and build :data:`ls.TARGETS`; returns the folder holding the binaries."""
    cmake = _tool("cmake")
    if cmake is None:
        raise BuildError("cmake not found (pip install cmake, or bash scripts/setup.sh, which installs it)")
    ninja = _tool("ninja")
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []
    build = work / "build"
    _run("cmake configure", [cmake, "-S", str(src), "-B", str(build), *gen, *ls.CMAKE_FLAGS], log)
    _run("cmake build", [cmake, "--build", str(build), "--target", *ls.TARGETS, "-j", str(_cores())], log)
    return build / "bin"


def compiler(build: Path) -> str:
    """The C++ compiler CMake chose (from its cache), for the stamp."""
    try:
        for line in (build / "CMakeCache.txt").read_text().splitlines():
            if line.startswith("CMAKE_CXX_COMPILER:"):
                return line.split("=", 1)[1]
    except OSError:
        pass
    return "unknown"


def build(force: bool = False, cache: Path | None = None) -> Path:
    """Build (or reuse) the pinned targets in ``cache`` (default the toolkit's cache folder);
    returns the build folder. Raises :class:`BuildError` for a failed step."""
    target = ls.build_dir(cache)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another setup may be building the same thing
        if ls.is_built(target) and not force:
            say(f"reusing llama-server built from {ls.SDIST} (llama.cpp@{ls.LLAMA_CPP_COMMIT}): {target}")
            return target
        log = target.parent / f"build-{ls.build_key()}.log"
        log.write_text(f"building {ls.TARGETS} from {ls.SDIST} (llama.cpp@{ls.LLAMA_CPP_COMMIT})\n")
        say(f"building llama.cpp's llama-server from the {ls.SDIST} sdist (llama.cpp@{ls.LLAMA_CPP_COMMIT}); "
            f"about 5-7 min on 2 cores, once; log: {log}")
        start = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=f".work-{ls.build_key()}-", dir=target.parent))
        try:
            src = fetch_source(work, log)
            say(f"source checked (sha256 {ls.SDIST_SHA256[:12]}...), compiling")
            bins = compile_targets(src, work, log)
            _run("llama-server --version", [str(bins / "llama-server"), "--version"], log)
            out = work / "out"
            out.mkdir()
            for t in ls.TARGETS:
                shutil.copy2(bins / t, out / t)
            stamp = {"sdist": ls.SDIST, "sdist_sha256": ls.SDIST_SHA256, "llama_cpp_commit": ls.LLAMA_CPP_COMMIT,
                     "cmake_flags": list(ls.CMAKE_FLAGS), "targets": list(ls.TARGETS),
                     "compiler": compiler(work / "build"), "seconds": round(time.monotonic() - start)}
            (out / ls.STAMP).write_text(json.dumps(stamp, indent=1) + "\n")
            if target.exists():
                shutil.rmtree(target)
            out.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        say(f"llama-server built in {time.monotonic() - start:.0f} s: {target}")
        return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when the build is cached")
    args = parser.parse_args(argv)
    try:
        build(args.force)
    except KeyboardInterrupt:
        print("[setup] ERROR: building llama-server: interrupted; run setup again to build it", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one line for setup, whatever broke
        what = str(exc) if isinstance(exc, BuildError) else f"{type(exc).__name__}: {exc}"
        print(f"[setup] ERROR: building llama.cpp's llama-server failed, so setup stopped: {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
