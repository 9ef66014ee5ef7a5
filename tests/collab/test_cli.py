"""``collab run`` on bad input: one ``error:`` line, exit 2, nothing written; ``collab report``
on a folder that is not a collaboration run's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .helpers import BCB, HP, detector_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ioa_helpers import one_line_error  # noqa: E402


def _run(cli, out, *args):
    return cli("collab", "run", "--out", out, *args)


@pytest.fixture
def out(tmp_path):
    return tmp_path / "res"


def test_a_task_file_in_neither_format(cli, tmp_path, out):
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"item_id": "a"}\n{"item_id": "b"}\n', encoding="utf-8")
    one_line_error(_run(cli, out, "--bench", "bcb", "--tasks", bad, "--configs", "discussion"),
                   "tasks.jsonl:1: neither a BigCodeBench record")
    assert not out.exists()
    one_line_error(_run(cli, out, "--bench", "bcb", "--tasks", HP, "--configs", "discussion"),
                   "is a hidden-profile scenario file, not --bench bcb tasks")
    assert not out.exists()


def test_a_task_without_tests(cli, tmp_path, out):
    rows = [json.loads(x) for x in BCB.read_text(encoding="utf-8").splitlines()]
    del rows[0]["test"]
    bad = tmp_path / "bcb.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    one_line_error(_run(cli, out, "--bench", "bcb", "--tasks", bad, "--configs", "discussion"),
                   "bcb.jsonl:1 (sample-bcb-01)", "no test")
    assert not out.exists()


def test_a_detector_config_without_a_prober_block(cli, tmp_path, out):
    det = tmp_path / "det.json"
    det.write_text(json.dumps({"judge": {"model": "m"}}), encoding="utf-8")
    one_line_error(_run(cli, out, "--bench", "hidden-profile", "--tasks", HP, "--configs", "mcq:d",
                        "--detector", f"d={det}"), "det.json: no \"prober\" block")
    assert not out.exists()


def test_configs_naming_an_unknown_detector(cli, tmp_path, out):
    det = detector_config(tmp_path)
    one_line_error(_run(cli, out, "--bench", "hidden-profile", "--tasks", HP, "--configs", "discussion,mcq:other",
                        "--detector", f"mine={det}"), "--configs names mcq:other but no --detector other=CONFIG",
                   "detectors: mine")
    assert not out.exists()


@pytest.mark.parametrize("configs,needle", [
    ("single", "single-agent baseline is defined for --bench bcb only"),
    ("discussion,chat", "unknown configuration 'chat'"),
    ("discussion,discussion", "names a configuration twice"),
    (",", "must name at least one"),
])
def test_bad_configs(cli, out, configs, needle):
    one_line_error(_run(cli, out, "--bench", "hidden-profile", "--tasks", HP, "--configs", configs), needle)
    assert not out.exists()


def test_report_refuses_a_folder_of_another_kind(cli, tmp_path):
    other = tmp_path / "ev"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({"command": "belief run"}), encoding="utf-8")
    one_line_error(cli("collab", "report", other), "is an 'ioa-synth belief run' results folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line_error(cli("collab", "report", empty), "run.json: missing (is this an 'ioa-synth collab run' results folder?)")
    one_line_error(cli("collab", "report", tmp_path / "missing"), "no such results folder")


@pytest.mark.parametrize("seed", ["99999999999999999999999", "4294967296", "-1"])
def test_a_seed_outside_what_numpy_and_llama_cpp_take(cli, endpoint, out, seed):
    from ioa_synth.testing.collab_scripted import CollabScript

    from .helpers import hp_tasks

    endpoint(responder=CollabScript(tasks=hp_tasks()))  # a seed let through runs here, never on the embedded model
    one_line_error(_run(cli, out, "--bench", "hidden-profile", "--tasks", HP, "--configs", "discussion",
                        "--limit", "1", "--seed", seed), "'--seed'")
    assert not out.exists()


def test_the_largest_seed_runs(cli, endpoint, out):
    from ioa_synth.testing.collab_scripted import CollabScript

    from .helpers import hp_tasks

    endpoint(responder=CollabScript(tasks=hp_tasks()))
    res = _run(cli, out, "--bench", "hidden-profile", "--tasks", HP, "--configs", "discussion", "--limit", "1",
               "--seed", str(2**32 - 1))
    assert res.exit_code == 0, res.output
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["args"]["seed"] == 2**32 - 1
