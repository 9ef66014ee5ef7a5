"""scripts/build_llama_server.py (run by setup) on small stand-ins for the pinned source:
a wrong sdist and a failed compile each stop it with one line and leave no build behind;
a good build lands in the cache with its stamp and is reused; the toolkit finds it there
or says to run setup."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from ioa_synth.llm import llama_server as ls
from ioa_synth.llm import local_model as lm
from ioa_synth.llm.local_weights import LocalModelError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_llama_server.py"

# Two programs named as the real targets; llama-server answers --version, as the build checks.
TINY_PROJECT = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.14)
project(tiny CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server main.cpp)
add_executable(llama-tokenize main.cpp)
""",
    "main.cpp": "#include <cstdio>\nint main() { std::puts(\"version: 0 (tiny)\"); return 0; }\n",
}
BROKEN_PROJECT = {"CMakeLists.txt": "cmake_minimum_required(VERSION 3.14)\nproject(tiny CXX)\n"
                                    "message(FATAL_ERROR \"this source cannot be built here\")\n"}


@pytest.fixture
def builder(monkeypatch):
    spec = importlib.util.spec_from_file_location("build_llama_server", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _sdist(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in {**files, ".git": "gitdir: ../../.git/modules/vendor/llama.cpp\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{ls.SDIST_SOURCE}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        readme = tarfile.TarInfo("llama_cpp_python-0.3.36/README.md")
        tar.addfile(readme, io.BytesIO(b""))
    return buf.getvalue()


def _serve_sdist(monkeypatch, builder, files: dict[str, str], pin: bool = True) -> list[Path]:
    """Make ``pip download`` give a sdist of ``files`` (pinned as the real one when ``pin``)."""
    blob, calls = _sdist(files), []
    if pin:
        monkeypatch.setattr(ls, "SDIST_SHA256", hashlib.sha256(blob).hexdigest())

    def fake_download(dest: Path, log: Path) -> None:
        calls.append(dest)
        dest.mkdir(parents=True)
        (dest / ls.SDIST_FILE).write_bytes(blob)

    monkeypatch.setattr(builder, "pip_download", fake_download)
    return calls


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("[setup] ERROR: building llama.cpp's llama-server failed")
    return err


def test_a_sdist_that_is_not_the_pinned_one_is_refused(builder, monkeypatch, tmp_path, capsys):
    _serve_sdist(monkeypatch, builder, TINY_PROJECT, pin=False)
    monkeypatch.setenv("IOA_SYNTH_CACHE", str(tmp_path))
    assert builder.main([]) == 1
    err = _one_error_line(capsys)
    assert "not the pinned" in err and ls.SDIST_SHA256 in err
    assert not ls.is_built(ls.build_dir(tmp_path))
    assert [p.name for p in (tmp_path / "llama.cpp").iterdir() if p.name.startswith(".work")] == []


def test_a_failed_compile_stops_setup_with_one_line(builder, monkeypatch, tmp_path, capsys):
    _serve_sdist(monkeypatch, builder, BROKEN_PROJECT)
    monkeypatch.setenv("IOA_SYNTH_CACHE", str(tmp_path))
    assert builder.main([]) == 1
    err = _one_error_line(capsys)
    assert "cmake configure failed" in err and "this source cannot be built here" in err
    log = ls.build_dir(tmp_path).parent / f"build-{ls.build_key()}.log"
    assert str(log) in err and log.is_file()
    assert not ls.build_dir(tmp_path).exists()
    with pytest.raises(LocalModelError, match="bash scripts/setup.sh"):
        ls.binary(cache=tmp_path)


def test_a_build_is_cached_by_its_source_and_reused(builder, monkeypatch, tmp_path, capsys):
    downloads = _serve_sdist(monkeypatch, builder, TINY_PROJECT)
    folder = builder.build(cache=tmp_path)
    assert folder == ls.build_dir(tmp_path) and ls.is_built(folder)
    stamp = json.loads((folder / ls.STAMP).read_text())
    assert stamp["sdist_sha256"] == ls.SDIST_SHA256 and stamp["cmake_flags"] == list(ls.CMAKE_FLAGS)
    assert ls.binary("llama-tokenize", cache=tmp_path) == folder / "llama-tokenize"
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, ".build.lock",
                                                                      f"build-{ls.build_key()}.log"])
    assert builder.build(cache=tmp_path) == folder and len(downloads) == 1  # the second run reuses it
    assert "reusing llama-server" in capsys.readouterr().out
    monkeypatch.setattr(ls, "SDIST_SHA256", "0" * 64)  # another source: another key, not this build
    assert ls.build_dir(tmp_path) != folder and not ls.is_built(ls.build_dir(tmp_path))


def test_the_embedded_server_without_a_build_says_to_run_setup(monkeypatch, tmp_path):
    monkeypatch.setenv("IOA_SYNTH_CACHE", str(tmp_path))
    with pytest.raises(LocalModelError, match="not built.*bash scripts/setup.sh"):
        lm.EmbeddedServer("smollm2-135m", slots=1).__enter__()


def test_the_build_command_names_every_setting_the_server_needs():
    srv = lm.EmbeddedServer("qwen2.5-coder-1.5b", n_ctx=4096, slots=3)
    cmd = srv.command(Path("/x/llama-server"), Path("/m.gguf"), 1234)
    opts = dict(zip(cmd[1::2], cmd[2::2]))
    assert cmd[0] == "/x/llama-server" and opts["--alias"] == "qwen2.5-coder-1.5b"
    assert (opts["--parallel"], opts["--ctx-size"]) == ("3", str(3 * 4096))  # n_ctx per slot
    assert (opts["--repeat-last-n"], opts["--repeat-penalty"]) == ("4096", "1.1")
    assert opts["--host"] == "127.0.0.1" and "--no-webui" in cmd
    assert srv.server == ls.SERVER_ID and ls.LLAMA_CPP_COMMIT in srv.server


# Text the estimate counts: prose, numbers, JSON, accents, CJK, emoji, runs of spaces, newlines.
TEXTS = ["The 2,400 questions from the March 2024 crawl; recall@10 >= 0.82!\n\n  indented   text\tand tabs",
         "Design the participants: M1 Ada Okafor (research lead) and M2 Ben Lindqvist — «évaluation» naïve café 北京 🙂",
         '{"ma_scores": {"MA1": {"subtlety": 3, "feedback": "No changes needed."}}}',
         "def f(x):\n    return x ** 2  # 12345678901234\n\n\n", "<|im_start|>user\nHi<|im_end|>"]


@pytest.mark.parametrize("name", ["smollm2-135m", "qwen2.5-coder-1.5b"])
def test_the_estimates_tokenizer_counts_as_llama_cpp_does(name):
    """``ioa-synth estimate`` counts embedded prompts with a tokenizer rebuilt from the
    model's GGUF (:func:`ioa_synth.llm.tokens.gguf_counter`); the built ``llama-tokenize``
    (llama.cpp's own, the server's) gives the same counts."""
    from ioa_synth.llm.local_weights import installed_local_models, model_path
    from ioa_synth.llm.tokens import gguf_counter

    if name not in installed_local_models():
        pytest.skip(f"{name} is not installed")
    gguf = model_path(name)
    counter = gguf_counter(gguf)
    for text in TEXTS:
        done = subprocess.run([str(ls.binary("llama-tokenize")), "-m", str(gguf), "--stdin", "--no-escape",
                               "--no-bos", "--ids", "--log-disable"], input=text.encode(), capture_output=True,
                              timeout=120, check=True)
        ids = json.loads(done.stdout.decode().strip().splitlines()[-1])
        assert counter.text(text) == len(ids), text


def test_the_server_environment_drops_llama_settings_and_does_not_spin(monkeypatch):
    monkeypatch.setenv("LLAMA_ARG_CTX_SIZE", "64")  # would replace a flag we do not pass
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    env = lm.server_env()
    assert "LLAMA_ARG_CTX_SIZE" not in env and env["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a user's own choice is kept
    assert lm.server_env()["OMP_WAIT_POLICY"] == "ACTIVE"
