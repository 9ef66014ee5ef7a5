"""`belief report` and the other read commands: output, the sql view, bad folders; the
N = 2 control and a changed component setup."""

from __future__ import annotations

import json

from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items


def test_report_json_sql_and_control(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=2, labels=LABELS, stances=STANCES))
    items, out = sample_items(tmp_path, 2), tmp_path / "res"
    result = cli("belief", "run", "--items", items, "--out", out, "--agents", "2", "--attackers", "1", "--rounds", "2")
    assert result.exit_code == 0, result.stderr
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    assert [a["role"] for a in conv["agents"]] == ["benign", "attacker"]
    result = cli("belief", "report", out, "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    entry = summary["conditions"]["scripted|counterfact|k=1"]
    assert entry["n_items"] == 2 and entry["n_benign"] == 2 and "ci" in entry
    table = cli("belief", "report", out)
    assert table.exit_code == 0 and "scripted|counterfact|k=1" in table.stdout
    assert f"wrote {out / 'curves.png'}" in " ".join(table.stdout.split())
    rows = cli("sql", out, "SELECT component, count(*) AS n FROM belief_calls GROUP BY 1 ORDER BY 1", "--json")
    assert rows.exit_code == 0, rows.stderr
    counts = {r["component"]: r["n"] for r in json.loads(rows.stdout)}
    # per item: 4 utterances, 3 probes (steps 0-2) and their labels, 2 stance labels
    assert counts == {"agent": 2 * 7, "belief_judge": 2 * 3, "stance_judge": 2 * 2}


def test_changed_component_is_refused(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=2))
    items, out = sample_items(tmp_path, 1), tmp_path / "res"
    args = ("belief", "run", "--items", items, "--out", out, "--agents", "2", "--attackers", "1", "--rounds", "1")
    assert cli(*args).exit_code == 0
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"agent": {"temperature": 0.9}}))
    result = cli(*args, "--config", cfg)
    assert result.exit_code == 2 and "agent.temperature" in result.stderr


def test_report_on_a_folder_without_results(tmp_path, cli):
    result = cli("belief", "report", tmp_path)
    assert result.exit_code == 2 and result.stderr.startswith("error:") and "run.json" in result.stderr
    result = cli("belief", "report", tmp_path / "missing")
    assert result.exit_code == 2 and "no such results folder" in result.stderr


def test_report_on_a_folder_of_another_kind_is_one_clear_line(tmp_path, cli, endpoint, seeds_file):
    from ioa_helpers import one_line_error

    evaluate = tmp_path / "ev"  # what 'evaluate' leaves: its run.json names other components
    (evaluate / "records").mkdir(parents=True)
    (evaluate / "run.json").write_text(json.dumps({"command": "evaluate", "components": {"prober": {"model": "m"}}}))
    for command in (("report", evaluate), ("reask", evaluate, "--variant", "own")):
        result = cli("belief", *command)
        assert result.exit_code == 2
        line = one_line_error(result, "evaluate", "not an 'ioa-synth belief run' results folder")
        assert "KeyError" not in line and "'agent'" not in line
    odd = tmp_path / "odd"  # a run.json of no known command, and one without components
    odd.mkdir()
    (odd / "run.json").write_text(json.dumps({"components": {}}))
    line = one_line_error(cli("belief", "report", odd), "not a 'belief run' results folder")
    assert "'agent'" not in line
    (odd / "run.json").write_text(json.dumps({"command": "belief run"}))
    (odd / "conversations").mkdir()
    (odd / "conversations" / "x_k0.json").write_text(json.dumps({"item": {}, "k": 0}))
    one_line_error(cli("belief", "report", odd), "names no agent model")
    (odd / "run.json").write_text(json.dumps({"command": "belief run", "components": {"agent": {"model": "m"}}}))
    one_line_error(cli("belief", "report", odd), "x_k0.json", "not a conversation record", "turns")
    endpoint()
    built = tmp_path / "built"
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", built, "--workers", "1").exit_code == 0
    one_line_error(cli("belief", "report", built), "build", "not an 'ioa-synth belief run' results folder")


def test_curves_have_integer_steps_and_show_zero_curves():
    from ioa_synth.belief.report import curves_figure, plot_curves

    summary = {"conditions": {"m|counterfact|k=0": {"curve": [0.0, 0.0, 0.0, 0.0]},
                              "m|counterfact|k=1": {"curve": [0.0, 0.25, 0.5, None]}}}
    fig = curves_figure(summary)
    fig.canvas.draw()
    (ax,) = fig.axes
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)  # steps are whole rounds
    low, high = ax.get_ylim()
    assert low < 0 and high > 1  # a curve at 0 is drawn above the axis line, not on it
    zero = next(line for line in ax.get_lines() if line.get_label() == "m|counterfact|k=0")
    assert list(zero.get_ydata()) == [0.0] * 4
    assert plot_curves(summary)[:8] == b"\x89PNG\r\n\x1a\n"
