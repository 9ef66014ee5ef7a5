"""``estimate build --pass-rates FILE``: ``after_regeneration`` is the cumulative share passing
a stage (first attempt or its one regeneration), so a file, or a file whose gaps the defaults
or the build directory's measured rates fill, that puts it below ``first_attempt`` is refused
with one line (exit 2), nothing written."""

from __future__ import annotations

import json

import pytest


def _estimate(cli, seeds, out, rates_file):
    return cli("estimate", "build", "--seeds", seeds, "--split", "test", "--out", out, "--tokenizer", "chars",
               "--pass-rates", rates_file, "--json")


def _rates(tmp_path, data) -> str:
    path = tmp_path / "rates.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("given, needle", [
    ({"stage1": {"first_attempt": 0.8, "after_regeneration": 0.6}},
     "stage1 after_regeneration 0.6 is below first_attempt 0.8"),
    ({"stage2": {"first_attempt": 0.9, "after_regeneration": 0.5, "judged": 1}},
     "stage2 after_regeneration 0.5 is below first_attempt 0.9"),
    ({"stage1": {"first_attempt": 0.95}},  # the default after_regeneration of stage 1 is 0.9
     "stage1 after_regeneration 0.9 (the default) is below first_attempt 0.95"),
])
def test_after_regeneration_below_first_attempt_is_refused(cli, seeds_file, tmp_path, given, needle):
    out = tmp_path / "out"
    res = _estimate(cli, seeds_file(3), out, _rates(tmp_path, given))
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert needle in res.stderr and "at least first_attempt" in res.stderr, res.stderr
    assert not out.exists()


def test_rates_measured_in_the_build_directory_are_checked_against_the_file(cli, endpoint, seeds_file, tmp_path):
    """After a pilot whose stage 1 always passed at once (measured 1.0 and 1.0), a file giving
    only ``after_regeneration`` 0.7 would make the estimate assume 1.0 first, 0.7 after."""
    endpoint()
    seeds, out = seeds_file(4), tmp_path / "out"
    assert cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--limit", "2").exit_code == 0
    res = _estimate(cli, seeds, out, _rates(tmp_path, {"stage1": {"after_regeneration": 0.7}}))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "first_attempt 1 (measured in --out)" in res.stderr and "give both for stage1" in res.stderr
    both = _estimate(cli, seeds, out, _rates(tmp_path, {"stage1": {"first_attempt": 0.7, "after_regeneration": 0.7}}))
    assert both.exit_code == 0, both.output
    assert json.loads(both.stdout)["assumptions"]["pass_rates"]["stage1"]["after_regeneration"] == 0.7


def test_coherent_rates_are_used(cli, seeds_file, tmp_path):
    given = {"stage1": {"first_attempt": 0.75, "after_regeneration": 0.75, "judged": 1},
             "stage2": {"first_attempt": 0.5, "after_regeneration": 1.0}}
    res = _estimate(cli, seeds_file(3), tmp_path / "out", _rates(tmp_path, given))
    assert res.exit_code == 0, res.output
    rates = json.loads(res.stdout)["assumptions"]["pass_rates"]
    assert rates["stage1"] == {"first_attempt": 0.75, "after_regeneration": 0.75, "judged": 1.0}
    assert rates["stage2"]["after_regeneration"] == 1.0


@pytest.mark.parametrize("given", [{"stage3": {"judged": 1}}, {"stage1": {"first_attempt": 1.5}},
                                   {"stage1": {"judged": True}}, {"stage1": {"first": 0.5}}, [0.5], {"stage1": 0.5}])
def test_a_file_of_another_shape_is_one_line(cli, seeds_file, tmp_path, given):
    res = _estimate(cli, seeds_file(3), tmp_path / "out", _rates(tmp_path, given))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "a rate from 0 to 1" in res.stderr
