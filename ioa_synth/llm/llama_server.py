"""llama.cpp's own ``llama-server`` (C++), the embedded models' server: its pinned source,
where ``scripts/setup.sh`` caches the build, and how the toolkit finds it.

The source is the llama.cpp tree that the ``llama-cpp-python`` 0.3.36 sdist vendors
(``vendor/llama.cpp``, llama.cpp commit :data:`LLAMA_CPP_COMMIT`), fetched with pip and
checked against :data:`SDIST_SHA256`. ``scripts/build_llama_server.py`` builds the targets
``llama-server`` and ``llama-tokenize`` (llama.cpp's own tokenizer, which the tests hold the
estimate's token counter to) statically with :data:`CMAKE_FLAGS` into
:func:`build_dir` (``$IOA_SYNTH_CACHE/llama.cpp/<key>``, the key a hash of the sdist's
sha256 and the flags), writing :data:`STAMP` last; a folder without it is not a build.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ioa_synth.llm.local_weights import LocalModelError, cache_dir

SDIST = "llama-cpp-python==0.3.36"
SDIST_FILE = "llama_cpp_python-0.3.36.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
#: Folder of the llama.cpp source inside the sdist.
SDIST_SOURCE = "llama_cpp_python-0.3.36/vendor/llama.cpp"
#: The llama.cpp commit the sdist vendors (its CHANGELOG: "update llama.cpp to ggml-org/llama.cpp@0c1e57098").
LLAMA_CPP_COMMIT = "0c1e57098"

#: CMake cache flags of the build: static (a binary that runs on its own), CPU for this
#: machine (``GGML_NATIVE`` is llama.cpp's default), no web UI assets (the default would
#: fetch them from the Hugging Face hub), no HTTPS client, no tests or examples.
CMAKE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_OPENSSL=OFF", "-DGGML_CCACHE=OFF",
    f"-DLLAMA_BUILD_COMMIT={LLAMA_CPP_COMMIT}", "-DLLAMA_BUILD_NUMBER=0",
    # Not -march=native: a VM whose CPU reports AMX without the kernel enabling its tile state
    # builds a server that dies of a general protection fault at its first ``ldtilecfg``. Off
    # native, ggml builds for AVX2/FMA/F16C/BMI2 (x86-64-v3), which any current host runs.
    "-DGGML_NATIVE=OFF",
)
TARGETS: tuple[str, ...] = ("llama-server", "llama-tokenize")
#: Written last into a build folder: what was built, from what, how.
STAMP = "build.json"

#: What the fingerprint calls this server (an embedded endpoint's ``server`` field).
SERVER_ID = f"llama.cpp@{LLAMA_CPP_COMMIT} llama-server"

SETUP_HINT = "run: bash scripts/setup.sh (it builds llama.cpp's llama-server once, about 5-7 min on 2 cores)"


def build_key() -> str:
    """16 hex chars naming one build: the sdist's sha256 and :data:`CMAKE_FLAGS`."""
    return hashlib.sha256("\n".join((SDIST_SHA256, *CMAKE_FLAGS)).encode()).hexdigest()[:16]


def build_dir(cache: Path | None = None) -> Path:
    """Where the build of :func:`build_key` lives: ``<cache>/llama.cpp/<key>``."""
    return (cache if cache is not None else cache_dir()) / "llama.cpp" / build_key()


def is_built(folder: Path) -> bool:
    """True when ``folder`` holds a finished build (its :data:`STAMP` and every target)."""
    return (folder / STAMP).is_file() and all((folder / t).is_file() for t in TARGETS)


def binary(target: str = "llama-server", cache: Path | None = None) -> Path:
    """Path of a built target (``llama-server`` or ``llama-tokenize``).

    Raises :class:`~ioa_synth.llm.local_weights.LocalModelError` (saying to run setup) when
    the pinned build is not in the cache."""
    folder = build_dir(cache)
    if not is_built(folder):
        raise LocalModelError(f"llama.cpp's llama-server is not built for this toolkit (no {folder / STAMP}); "
                              f"{SETUP_HINT}")
    return folder / target
