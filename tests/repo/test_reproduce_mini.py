"""``scripts/reproduce_mini.py``: every implemented table id renders end to end against
scripted servers at toy scale; chosen cells against the numbers computed by hand in
tests/*/test_tables_*.py (App. E.1's case studies, conftest.PLAN's three sessions, the
scripted chat room, the scripted team, two annotators against a scripted audit judge)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from reproduce_mini import reproduce  # noqa: E402

from ioa_synth.tables.registry import all_specs  # noqa: E402


def test_every_implemented_id_renders_with_hand_computed_cells(tmp_path):
    written = reproduce(tmp_path, "csv", echo=lambda _: None)
    assert set(written) == {s.table_id for s in all_specs() if s.implemented}

    def rows(table_id: str, key: str) -> dict[str, dict[str, str]]:
        text = written[table_id].read_text(encoding="utf-8")
        return {r[key]: r for r in pl.read_csv(io.StringIO(text), infer_schema=False).to_dicts()}

    # F1 (.8889 + .5 + 0) / 3
    assert rows("ioa-1", "prober")["prober-a"]["F1"] == "46.3"
    # judged types: referential 1 of 3 MAs hit, other 5 of 7
    assert rows("ioa-12", "type")["referential"]["prober-c"] == "33.3 (1/3)"
    assert rows("ioa-10", "type")["other"]["share"] == "70.0"
    t14 = rows("ioa-14", "re-run")["permute seed 7"]
    assert t14["P2 answer kept (%)"] == "90.9"  # 20 of 22 questions
    # divergent: S1 q1-q4, S2 q1-q4, S3 q7-q12 = 14, S2 q1 no longer; Category A: S1 q1-q4, S2 q1-q2
    assert (t14["divergent kept (%)"], t14["divergent and attributed kept (%)"]) == ("92.9 (13/14)", "83.3 (5/6)")
    # 22 questions x 3 rollouts per participant; P2's second rollout never modal: 44 of 66
    t13 = rows("ioa-13", "run")
    assert (t13["evaluate-rollouts"]["P1 (%)"], t13["evaluate-rollouts"]["P2 (%)"]) == ("100.0 (66/66)", "66.7 (44/66)")
    # bank, rent, lease, car against "the automobile", "bank approval", "a cheap lease", "on Friday":
    # exact words bank and lease (2 of 4); with WordNet synonyms rent ~ lease, car ~ automobile (4 of 4)
    t11 = rows("ioa-11", "baseline")
    assert t11["LLM-ranked expressions"]["expressions overlapping an MA (%)"] == "50.0 (2/4)"
    assert t11["MCQ prober"]["F1"] == "57.1"  # P 2/3, R 2/4
    if "WordNet (lexical)" in t11:  # WordNet installed
        assert t11["WordNet (lexical)"]["expressions overlapping an MA (%)"] == "100.0 (4/4)"
    assert [r for r in rows("ioa-16", "access")] == ["public", "private"]
    # majority: alpha 3 of 5 divergent validated; unanimous beta 1 of 3
    t22 = rows("ioa-22", "detector")
    assert (t22["alphadetector"]["Validity % (majority)"], t22["betadetector"]["Valid (unanimous)"]) == ("60.0", "0.33")
    assert rows("ioa-20", "type")["procedural"]["betadetector"] == "2"
    assert rows("ioa-21", "detector")["betadetector"]["discovery (1-5)"] == "3.33"  # 30 / 9 participants
    assert rows("ioa-6", "configuration")["mcq:probe"]["hidden-profile (5 tasks)"] == "40.0"
    assert rows("ioa-23", "configuration")["self-reflection"]["extra rounds (hidden-profile)"] == "+0.20"
    assert rows("ioa-24", "configuration")["discussion"]["hidden-profile"] == "0.0"
    assert rows("belief-1", "k")["1"]["FPI"] == "66.7"  # agents 2 and 3 of the three benign ones
    assert rows("belief-3", "k")["1"]["endorse_manipulated"] == "60.0"  # 3 of the 5 infected turns
    assert rows("belief-7", "k")["1"]["after round: endorsement"] == "33.3"  # 3 of 9 exposed turns
    # re-asked at steps 1 and 3, the scripted variants repeat the default label: 3 of 6 infected
    assert rows("belief-5", "k")["1"]["own: infection"] == "50.0"
    assert rows("belief-6", "k")["1"]["own clean, group clean"] == "50.0"
    assert rows("ioa-7", "criterion")["subtlety"]["θ"] == "≥ 3"  # θ1: subtlety 3 of 1-3
    assert rows("ioa-15", "component")["simulator"]["model"] == "gemini-3-flash-preview"
    assert rows("ioa-18", "setting")["question sets per dialogue (group size G)"]["value"] == "5"
    # the first run's question sets without C: 4 + 3 + 1 kept, 1 + 2 + 11 removed
    t17 = rows("ioa-17", "split")["all"]
    assert (t17["dialogues"], t17["questions"], t17["C removed"]) == ("3", "8", "14")
    # absolute tables: rows named by the settings that differ (prober and access; rollouts and reused questions)
    assert rows("ioa-2", "run")["prober prober-c; access private"]["F1"] == "46.3"
    assert rows("ioa-3", "run")["questions from evaluate-public; rollouts 3"]["P"] == "43.3"
    assert rows("ioa-19", "run")["prober-a"]["K"] == "7.3"  # 22 questions / 3 dialogues
    assert rows("ioa-5", "prober")["prober-c (access private)"]["R"] == "50.0"
    # every step-0 answer true: 4 + 4 benign agents at k=0 and 3 + 3 at k=1; FPI 2/3 at k=1
    fig4 = rows("belief-fig4", "k")["1"]
    assert (fig4["agents at step 0"], fig4["knowledge"], fig4["robustness"]) == ("14", "100.0", "33.3")
    assert written["belief-fig4"].with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    nat = rows("ioa-9", "dimension")["naturalness"]  # (3 + 2) / 2 against the audit's 2
    assert (nat["human mean"], nat["LLM mean"], nat["within ±0.5 (%)"]) == ("2.50", "2.00", "100.0")
