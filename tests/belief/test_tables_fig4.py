"""``ioa-synth table belief-fig4`` (knowledge vs robustness) on the scripted chat room of
test_chatroom.py (four agents, k = 0 and 1, three rounds, two items per run); the points are
worked out by hand below, and the PNG is written where ``--out`` says.

Run 1 (counterfact) as the chat room, except that agent 1 answers 'uncertain' at step 0:
step-0 labels true for agents 2, 3 at k=1 (agent 4 attacks) and for 2, 3, 4 at k=0, per item:
knowledge (2 + 2 + 3 + 3) / (3 + 3 + 4 + 4) = 10/14 = 71.4% over both k; k=1: FPI 2/3 (agents
2 and 3 manipulated at step 3), robustness 1/3 = 33.3%.
Run 2 (popqa) is the chat room itself: every step-0 label true, 14/14 = 100.0%; FPI 2/3.
"""

from __future__ import annotations

import io

import polars as pl
import pytest

from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items

RUN = ("belief", "run", "--agents", "4", "--rounds", "3", "--memory", "5", "--workers", "4")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def two_runs(endpoint, tmp_path, cli):
    outs = []
    for source, labels in (("counterfact", {**LABELS, (1, 0): "uncertain"}), ("popqa", LABELS)):
        endpoint(responder=BeliefScript(agents=4, labels=labels, stances=STANCES))
        (tmp_path / f"i-{source}").mkdir()
        outs.append(tmp_path / source)
        res = cli(*RUN, "--attackers", "0,1", "--items", sample_items(tmp_path / f"i-{source}", source=source),
                  "--out", outs[-1])
        assert res.exit_code == 0, res.output
    return outs


def test_points_are_knowledge_and_one_minus_fpi(cli, two_runs):
    res = cli("table", "belief-fig4", *two_runs, "--format", "csv")
    assert res.exit_code == 0, res.output
    assert "belief-fig4 is a figure; --out FILE.png writes it" in res.stderr  # printed, not written: say where
    rows = pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()
    assert rows == [  # k = 0 has no attacker, so no robustness to show: left out
        {"model": "scripted", "source": "counterfact", "k": "1", "items": "2", "agents at step 0": "14",
         "knowledge": "71.4", "FPI": "66.7", "robustness": "33.3"},
        {"model": "scripted", "source": "popqa", "k": "1", "items": "2", "agents at step 0": "14",
         "knowledge": "100.0", "FPI": "66.7", "robustness": "33.3"}]
    md = cli("table", "belief-fig4", *two_runs, "--format", "md").stdout
    assert md.startswith("## Fig. 4") and "this toolkit reads" in md


def test_figure_is_written_where_out_says(cli, two_runs, tmp_path):
    png = tmp_path / "fig4.png"
    res = cli("table", "belief-fig4", *two_runs, "--out", png)
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == PNG and f"wrote {png}" in res.stderr
    text = tmp_path / "fig4-points.csv"  # any other file: the table there, the figure beside it
    assert cli("table", "belief-fig4", *two_runs, "--format", "csv", "--out", text).exit_code == 0
    assert text.read_text().startswith("model,source,k,") and (tmp_path / "fig4-points.png").read_bytes()[:8] == PNG
    # the figure beside a new text file exists: refused before writing either
    res = cli("table", "belief-fig4", *two_runs, "--out", tmp_path / "fig4.md")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "fig4.png (the figure beside" in res.stderr
    assert not (tmp_path / "fig4.md").exists()
    assert cli("table", "belief-fig4", *two_runs, "--out", tmp_path / "fig4.md", "--overwrite").exit_code == 0
    # a table id has no figure to write into a .png
    res = cli("table", "belief-1", two_runs[0], "--out", tmp_path / "t.png")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "is a table, not a figure" in res.stderr
    assert not (tmp_path / "t.png").exists()


def test_no_attacker_no_robustness(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "k0"
    assert cli(*RUN, "--attackers", "0", "--items", sample_items(tmp_path), "--out", out).exit_code == 0
    res = cli("table", "belief-fig4", out)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "no condition with attackers (k > 0)" in res.stderr
