"""Acceptance of issues 7 and 8, black-box through the CLI: three scripted
OpenAI-compatible servers (one per component, each with its own key) play the paper's
case-study question sets (App. E.1); ``evaluate`` scores them; a permuted re-run on the
same questions (``--permute-seed 7 --questions-from A``) in which the participants answer
two questions differently; ``compare A B`` recognises the re-run; ``report A --by ...``.
Every number is computed by hand in the comments and asserted.

The three cases (``--data``):

- ``business/troubleshooting_010``: a toolkit record, 4 typed MAs (definitional,
  procedural, criterial, scopal), study 1: A(MA1) A(MA2) A(MA3) A(MA4) C(not diverging)
  -> P 4/5 = .8, R 4/4 = 1, F1 2*.8*1/1.8 = .8889, K 5, |B| 0.
- ``law/planning_003``: released format, 4 untyped MAs, study 2: A(MA2) A(MA3) B
  C(not meaningful) C(not diverging) -> P 2/4 = .5, R 2/4 = .5, F1 .5, K 5, |B| 1.
- ``ml_research/planning_000``: a toolkit record, 2 typed MAs (definitional, procedural),
  study 3: twelve questions, none A (6 not diverging, 2 not implicit, 1 not meaningful,
  2 redundant, and q12 divergent and passing but unattributed: B) -> P 0, R 0, F1 0,
  K 12, |B| 1.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from .eval_helpers import KEYS, STUDY_1, STUDY_2, STUDY_3, Study, released_case, toolkit_case, write_case
from ioa_synth.evaluate.analysis.results import Record, RunInfo, Summary, load_results

CASE1, CASE2, CASE3 = "business/troubleshooting_010", "law/planning_003", "ml_research/planning_000"


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data" / "test"
    typed = toolkit_case("business", "troubleshooting", n_mas=4)
    typed["profiles"]["members"][0]["name"] += " STUDY1"  # the marker the scripted servers play study 1 on
    write_case(root, f"{CASE1}.json", typed)
    write_case(root, f"{CASE2}.json", released_case(tag=" STUDY2"))
    write_case(root, f"{CASE3}.json", toolkit_case("ml_research", "planning", n_mas=2))
    return root


def run(cli, *args):
    return cli(*[str(a) for a in args])


def test_evaluate_rerun_compare_and_report(cli, trio, data, tmp_path):
    # ---- run A ------------------------------------------------------------------------------
    t = trio(Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}))
    a_dir, b_dir = tmp_path / "RESULTS_A", tmp_path / "RESULTS_B"
    res = run(cli, "evaluate", "--data", data, "--out", a_dir, "--workers", "2")
    assert res.exit_code == 0, res.output
    for server, comp in ((t.prober, "prober"), (t.simulator, "simulator"), (t.validity_filter, "validity_filter")):
        assert server.requests and {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEYS[comp]}"}
    assert t.counts() == (3, 6, 3)  # 1 prober call, 2 simulator calls, 1 filter call per case

    sa = json.loads((a_dir / "summary.json").read_text())
    assert sa["cases"] == {"requested": 3, "scored": 3, "failed": 0} and sa["complete"] is True
    assert sa["precision"] == pytest.approx((0.8 + 0.5 + 0) / 3, abs=1e-4)     # .4333
    assert sa["recall"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-4)          # .5
    assert sa["f1"] == pytest.approx((0.8889 + 0.5 + 0) / 3, abs=1e-4)         # .4630
    assert sa["mean_k"] == pytest.approx(22 / 3, abs=1e-4) and sa["mean_b"] == pytest.approx(2 / 3, abs=1e-4)
    # C: case 1 nd 1; case 2 nm 1, nd 1; case 3 nd 6, ni 2, nm 1, red 2
    assert sa["c_breakdown"] == {"not_diverging": 8, "not_meaningful": 2, "not_implicit": 2, "redundant": 2}
    # typed MAs: case 1 hits all four, case 3 hits neither of its two; the untyped MAs are counted too
    assert sa["type_recall"] == {"definitional": {"hit": 1, "total": 2, "recall": 0.5},
                                 "procedural": {"hit": 1, "total": 2, "recall": 0.5},
                                 "criterial": {"hit": 1, "total": 1, "recall": 1.0},
                                 "scopal": {"hit": 1, "total": 1, "recall": 1.0},
                                 "untyped": {"hit": 2, "total": 4, "recall": 0.5}}

    # compare's reader reads evaluate's output without loss
    results_a = load_results(a_dir)
    assert sorted(results_a.scored) == [CASE1, CASE2, CASE3]
    for path in (a_dir / "records").rglob("*.json"):
        raw = json.loads(path.read_text())
        assert Record.model_validate(raw).model_dump(exclude_unset=True) == raw
    for name, model in (("run.json", RunInfo), ("summary.json", Summary)):
        raw = json.loads((a_dir / name).read_text())
        assert model.model_validate(raw).model_dump(exclude_unset=True) == raw

    # ---- run B: same questions, permuted; M2 now answers S1 q5 differently (divergent, B) and
    # S2 q1 like M1 (no longer divergent: C not diverging) --------------------------------------
    s1b = [replace(q, m2="B") if q.stem == "S1 q5" else q for q in STUDY_1]
    s2b = [replace(q, m2="A") if q.stem == "S2 q1" else q for q in STUDY_2]
    study_b = Study(STUDY_3, {"STUDY1": s1b, "STUDY2": s2b})
    t.simulator.responder, t.validity_filter.responder = study_b.simulator, study_b.filter
    before = t.counts()
    res = run(cli, "evaluate", "--data", data, "--out", b_dir, "--workers", "2", "--permute-seed", "7",
              "--questions-from", a_dir)
    assert res.exit_code == 0, res.output
    assert t.counts()[0] == before[0]  # no prober call: the questions of A
    sb = json.loads((b_dir / "summary.json").read_text())
    # case 1: A A A A B -> P 4/4, R 1, F1 1; case 2: C(nd) A(MA3) B C(nm) C(nd) -> P 1/4, R 1/4, F1 .25; case 3 as in A
    assert sb["f1"] == pytest.approx((1 + 0.25 + 0) / 3, abs=1e-4)
    assert sb["precision"] == pytest.approx((1 + 0.25) / 3, abs=1e-4)
    assert sb["recall"] == pytest.approx((1 + 0.25) / 3, abs=1e-4)
    assert sb["mean_b"] == pytest.approx(3 / 3, abs=1e-4)
    assert sb["permute_seed"] == 7

    # ---- compare A B ---------------------------------------------------------------------------
    res = run(cli, "compare", a_dir, b_dir, "--out", tmp_path, "--json")
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)
    assert json.loads((tmp_path / "compare.json").read_text()) == c and (tmp_path / "compare.md").exists()
    assert c["pairing"] == {"paired": 3, "intersect": False, "only_a": [], "only_b": [], "different_inputs": [],
                            "unverified": []}  # evaluate stores each input file's sha256: pairs are verified
    assert c["rerun"] == {"kind": "permute_seed", "why": "same data, permute_seed none -> 7"}
    cons = c["consistency"]
    # 22 questions matched by key in both runs; 2 changed their divergent outcome (S1 q5, S2 q1)
    assert (cons["matched"], cons["only_a"], cons["only_b"]) == (22, 0, 0)
    assert cons["outcome_unchanged"] == pytest.approx(20 / 22)
    assert cons["answers_unchanged"] == {"M1": 1.0, "M2": pytest.approx(20 / 22)}
    # Table 14's "divergent and attributed after permutation": Category A in A is case 1's q1-q4
    # (MA1-MA4) and case 2's q1 (MA2), q2 (MA3): 6; in B case 2's q1 is no longer divergent: 5 of 6
    # kept, each to the same MA
    assert cons["attributed_kept"] == {"before": 6, "kept": 5, "same_ma": 5, "share": pytest.approx(5 / 6),
                                       "share_same_ma": pytest.approx(5 / 6)}
    # divergent in A: case 1 q1-q4, case 2 all but the not-diverging C (4), case 3 the B and the
    # nm 1, ni 2, red 2 Cs (6): 14; only case 2's q1 stops diverging in B
    assert cons["divergent_kept"] == {"before": 14, "kept": 13, "share": pytest.approx(13 / 14)}
    assert (tmp_path / "order_sensitivity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted((x["case_id"], x["divergent_a"], x["divergent_b"]) for x in cons["changed"]) == [
        (CASE1, False, True), (CASE2, True, False)]
    # per-dialogue F1 differences B - A: +.1111, -.25, 0 -> mean -.0463
    f1 = c["bootstrap"]["metrics"]["f1"]
    assert cons["delta_f1"] == f1["diff"] == pytest.approx((0.1111 - 0.25) / 3, abs=1e-4)
    assert f1["mean_a"] == pytest.approx(sa["f1"], abs=1e-4) and f1["mean_b"] == pytest.approx(sb["f1"], abs=1e-4)
    # resampling 3 dialogues: the extreme means -.25 (all three the law case) and +.1111 each
    # have probability 1/27 > 2.5%, so the 95% percentile interval is [-.25, +.1111]
    assert (f1["ci_low"], f1["ci_high"]) == (pytest.approx(-0.25, abs=1e-4), pytest.approx(0.1111, abs=1e-4))
    # P(mean >= 0) = P(no law case drawn) = (2/3)^3 = 8/27; P(mean <= 0) = 20/27: p ~ 2 * 8/27
    assert f1["p"] == pytest.approx(16 / 27, abs=0.03)
    assert c["bootstrap"]["metrics"]["precision"]["diff"] == pytest.approx((0.2 - 0.25) / 3, abs=1e-4)
    assert c["bootstrap"]["metrics"]["recall"]["diff"] == pytest.approx((0 - 0.25) / 3, abs=1e-4)
    assert c["means"]["a"]["mean_b"] == pytest.approx(2 / 3) and c["means"]["b"]["mean_b"] == pytest.approx(1.0)
    # untyped MAs are case 2's: hit MA2, MA3 in A, only MA3 in B
    assert c["type_recall"]["untyped"] == {"a": {"hit": 2, "total": 4, "recall": 0.5},
                                           "b": {"hit": 1, "total": 4, "recall": 0.25}}
    assert c["type_recall"]["criterial"]["b"] == {"hit": 1, "total": 1, "recall": 1.0}
    # C reasons: A nd 8, nm 2, ni 2, red 2 (14); B: case 1 none, case 2 nd 2 nm 1, case 3 as A -> nd 8 of 14
    assert c["c_breakdown"]["a"]["not_diverging"] == {"count": 8, "share": pytest.approx(8 / 14)}
    assert c["c_breakdown"]["b"]["not_diverging"] == {"count": 8, "share": pytest.approx(8 / 14)}
    assert c["c_breakdown"]["b"]["redundant"] == {"count": 2, "share": pytest.approx(2 / 14)}

    # ---- report A --by domain | task_type | type -----------------------------------------------
    res = run(cli, "report", a_dir, "--by", "domain", "--json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    got = {g["group"]: (g["cases"], g["precision"], g["recall"], g["f1"], g["mean_k"], g["mean_b"])
           for g in rep["groups"]}
    assert got == {"business": (1, 0.8, 1.0, 0.8889, 5.0, 0.0), "law": (1, 0.5, 0.5, 0.5, 5.0, 1.0),
                   "ml_research": (1, 0.0, 0.0, 0.0, 12.0, 1.0)}
    assert rep["overall"]["f1"] == pytest.approx(1.3889 / 3) and rep["overall"]["cases"] == 3
    assert {p.name for p in (a_dir / "reports").iterdir()} >= {"report_domain.json", "report_domain.md",
                                                              "report_domain.png"}

    rep = json.loads(run(cli, "report", a_dir, "--by", "task_type", "--json").stdout)
    got = {g["group"]: (g["cases"], g["precision"], g["recall"], g["f1"], g["mean_k"], g["mean_b"])
           for g in rep["groups"]}
    # planning = law + ml_research: P (.5 + 0)/2, R (.5 + 0)/2, F1 (.5 + 0)/2, K (5 + 12)/2, |B| (1 + 1)/2
    assert got == {"planning": (2, 0.25, 0.25, 0.25, 8.5, 1.0),
                   "troubleshooting": (1, 0.8, 1.0, 0.8889, 5.0, 0.0)}

    rep = json.loads(run(cli, "report", a_dir, "--by", "type", "--json").stdout)
    # Table 12 order (protocol MA_TYPES: definitional, referential, criterial, scopal, ..., procedural), untyped last
    assert [(g["group"], g["hit"], g["total"]) for g in rep["groups"]] == [
        ("definitional", 1, 2), ("criterial", 1, 1), ("scopal", 1, 1), ("procedural", 1, 2), ("untyped", 2, 4)]
    res = run(cli, "report", a_dir, "--by", "type")
    assert res.exit_code == 0 and "all" in res.stdout and "6" in res.stdout  # 6 of 10 MAs hit overall
