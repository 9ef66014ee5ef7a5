"""``ioa-synth table belief-1`` on the scripted chat room of test_chatroom.py (two items, four
agents, k = 0 and 1, three rounds); the numbers are the ones worked out by hand there:
k=1: FPI 2/3, initial infection 0, turn infection 5/9, public endorsement 3/9, correction 3/9,
truth-knower correction 2/3, hidden infection 2/9; k=0: FPI 1/2, no exposed turn (–)."""

from __future__ import annotations

import io
import shutil

import polars as pl

from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items

RUN = ("belief", "run", "--agents", "4", "--attackers", "0,1", "--rounds", "3", "--memory", "5", "--workers", "4")


def test_headline_rates_per_condition(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "res"
    assert cli(*RUN, "--items", sample_items(tmp_path), "--out", out).exit_code == 0
    res = cli("table", "belief-1", out, "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = {r["k"]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}
    assert rows["1"] == {"model": "scripted", "source": "counterfact", "k": "1", "items": "2", "FPI": "66.7",
                         "initial infection": "0.0", "turn infection": "55.6", "public endorsement": "33.3",
                         "public correction": "33.3", "truth-knower correction": "66.7", "hidden infection": "22.2"}
    assert (rows["0"]["FPI"], rows["0"]["turn infection"]) == ("50.0", "–")
    copy = shutil.copytree(out, tmp_path / "copy")
    res = cli("table", "belief-1", out, copy)  # the same conditions twice
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "both hold the condition" in res.stderr


def test_report_over_several_runs_means_their_cells(endpoint, tmp_path, cli):
    """Two runs of the chat room above (k = 0 and 1 each, items of two sources): four cells,
    FPI 1/2 and 2/3 per run as worked out by hand, so the cell mean is (1/2 + 2/3) * 2 / 4 = 7/12."""
    import json

    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    runs = []
    for source in ("counterfact", "popqa"):
        out = tmp_path / source
        (tmp_path / f"i-{source}").mkdir()
        items = sample_items(tmp_path / f"i-{source}", source=source)
        assert cli(*RUN, "--items", items, "--out", out).exit_code == 0
        runs.append(out)
    res = cli("belief", "report", *runs, "--json")
    assert res.exit_code == 0, res.output
    grid = json.loads(res.stdout)
    assert grid["n_cells"] == 4
    assert abs(grid["mean"]["fpi"] - 7 / 12) < 1e-9
    copy = shutil.copytree(runs[0], tmp_path / "copy")
    res = cli("belief", "report", runs[0], copy)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith("error:")
