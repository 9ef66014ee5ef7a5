"""``--sample N --seed S``: a random sample stratified by cell (ioa_synth.protocol.sample)."""

from __future__ import annotations

import random

import pytest

from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES
from ioa_synth.protocol.sample import SampleError, allocate, stratified_sample


def split(per_cell: int) -> list[tuple[str, str, int]]:
    """A uniform split in path order: (domain, task type, index) per case."""
    return [(d, t, i) for d in sorted(DOMAINS) for t in sorted(TASK_TYPES) for i in range(per_cell)]


def cell(case):
    return case[:2]


def test_same_seed_same_cases_and_input_order():
    cases = split(10)
    a, b = stratified_sample(cases, cell, 30, seed=7), stratified_sample(cases, cell, 30, seed=7)
    assert a == b and len(a) == 30
    assert a == sorted(a, key=cases.index)  # path order kept
    assert stratified_sample(cases, cell, 30, seed=8) != a  # another seed, another draw (here)


def test_every_cell_represented_unlike_limit():
    cases = split(10)  # the test split: 30 cells x 10
    sample = stratified_sample(cases, cell, 30, seed=0)
    assert sorted({cell(c) for c in sample}) == sorted({cell(c) for c in cases})  # one per cell
    assert len({cell(c) for c in cases[:30]}) == 3  # --limit 30: whole cells of one domain
    big = stratified_sample(split(40), cell, 300, seed=1)  # Table 17's 300 of the 1,200 train cases
    per_cell = {}
    for c in big:
        per_cell[cell(c)] = per_cell.get(cell(c), 0) + 1
    assert set(per_cell.values()) == {10} and len(per_cell) == 30


def test_proportional_allocation_by_hand():
    # cells of 1, 3 and 6 cases, N = 6: one each, then 3 shared over the remaining 0, 2, 5
    # in proportion: quotas 0, 3*2/7 = 0.857, 3*5/7 = 2.143 -> floors 0, 0, 2, one left for
    # the largest remainder (0.857): counts 1, 2, 3.
    assert allocate({"a": 1, "b": 3, "c": 6}, 6, random.Random(0)) == {"a": 1, "b": 2, "c": 3}
    # equal remainders go to the first cells in sorted order: 4 of 3 cells of 2 -> 2, 1, 1
    assert allocate({"x": 2, "y": 2, "z": 2}, 4, random.Random(0)) == {"x": 2, "y": 1, "z": 1}
    # fewer cases than cells: that many cells, one case each
    few = allocate({"x": 2, "y": 2, "z": 2}, 2, random.Random(0))
    assert sorted(few.values()) == [0, 1, 1]


def test_too_many_is_an_error_and_all_is_all():
    cases = split(1)
    with pytest.raises(SampleError, match="--sample 31 asks for more cases than the 30"):
        stratified_sample(cases, cell, 31, seed=0)
    assert stratified_sample(cases, cell, 30, seed=5) == cases
