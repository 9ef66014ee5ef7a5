"""A results folder written by the release before the manifest (its run.json without
``kind``, ``versions`` or ``settings``) resumes after the change, or is refused in one line
when the setup changed; the readers read it."""

from __future__ import annotations

import json

from .eval_helpers import STUDY_1, STUDY_2, Study, released_case, write_case
from ioa_helpers import one_line_error

#: The keys of run.json as ``evaluate`` wrote them before the manifest, in that order.
RELEASED_KEYS = ("command", "argv", "args", "components", "fingerprint", "fingerprint_parts", "started_at",
                 "finished_at")


def released(out):
    """Turn ``out/run.json`` back into the shape the release wrote; return it."""
    run = json.loads((out / "run.json").read_text())
    old = {k: run[k] for k in RELEASED_KEYS}
    (out / "run.json").write_text(json.dumps(old, indent=2))
    return old


def evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "1", *extra)


def test_a_released_results_folder_resumes_and_a_changed_setup_is_refused(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(data, "law/planning_003.json", released_case(tag=" STUDY2"))
    t = trio(Study(STUDY_1, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}))
    out = tmp_path / "results"
    assert evaluate(cli, data, out, "--limit", "1").exit_code == 0
    old = released(out)
    assert "kind" not in old and "versions" not in old
    report = cli("report", out, "--json")
    assert report.exit_code == 0, report.stderr

    # a changed protocol setting: one line, nothing written, no call
    before, calls = (out / "run.json").read_bytes(), t.counts()
    one_line_error(evaluate(cli, data, out, "--rollouts", "2"), "rollouts", "use a new --out")
    assert (out / "run.json").read_bytes() == before and t.counts() == calls

    # the same setup resumes: the scored case is skipped, only the new one is asked
    res = evaluate(cli, data, out)
    assert res.exit_code == 0, res.output
    prober_calls = t.counts()[0] - calls[0]
    assert prober_calls == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"]["scored"] == 2
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "evaluate" and run["versions"]["setup"] == 2 and run["finished_at"]
    assert run["fingerprint_parts"] == old["fingerprint_parts"]  # the same setup, described alike
    assert {k: run[k] for k in ("command", "components")} == {k: old[k] for k in ("command", "components")}
    assert run["settings"]["mode"] == "mcq"


def test_a_released_belief_folder_is_refused_by_evaluate_in_one_line(cli, trio, tmp_path):
    bel = tmp_path / "bel"
    bel.mkdir()
    (bel / "run.json").write_text(json.dumps({"command": "belief run", "settings": {}, "fingerprint_parts": {}}))
    data = tmp_path / "data"
    write_case(data, "law/planning_003.json", released_case())
    t = trio(Study(STUDY_1))
    one_line_error(evaluate(cli, data, bel), f"--out {bel} is an 'ioa-synth belief run' results folder")
    assert t.counts() == (0, 0, 0) and sorted(p.name for p in bel.iterdir()) == ["run.json"]
