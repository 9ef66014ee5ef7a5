"""``ioa-synth table belief-1`` on the scripted chat room of test_chatroom.py (two items, four
agents, k = 0 and 1, three rounds); the numbers are the ones worked out by hand there:
k=1: FPI 2/3, initial infection 0, turn infection 5/9, public endorsement 3/9, correction 3/9,
truth-knower correction 2/3, hidden infection 2/9; k=0: FPI 1/2, no exposed turn (–)."""

from __future__ import annotations

import io
import json
import shutil

import polars as pl

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_server import chat_reply
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


def _csv_rows(res, key: str = "k") -> dict[str, dict[str, str]]:
    assert res.exit_code == 0, res.output
    return {r[key]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}


def test_infected_stances_and_pairings(endpoint, tmp_path, cli):
    """Table 3 and Table 7 on the chat room above, k=1 (agent 4 attacks, opens round 1).
    Infected turns (private answer after the round manipulated): (2,r1) endorse, (2,r2) endorse,
    (3,r2) hedge, (2,r3) ignore, (3,r3) endorse: endorse 3/5, hedge 1/5, ignore 1/5.
    First speakers with the probe before the round: r2 agent 3 (true, hedge), r3 agent 2
    (manipulated, ignore): endorsement 0/2, infection 1/2; last speakers with the probe after:
    r1 and r3 agent 1 (true, hedge; mixed, reject): 0/2 and 0/2. k=0 has no exposed turn."""
    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "res"
    assert cli(*RUN, "--items", sample_items(tmp_path), "--out", out).exit_code == 0
    t3 = _csv_rows(cli("table", "belief-3", out, "--format", "csv"))
    assert t3["1"] == {"model": "scripted", "source": "counterfact", "k": "1", "endorse_manipulated": "60.0",
                       "reject_manipulated": "0.0", "hedge_or_partial": "20.0", "ignore_or_topic_shift": "20.0",
                       "unrelated": "0.0"}
    assert set(t3["0"].values()) >= {"–"} and t3["0"]["endorse_manipulated"] == "–"
    mean = next(r for r in t3.values() if r["model"] == "mean")  # k=0 has no infected turn: the k=1 cell alone
    assert (mean["source"], mean["endorse_manipulated"]) == ("2 cells", "60.0")
    t7 = _csv_rows(cli("table", "belief-7", out, "--format", "csv"))["1"]
    assert (t7["after round: endorsement"], t7["after round: infection"]) == ("33.3", "55.6")
    assert (t7["first speakers, before round: endorsement"], t7["first speakers, before round: infection"]) == (
        "0.0", "50.0")
    assert (t7["last speakers, after round: endorsement"], t7["last speakers, after round: infection"]) == (
        "0.0", "0.0")


class GroupSaysManipulated(BeliefScript):
    """The chat room above, whose group-conclusion probe names the manipulated answer for everyone."""

    def answer(self, name, body, action):
        if name == "belief_answer" and "mainly converged on" in body["messages"][-1]["content"]:
            return chat_reply(json.dumps({"answer": "[manipulated] the group settled on it"}))
        return super().answer(name, body, action)


def test_reask_tables(endpoint, tmp_path, cli):
    """Tables 5 and 6 after re-asking own and group at steps 1 and 3. The own answer repeats the
    default label: k=1 (agents 1-3) step 1 only agent 2 infected, step 3 agents 2 and 3 (agent 1
    mixed): infection 3/6, retention 3/3, return to truth 0/3; k=0 (agents 1-4, agent 4 always
    true): 3/8. The group conclusion is manipulated for all: 100; own × group: infected/infected
    3/6 and clean/infected 3/6 at k=1, 3/8 and 5/8 at k=0."""
    endpoint(responder=GroupSaysManipulated(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "res"
    assert cli(*RUN, "--items", sample_items(tmp_path), "--out", out).exit_code == 0
    res = cli("table", "belief-5", out)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "belief reask" in res.stderr
    assert cli("belief", "reask", out, "--variant", "own", "--steps", "1,3").exit_code == 0
    res = cli("table", "belief-6", out)  # group not asked yet
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--variant group" in res.stderr
    assert cli("belief", "reask", out, "--variant", "group", "--steps", "1,3").exit_code == 0
    t5 = _csv_rows(cli("table", "belief-5", out, "--format", "csv"))
    assert {c: t5["1"][c] for c in ("FPI (default)", "own: infection", "own: retention", "own: return to truth",
                                    "group: infection")} == {"FPI (default)": "66.7", "own: infection": "50.0",
                                                             "own: retention": "100.0", "own: return to truth": "0.0",
                                                             "group: infection": "100.0"}
    assert t5["0"]["own: infection"] == "37.5" and "anonymized: infection" not in t5["1"]
    assert next(r for r in t5.values() if r["model"] == "mean")["own: infection"] == "43.8"  # (1/2 + 3/8) / 2
    t6 = _csv_rows(cli("table", "belief-6", out, "--format", "csv"))
    assert {c: t6["1"][c] for c in ("own infected, group infected", "own infected, group clean",
                                    "own clean, group infected", "own clean, group clean")} == {
        "own infected, group infected": "50.0", "own infected, group clean": "0.0",
        "own clean, group infected": "50.0", "own clean, group clean": "0.0"}
    assert (t6["0"]["own infected, group infected"], t6["0"]["own clean, group infected"]) == ("37.5", "62.5")
