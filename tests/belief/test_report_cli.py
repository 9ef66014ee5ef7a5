"""`belief report` and the other read commands: output, the sql view, bad folders; the
N = 2 control and a changed component setup."""

from __future__ import annotations

import json

from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, ROOT, STANCES, sample_items


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
    assert table.exit_code == 0 and "belief study (scripted)" in table.stdout and "counterfact k=1" in table.stdout
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
    from ioa_synth.belief.plots import curves_figure, plot_curves

    summary = {"conditions": {"m|counterfact|k=0": {"curve": [0.0, 0.0, 0.0, 0.0]},
                              "m|counterfact|k=1": {"curve": [0.0, 0.25, 0.5, None]}}}
    fig = curves_figure(summary)
    fig.canvas.draw()
    (ax,) = fig.axes
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)  # steps are whole rounds
    low, high = ax.get_ylim()
    assert low < 0 and high > 1  # a curve at 0 is drawn above the axis line, not on it
    zero = next(line for line in ax.get_lines() if line.get_label().startswith("counterfact k=0"))
    assert list(zero.get_ydata()) == [0.0] * 4
    assert plot_curves(summary)[:8] == b"\x89PNG\r\n\x1a\n"


def _entry(n: int, curve: list, band: list | None = None, expected: int | None = None) -> dict:
    return {"n_items": n, "finished": n, "expected": n if expected is None else expected, "curve": curve,
            "ci": {"curve": band or [None] * len(curve)}}


def test_curves_show_title_items_bands_and_what_fpi_is():
    from matplotlib.collections import PolyCollection

    from ioa_synth.belief.plots import curves_figure

    summary = {"model": "qwen", "complete": True, "conversations": {"finished": 5, "expected": 5},
               "conditions": {"qwen|counterfact|k=0": _entry(2, [0.0, 0.0, 0.1]),
                              "qwen|counterfact|k=3": _entry(3, [0.0, 0.4, 0.6],
                                                             [[0, 0], [0.2, 0.6], [0.3, 0.9]])}}
    fig = curves_figure(summary)
    (ax,) = fig.axes
    assert "private infection" in ax.get_title() and "qwen" in ax.get_title()
    assert "PARTIAL" not in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["counterfact k=0 (n=2 items)", "counterfact k=3 (n=3 items)"]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1  # the condition whose summary has intervals; none for the one without
    ys = bands[0].get_paths()[0].vertices[:, 1]
    assert min(ys) == 0 and max(ys) == 0.9  # the band spans ci.curve
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "FPI (final private infection)" in caption and "last step" in caption and "95%" in caption


def test_partial_plot_says_so():
    from ioa_synth.belief.plots import curves_figure

    summary = {"model": "m", "complete": False, "conversations": {"finished": 1, "expected": 4},
               "conditions": {"m|counterfact|k=0": _entry(1, [0.0, 0.0], expected=2),
                              "m|counterfact|k=1": _entry(0, [], expected=2)}}
    (ax,) = curves_figure(summary).axes
    assert "PARTIAL: 1 of 4 conversations finished" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["counterfact k=0 (1 of 2 items)", "counterfact k=1 (missing: 0 of 2 items)"]


def test_report_of_a_partly_finished_run_names_what_is_missing(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=2, labels=LABELS, stances=STANCES))
    items, out = sample_items(tmp_path, 3), tmp_path / "res"
    result = cli("belief", "run", "--items", items, "--out", out, "--agents", "2", "--attackers", "0,1",
                 "--rounds", "1")
    assert result.exit_code == 0, result.stderr
    assert "partial" not in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["conversations"] == {"finished": 6, "expected": 6}
    # as a run stopped after one conversation leaves it: every k=1 conversation and one k=0 missing
    for path in (out / "conversations").glob("*.json"):
        if path.name != "counterfact-0_k0.json":
            path.unlink()
    result = cli("belief", "report", out)
    assert result.exit_code == 0, result.stderr
    err = result.stderr.splitlines()
    assert err[0] == ("partial results: 1 of 6 conversations finished; the rates cover finished "
                      "conversations only")
    assert "  scripted|counterfact|k=0: partial, 1 of 3 conversations finished" in err
    assert "  scripted|counterfact|k=1: missing, 0 of 3 conversations finished" in err
    assert "1 of 3" in result.stdout  # the table's items column
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["conversations"] == {"finished": 1, "expected": 6}
    k0, k1 = summary["conditions"]["scripted|counterfact|k=0"], summary["conditions"]["scripted|counterfact|k=1"]
    assert (k0["finished"], k0["expected"], k0["n_items"]) == (1, 3, 1) and k0["fpi"] == 0.5
    assert (k1["finished"], k1["expected"], k1["n_items"]) == (0, 3, 0) and k1["fpi"] is None
    assert k1["curve"] == [] and k1["reached_by_round_4"] is None
    # a 1-round run has no round 4: the key stays (released readers) and is null, as documented
    assert k0["reached_by_round_4"] is None
    doc = " ".join((ROOT / "docs" / "belief.md").read_text().split())
    assert "`reached_by_round_4` | curve[4] / curve[T]" in doc and "`null` when the run has fewer than 4 rounds" in doc
    as_json = cli("belief", "report", out, "--json")
    assert json.loads(as_json.stdout)["complete"] is False and "missing" in as_json.stderr

    # a run.json of the earlier release (no expected_conversations): the run's attacker counts
    # times the items seen still show the missing k=1 condition
    run_json = json.loads((out / "run.json").read_text())
    del run_json["expected_conversations"]
    (out / "run.json").write_text(json.dumps(run_json))
    result = cli("belief", "report", out, "--json")
    summary = json.loads(result.stdout)
    assert summary["conversations"] == {"finished": 1, "expected": 2}
    assert summary["conditions"]["scripted|counterfact|k=1"]["finished"] == 0
