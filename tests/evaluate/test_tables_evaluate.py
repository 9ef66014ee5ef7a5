"""``ioa-synth table`` on evaluate results folders made by real runs against the scripted
servers (the case studies of App. E.1, as in test_acceptance.py); every expected cell is
computed by hand below.

Run A (public access, prober model ``prober-a``) and run C (``--access private``, prober
``prober-c``), each on the three cases of test_acceptance.py:

- case 1 (4 typed MAs: definitional, procedural, criterial, scopal): P .8, R 1, F1 .8889, K 5
- case 2 (4 untyped MAs, MA2 and MA3 hit): P .5, R .5, F1 .5, K 5
- case 3 (2 typed MAs: definitional, procedural, none hit): P 0, R 0, F1 0, K 12

Means: P (0.8 + 0.5 + 0)/3 = 43.3%, R (1 + .5 + 0)/3 = 50.0%, F1 (.8889 + .5 + 0)/3 = 46.3%,
K 22/3 = 7.3. Types: definitional 1/2, procedural 1/2, criterial 1/1, scopal 1/1, untyped
2/4, all 6/10 = 60.0%; MAs per type 2, 2, 1, 1, 4 of 10.
"""

from __future__ import annotations

import io
from dataclasses import replace
import shutil

import polars as pl
import pytest

from ioa_synth.testing.type_judge import TypeJudgeResponder

from .eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study, toolkit_case, write_case
from .test_acceptance import data  # noqa: F401  (the three cases, a fixture)


@pytest.fixture
def runs(cli, trio, data, tmp_path):  # noqa: F811
    study = Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})
    trio(study, models={"prober": "prober-a"})
    a = tmp_path / "A"
    assert cli("evaluate", "--data", data, "--out", a).exit_code == 0
    trio(study, models={"prober": "prober-c"})
    c = tmp_path / "C"
    res = cli("evaluate", "--data", data, "--out", c, "--access", "private")
    assert res.exit_code == 0, res.output
    return a, c


