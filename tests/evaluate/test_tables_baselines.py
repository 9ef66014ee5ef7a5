"""``ioa-synth table ioa-11`` (lexical and prompting baselines) and ``ioa-13`` (simulator
stability) on evaluate folders made by real runs against the scripted servers; every expected
cell is computed by hand below.

Table 11: test_wordnet_baseline.py's six-turn dialogue, run three times with the same four
MCQs (A(MA1), C, A(MA2), B over 4 MAs: P 2/3, R 2/4, F1 2·(2/3)·(1/2)/(2/3 + 1/2) = .5714, K 4):

- ``--mode wordnet`` picks bank, rent, lease, car (most WordNet senses);
- ``--mode ambiguity``, whose scripted model picks the same four words;
- ``--mode mcq``, no expressions.

Lexical overlap with the MA surface forms "the automobile", "bank approval", "a cheap lease",
"on Friday" (content words: {automobile}, {bank, approval}, {cheap, lease}, {friday}), at
least half of the shorter side's content words found:

- exact tokens (ambiguity): bank ∈ {bank, approval} yes; rent: no; lease ∈ {cheap, lease} yes;
  car: no → 2 of 4 = 50.0%;
- WordNet synonyms too (wordnet): rent ~ lease (rent.v.01), car ~ automobile (car.n.01) → 4 of 4
  = 100.0%.
"""

from __future__ import annotations

import io

import polars as pl

from .eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study, released_case, write_case
from .test_modes import ModeStudy, evaluate
from .test_wordnet_baseline import QUESTIONS, lexicon, wordnet_case  # noqa: F401  (lexicon: a fixture)

PICKED = [("bank", 2), ("rent", 1), ("lease", 3), ("car", 1)]
SURFACE = {"MA1": {"automobile"}, "MA2": {"bank", "approval"}, "MA3": {"cheap", "lease"}, "MA4": {"friday"}}
SYNONYMS = {"rent": {"lease"}, "car": {"automobile"}}  # WordNet 3.0: rent.v.01, car.n.01


def rows(cli, *args) -> list[dict[str, str]]:
    res = cli("table", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()


def test_lexical_baselines(cli, trio, tmp_path, lexicon):  # noqa: F811
    data = tmp_path / "data"
    write_case(data, "business/planning_000.json", wordnet_case())
    outs = {}
    for mode in ("wordnet", "ambiguity", "mcq"):
        trio(ModeStudy(QUESTIONS, expressions=[PICKED]))
        outs[mode] = tmp_path / mode
        assert evaluate(cli, data, outs[mode], "--mode", mode).exit_code == 0

    # the overlap by hand: one word (each side has at most one word of the other)
    exact = sum(any(w in forms for forms in SURFACE.values()) for w, _ in PICKED)
    with_synonyms = sum(any(({w} | SYNONYMS.get(w, set())) & forms for forms in SURFACE.values()) for w, _ in PICKED)
    assert (exact, with_synonyms) == (2, 4)

    t11 = {r["baseline"]: r for r in rows(cli, "ioa-11", outs["wordnet"], outs["ambiguity"], outs["mcq"])}
    assert list(t11) == ["WordNet (lexical)", "LLM-ranked expressions", "MCQ prober"]
    assert t11["WordNet (lexical)"] == {"baseline": "WordNet (lexical)", "dialogues": "1", "P": "66.7", "R": "50.0",
                                        "F1": "57.1", "K": "4.0", "expressions overlapping an MA (%)": "100.0 (4/4)"}
    assert t11["LLM-ranked expressions"]["expressions overlapping an MA (%)"] == "50.0 (2/4)"
    assert (t11["MCQ prober"]["F1"], t11["MCQ prober"]["expressions overlapping an MA (%)"]) == ("57.1", "–")


def test_simulator_stability(cli, trio, tmp_path):
    # test_stability_report.py's run: study 1's five questions, k = 3; M2's second rollout picks
    # another option on every question. P1: 5 answers x 3 picks, all modal = 15/15 = 100.0%;
    # P2: rollouts 1 and 3 modal = 10/15 = 66.7%.
    root = tmp_path / "data" / "test"
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    study = Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})
    study.flips = {"M2": 2}
    trio(study)
    out = tmp_path / "k3"
    assert cli("evaluate", "--data", root, "--out", out, "--workers", "1", "--rollouts", "3").exit_code == 0
    first, paper = rows(cli, "ioa-13", out)
    assert first == {"run": "k3", "dialogues": "1", "k": "3", "P1 (%)": "100.0 (15/15)", "P2 (%)": "66.7 (10/15)"}
    assert (paper["P1 (%)"], paper["P2 (%)"]) == ("97.7", "96.8")  # App. C.1

    trio(Study(STUDY_3, {"STUDY1": STUDY_1}))
    one = tmp_path / "k1"
    assert cli("evaluate", "--data", root, "--out", one, "--workers", "1").exit_code == 0
    res = cli("table", "ioa-13", out, one)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "k1 ran one rollout" in res.stderr and "--rollouts K" in res.stderr
