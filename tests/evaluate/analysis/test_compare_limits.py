"""``compare``'s limits: dialogues read from different input files are not paired, small
samples and p-values at the bootstrap's floor are warned about, and an exact sign-flip
permutation test sits next to the bootstrap."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from ioa_helpers import one_line_error
from ioa_synth.stats.permutation import (distinct_resamples, p_floor, sign_flip_test,
                                                     small_sample_warnings)

from .factory import case_studies, write_results


def other_data(root, same: tuple[str, ...] = ()):
    """Run B over a ``--data`` folder holding other dialogues under A's file names, except
    the cases in ``same`` (identical input files)."""
    c1, c2, c3 = case_studies()
    c2 = replace(c2, questions=["A:MA4", "A:MA3", "B", "C:not_diverging", "C:not_diverging"])
    path = write_results(root, [c1, c2, c3], data="data/other")
    run = json.loads((path / "run.json").read_text())
    for cid in same:
        run["fingerprint_parts"]["inputs"][f"{cid}.json"] = hashlib.sha256(f"data/test/{cid}".encode()).hexdigest()
    (path / "run.json").write_text(json.dumps(run))
    return path


def test_runs_over_different_dialogues_are_refused_not_paired(run_a, cli, tmp_path):
    run_b = other_data(tmp_path / "run_b")
    out = tmp_path / "cmp"
    for extra in ((), ("--intersect",)):  # nothing left to pair: --intersect is not suggested, and finds none
        err = one_line_error(cli("compare", run_a, run_b, "--out", out, *extra), "no scored case with identical inputs",
                             "the 3 shared case id(s)", "different input files", "business/planning_003")
        assert "--intersect" not in err and "paired bootstrap" not in err and not out.exists()
    one_third = other_data(tmp_path / "run_c", same=("business/troubleshooting_010",))
    one_line_error(cli("compare", run_a, one_third, "--out", out), "2 of the 3 shared case(s)",
                   "different input files", "business/planning_003", "--intersect compares the 1")


def test_intersect_pairs_only_identical_inputs_and_says_how_many(run_a, cli, tmp_path):
    run_b = other_data(tmp_path / "run_b", same=("business/troubleshooting_010", "medicine/design_review_001"))
    res = cli("compare", run_a, run_b, "--out", tmp_path / "cmp", "--intersect", "--resamples", "500")
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["pairing"]["paired"] == 2 and result["pairing"]["different_inputs"] == ["business/planning_003"]
    assert result["bootstrap"]["metrics"]["f1"]["n"] == 2
    assert any(w.startswith("1 shared case(s) were left out because the two runs read different input files")
               for w in result["warnings"])
    assert "2 dialogues paired by case id and input file; left out: 0 only in A, 0 only in B; 1 left out: " \
           "different input files in A and B" in res.stdout


def test_equal_differences_on_two_dialogues_warn_and_get_an_exact_permutation_p():
    a, b = [0.2, 0.5], [0.3, 0.6]  # every difference is +0.1
    flips = sign_flip_test(a, b)
    assert flips.exact and flips.resamples == 4 and flips.p == pytest.approx(0.5)  # 2 of 4 sign patterns as extreme
    assert flips.p_floor == 0.5
    warnings = small_sample_warnings(2, 1000)
    assert len(warnings) == 3
    assert "Only 2 dialogue(s) are paired (fewer than 10)" in warnings[0]
    assert "no two-sided test can reach p < 0.05" in warnings[1] and "2/2^2 = 0.5" in warnings[1]
    assert "at most 3 distinct resamples" in warnings[2]
    assert small_sample_warnings(30, 10_000) == []
    assert distinct_resamples(5) == 126 and p_floor(6, 10) == pytest.approx(1 / 32)


def test_sign_flip_exact_matches_enumeration_and_monte_carlo_beyond_twenty_pairs():
    import itertools

    d = [0.3, -0.1, 0.2, 0.25, 0.05, -0.02, 0.4]
    observed = abs(sum(d))
    extreme = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-12
                  for signs in itertools.product((1, -1), repeat=len(d)))
    assert sign_flip_test([0.0] * len(d), d).p == pytest.approx(extreme / 2 ** len(d))
    big = sign_flip_test([0.0] * 25, [0.1] * 25, resamples=999, seed=3)
    assert not big.exact and big.resamples == 999 and big.p == pytest.approx(2 / 1000) == big.p_floor
    assert sign_flip_test([0.5, 0.5], [0.5, 0.5]).p == 1.0


def test_compare_json_has_warnings_p_permutation_and_the_floor(run_a, cli, tmp_path):
    c1, c2, c3 = case_studies()
    run_b = write_results(tmp_path / "run_b", [c1, replace(c2, questions=["A:MA4", "A:MA3", "B", "A:MA1", "C:redundant"]),
                                               c3])
    res = cli("compare", run_a, run_b, "--out", tmp_path / "cmp", "--resamples", "1000", "--json")
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    boot = result["bootstrap"]
    assert boot["p_floor"] == pytest.approx(2 / 1001) and boot["distinct_resamples"] == 10
    assert boot["permutation"]["exact"] is True and boot["permutation"]["patterns"] == 8
    for m in ("f1", "precision", "recall"):
        assert "p_permutation" in boot["metrics"][m]
    # one dialogue of three changed, the others differ by 0: every sign pattern is as extreme
    assert boot["metrics"]["f1"]["p_permutation"] == 1.0
    assert isinstance(result["warnings"], list) and any("Only 3 dialogue(s)" in w for w in result["warnings"])
    md = (tmp_path / "cmp" / "compare.md").read_text()
    assert "p (sign-flip)" in md and "warning: Only 3 dialogue(s)" in md


def test_p_value_at_a_floor_of_one_reads_as_one():
    from ioa_synth.evaluate.analysis.compare import fmt_p

    assert fmt_p(1.0, 1.0) == "1.000"
    assert fmt_p(0.25, 0.25) == "<=0.25" and fmt_p(0.0004) == "<0.001" and fmt_p(None) == "n/a"
