"""``collab import-hiddenbench``: HiddenBench scenarios (JSON or JSONL, the fields
docs/collab.md lists) become hidden-profile tasks that ``collab run`` takes; a file that
cannot be converted is one ``error:`` line, exit 2, nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ioa_synth.collab.tasks import load_tasks
from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import SAMPLES, detector_config, record

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ioa_helpers import one_line_error  # noqa: E402

SAMPLE = SAMPLES / "hiddenbench_sample.json"


def _scenarios():
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def test_the_sample_imports_as_json_and_as_jsonl(cli, tmp_path):
    out = tmp_path / "tasks.jsonl"
    res = cli("collab", "import-hiddenbench", SAMPLE, "--out", out)
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    first, second = rows
    assert first["task_id"] == "hb-sample-1" and first["options"] == {"A": "Atlas", "B": "Birch", "C": "Cedar"}
    assert first["answer"] == "B"  # the correct answer given as the option's text
    assert first["shared"].splitlines()[0].startswith("A regional hospital") and len(first["private"]) == 3
    assert second["answer"] == "C" and second["private"][2].startswith("The Lake route's campsite")
    assert first["source"] == {"format": "hiddenbench", "file": "hiddenbench_sample.json", "index": 1}
    assert [t.agents for t in load_tasks(out, "hidden-profile")] == [3, 4]
    lines = tmp_path / "hb.jsonl"
    lines.write_text("".join(json.dumps(s) + "\n" for s in _scenarios()), encoding="utf-8")
    again = tmp_path / "again.jsonl"
    assert cli("collab", "import-hiddenbench", lines, "--out", again).exit_code == 0
    assert [{k: v for k, v in json.loads(x).items() if k != "source"} for x in again.read_text().splitlines()] == \
        [{k: v for k, v in r.items() if k != "source"} for r in rows]


def test_imported_tasks_run_against_the_scripted_team(cli, endpoint, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    assert cli("collab", "import-hiddenbench", SAMPLE, "--out", tasks_file).exit_code == 0
    tasks = load_tasks(tasks_file, "hidden-profile")
    endpoint(responder=CollabScript(tasks=tasks, diverge={"hb-sample-1"}, extra_ready={"hb-sample-1": 2}))
    out = tmp_path / "res"
    res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", tasks_file, "--out", out,
              "--configs", "discussion,mcq:probe", "--detector", f"probe={detector_config(tmp_path)}")
    assert res.exit_code == 0, res.output
    # the scripted agents pick the correct option only after a directive turn
    assert record(out, "hb-sample-1", "mcq:probe")["passed"] is True
    assert record(out, "hb-sample-1", "discussion")["passed"] is False
    report = json.loads((out / "report.json").read_text())
    assert report["pass_at_1"] == {"discussion": 0.0, "mcq:probe": 0.5}
    assert report["extra_rounds"]["mcq:probe"] == 1.0  # 2 rounds on one task of two


def _edit(change):
    scenarios = _scenarios()
    change(scenarios)
    return json.dumps(scenarios)


BAD = {
    "no hidden information": (_edit(lambda s: s[0].pop("hidden_information")),
                              "scenario 1 (hb-sample-1): no private field (looked for hidden_information"),
    "answer not an option": (_edit(lambda s: s[0].update(correct_answer="Dogwood")),
                             "answer 'Dogwood' is not one of the options ABC"),
    "two agents": (_edit(lambda s: s[0].update(hidden_information=["x", "y"], num_agents=2)),
                   "private: List should have at least 3 items"),
    "agents disagree": (_edit(lambda s: s[1].update(num_agents=3)), "3 agents but 4 private information entries"),
    "repeated id": (_edit(lambda s: s[1].update(id="hb-sample-1")), "id 'hb-sample-1' repeats"),
    "id unusable as a file name": (_edit(lambda s: s[0].update(id="a__b")), "not usable in a file name"),
    "not JSON": ("[{\"id\": 1,", "invalid JSON"),
    "bad JSONL line": (json.dumps(_scenarios()[0]) + "\n{oops\n", ":2: invalid JSON"),
    "empty": ("", "empty file"),
    "not a list": ("\"scenarios\"", "expected a list of HiddenBench scenarios"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_is_one_error_line_and_nothing_is_written(cli, tmp_path, name):
    text, needle = BAD[name]
    bad = tmp_path / "hb.json"
    bad.write_text(text, encoding="utf-8")
    out = tmp_path / "tasks.jsonl"
    res = cli("collab", "import-hiddenbench", bad, "--out", out)
    assert res.exit_code == 2
    one_line_error(res, needle)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["hb.json"]


def test_an_existing_out_file_is_never_overwritten(cli, tmp_path):
    out = tmp_path / "tasks.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    res = cli("collab", "import-hiddenbench", SAMPLE, "--out", out)
    assert res.exit_code == 2
    one_line_error(res, "exists")
    assert out.read_text(encoding="utf-8") == "mine\n"
    one_line_error(cli("collab", "import-hiddenbench", tmp_path / "missing.json", "--out", tmp_path / "o.jsonl"),
                   "no such file")