def rows(cli, *args) -> list[dict[str, str]]:
    res = cli("table", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()


def test_prober_scores_type_recall_mix_and_access(cli, runs):
    a, c = runs
    t1 = rows(cli, "ioa-1", a, c)
    assert [r["prober"] for r in t1] == ["prober-a", "prober-c"]
    # identical answers in both runs: no difference, so no significance mark
    assert t1[0] == {"prober": "prober-a", "dialogues": "3", "P": "43.3", "R": "50.0", "F1": "46.3", "K": "7.3"}
    assert t1[1]["F1"] == "46.3"

    t12 = {r["type"]: r for r in rows(cli, "ioa-12", a, c)}
    assert t12["definitional"]["prober-a"] == "50.0 (1/2)" and t12["criterial"]["prober-c"] == "100.0 (1/1)"
    assert t12["untyped"]["prober-a"] == "50.0 (2/4)" and t12["all"]["prober-c"] == "60.0 (6/10)"
    assert list(t12) == ["definitional", "criterial", "scopal", "procedural", "untyped", "all"]  # Table 12's order

    t10 = {r["type"]: r for r in rows(cli, "ioa-10", a)}
    assert (t10["definitional"]["MAs"], t10["definitional"]["share"], t10["definitional"]["paper"]) == ("2", "20.0", "24.2")
    assert (t10["referential"]["MAs"], t10["referential"]["share"]) == ("0", "0.0")
    assert (t10["untyped"]["share"], t10["all"]["MAs"]) == ("40.0", "10")

    t16 = rows(cli, "ioa-16", c, a)  # rows in the paper's order of settings, whatever the folders' order
    assert [r["access"] for r in t16] == ["public", "private"] and t16[1]["P"] == "43.3"


def test_formats(cli, runs):
    a, _ = runs
    md = cli("table", "ioa-1", a, "--format", "md").stdout
    assert md.startswith("## Table 1") and "| prober-a " in md and "43.3" in md
    tex = cli("table", "ioa-12", a, "--format", "latex").stdout
    assert "\\begin{tabular}{lr}" in tex and "\\toprule" in tex and "60.0 (6/10) \\\\" in tex
    term = cli("table", "ioa-1", a).stdout
    assert "prober-a" in term and "46.3" in term


def test_mismatched_folders(cli, runs, tmp_path):
    a, c = runs
    res = cli("table", "ioa-10", a, c)  # one folder only
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("error: ioa-10 needs 1 × 'ioa-synth evaluate' results folder") and "(got 2)" in res.stderr
    copy = shutil.copytree(a, tmp_path / "copy")
    res = cli("table", "ioa-16", a, copy)  # the same setting twice
    assert res.exit_code == 2 and "both ran --access public" in res.stderr
    res = cli("table", "ioa-6", a)  # an evaluate folder where collab folders are wanted
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "is an 'ioa-synth evaluate' results folder; ioa-6 needs" in res.stderr and "collab run" in res.stderr


def test_judged_types_fill_the_type_tables(cli, runs, data, endpoint, tmp_path):  # noqa: F811
    # the judge calls every MA1 'referential' and every other MA 'other', ahead of the records'
    # own types. Hits: case 1 all four (MA1 + 3 others), case 2 MA2, MA3 (others), case 3 none:
    # referential 1 of 3 = 33.3%, other 5 of 7 = 71.4%; no MA stays untyped.
    a, _ = runs
    endpoint(responder=TypeJudgeResponder(lambda i: "referential" if i == "MA1" else "other"), env="TYPE_JUDGE")
    labels = tmp_path / "labels"
    res = cli("label-types", data, "--out", labels)
    assert res.exit_code == 0, res.output
    t12 = {r["type"]: r for r in rows(cli, "ioa-12", a, labels)}
    assert list(t12) == ["referential", "other", "all"]
    assert (t12["referential"]["prober-a"], t12["other"]["prober-a"]) == ("33.3 (1/3)", "71.4 (5/7)")
    t10 = {r["type"]: r for r in rows(cli, "ioa-10", labels, a)}  # any order of the folders
    assert (t10["referential"]["share"], t10["other"]["share"], t10["other"]["paper"]) == ("30.0", "70.0", "0.2")
    assert "untyped" not in t10


def test_significance_mark(cli, trio, tmp_path):
    # four dialogues, all study 1 for prober A (P .8, R 1, F1 .8889 each) and study 3 for B
    # (0 / 0 / 0): every resample of the paired differences is -.8889, so the two-sided p is
    # 2 * 1 / 10,001 < .05 and B's P, R and F1 carry the mark; A (the reference) carries none.
    data = tmp_path / "data" / "test"
    for i, (domain, task) in enumerate((("law", "planning"), ("business", "design_review"),
                                        ("medicine", "coordination"), ("ml_research", "brainstorming"))):
        case = toolkit_case(domain, task, n_mas=4)
        case["profiles"]["members"][0]["name"] += " STUDY1"
        write_case(data, f"{domain}/{task}_00{i}.json", case)
    outs = []
    for name, study in (("prober-a", Study(STUDY_3, {"STUDY1": STUDY_1})), ("prober-b", Study(STUDY_3))):
        trio(study, models={"prober": name})
        outs.append(tmp_path / name)
        assert cli("evaluate", "--data", data, "--out", outs[-1]).exit_code == 0
    t1 = {r["prober"]: r for r in rows(cli, "ioa-1", *outs)}
    assert (t1["prober-a"]["P"], t1["prober-a"]["F1"]) == ("80.0", "88.9")
    assert (t1["prober-b"]["P"], t1["prober-b"]["R"], t1["prober-b"]["F1"]) == ("0.0†", "0.0†", "0.0†")


def test_order_sensitivity(cli, trio, data, tmp_path):  # noqa: F811
    # test_acceptance.py's permuted re-run: M2 answers S1 q5 and S2 q1 differently. 22 questions
    # matched; outcome kept 20/22 = 90.9%; P1 keeps every answer (100.0), P2 20/22 (90.9).
    # Divergent in A: S1 q1-q4, S2 q1-q4, S3 q7-q12 = 14; S2 q1 is no longer divergent: 13/14 = 92.9%.
    # Category A in A: S1 q1-q4 (MA1-4), S2 q1 (MA2), S2 q2 (MA3) = 6; S2 q1 drops out, the other
    # five stay Category A with the same MA: 5/6 = 83.3% both.
    t = trio(Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}))
    a, b = tmp_path / "A", tmp_path / "B"
    assert cli("evaluate", "--data", data, "--out", a).exit_code == 0
    s1b = [replace(q, m2="B") if q.stem == "S1 q5" else q for q in STUDY_1]
    s2b = [replace(q, m2="A") if q.stem == "S2 q1" else q for q in STUDY_2]
    study_b = Study(STUDY_3, {"STUDY1": s1b, "STUDY2": s2b})
    t.simulator.responder, t.validity_filter.responder = study_b.simulator, study_b.filter
    assert cli("evaluate", "--data", data, "--out", b, "--permute-seed", "7", "--questions-from", a).exit_code == 0
    (row,) = rows(cli, "ioa-14", a, b)
    assert row == {"re-run": "permute seed 7", "questions": "22", "outcome kept (%)": "90.9",
                   "P1 answer kept (%)": "100.0", "P2 answer kept (%)": "90.9", "divergent kept (%)": "92.9 (13/14)",
                   "divergent and attributed kept (%)": "83.3 (5/6)", "attributed to the same MA (%)": "83.3 (5/6)"}
    c = tmp_path / "C"  # a plain second run, not a permuted re-run
    assert cli("evaluate", "--data", data, "--out", c, "--access", "private").exit_code == 0
    res = cli("table", "ioa-14", a, c)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "is not a permuted re-run of" in res.stderr


def test_folders_over_other_dialogues_are_named_in_a_note(cli, runs, tmp_path):
    a, c = runs
    shutil.rmtree(c / "records" / "law")  # C now holds two of the three dialogues
    md = cli("table", "ioa-1", a, c, "--format", "md").stdout
    assert "C scored 2 dialogues, 2 of them shared with A (3)" in md
    assert "shared with" not in cli("table", "ioa-1", a, "--format", "md").stdout
