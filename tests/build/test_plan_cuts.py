"""A case's planned disagreement types are a function of the split's seed tuples and the
settings alone: a ``--limit`` pilot, a build cut into several runs in any order, or the
reserve tuples a pool build draws on discards plan exactly what one full build plans
(docs/plan-modes.md, "Type-controlled planting")."""

from __future__ import annotations

import json

from conftest import SNAPSHOT
from ioa_helpers import q


def _plans_by_seed(out) -> dict[str, tuple[str, ...]]:
    rows = q(out, "SELECT c.seed_id, p.types_json FROM planned_types p JOIN cases c USING (case_id)")
    return {seed: tuple(json.loads(types)) for seed, types in rows}


def _plans_by_case(out) -> dict[str, tuple[str, ...]]:
    return {cid: tuple(json.loads(t)) for cid, t in q(out, "SELECT case_id, types_json FROM planned_types")}


def test_a_limit_pilot_then_the_full_build_plans_what_one_full_build_plans(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    seeds = seeds_file(10)
    runs = {"full": [None], "pilot": [3, None], "cut": [6, 2, 8, None], "steps": [1, 4, 5, 9, None]}
    plans = {}
    for name, limits in runs.items():
        out = tmp_path / name
        for limit in limits:
            res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "2",
                      *(("--limit", limit) if limit else ()))
            assert res.exit_code == 0, res.output
        plans[name] = _plans_by_case(out)
    assert len(plans["full"]) == 10
    for name in ("pilot", "cut", "steps"):
        assert plans[name] == plans["full"], name


def test_the_estimate_plants_the_types_the_build_plants(cli, endpoint, seeds_file, tmp_path):
    """``estimate build`` after a pilot counts the prompts of the plans the full build will use."""
    endpoint()
    seeds, out = seeds_file(10), tmp_path / "b"
    assert cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--limit", "3").exit_code == 0
    from ioa_synth.build.estimate import BuildPlan, _cases
    from ioa_synth.build.planted import split_plans
    from ioa_synth.runs.catalog import Catalog
    from ioa_synth.seeds.tuples import load_seed_file

    tuples = load_seed_file(seeds)
    with Catalog(out) as catalog:
        todo, finished = _cases(catalog, BuildPlan(tuples, 0, "test", "paper", split_seeds=tuples))
    assert finished == 3
    assert {c.seed.seed_id: c.planned_types for c in todo} == {
        s: t for s, t in split_plans(tuples, "paper").items() if s in {c.seed.seed_id for c in todo}}


def test_a_pool_build_plans_each_seed_the_same_however_it_was_cut(cli, endpoint, tmp_path):
    """Reserve tuples are drawn when a case is discarded (in whatever order the discards
    come): their plans too are fixed by the pool, not by when they were drawn."""
    plans = {}
    for name, limits, script in (("whole", [8], {}), ("cut", [2, 5, 8], {"stage1_judge": ["low", "low"]})):
        out = tmp_path / name
        assert cli("seeds", "import", SNAPSHOT, "--out", out).exit_code == 0
        res = cli("seeds", "assign", "--out", out, "--per-cell", "train=1,val=1,test=1", "--reserve", "1",
                  "--rng-seed", "7")
        assert res.exit_code == 0, res.output
        endpoint(script=script)
        for limit in limits:
            res = cli("build", "--split", "test", "--out", out, "--workers", "1", "--limit", limit)
            assert res.exit_code == 0, res.output
        plans[name] = _plans_by_seed(out)
    assert q(tmp_path / "cut", "SELECT count(*) FROM cases WHERE status = 'discarded'")[0][0] == 1
    drawn = set(plans["cut"]) - set(plans["whole"])
    assert len(drawn) == 1  # the reserve tuple drawn for the discard
    # the drawn reserve tuple is planned as a build of the whole pool plans it
    from ioa_synth.build.planted import split_plans
    from ioa_synth.seeds.pool import load_pool

    pool = load_pool(tmp_path / "cut", "test")
    whole = split_plans([s for primary, reserve in pool.values() for s in primary + reserve], "paper")
    assert plans["cut"] == {seed: whole[seed] for seed in plans["cut"]}
    assert plans["whole"] == {seed: whole[seed] for seed in plans["whole"]}
