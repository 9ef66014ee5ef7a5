"""A random sample of cases stratified by cell, reproducible from a seed (``--sample N --seed S``).

The IoA paper's simulator-stability and order-sensitivity checks (App. C.1, Tables 13-14) use a
random 30-case sample of the test split, and its SFT warm-start (§6.1, Table 17) uses 300 training
dialogues. ``--limit N`` keeps the first N cases by path, which on a split of 40 (or 10) cases per
cell is whole domains; ``--sample N`` spreads the N cases over the cells instead.

Allocation rule (:func:`allocate`), over the C cells present among the cases:

- ``N ≥ C``: every cell gets one case, and the other N − C are shared out in proportion to
  each cell's remaining cases (its size − 1) by largest remainders (Hamilton's method); equal
  remainders go to the cells first in sorted order. No cell gets more than it holds. On a
  uniform split (e.g. 30 cells of 10) N = 30 gives one per cell and N = 300 all cases.
- ``N < C``: N cells drawn at random (each equally likely), one case each.

Within a cell, the cases are drawn at random without replacement. The draws use
``random.Random(seed)`` (Python's Mersenne Twister, stable across Python versions for
``sample``), in sorted cell order, so the same cases, seed and N give the same sample. The sample
comes back in the order of the input (by path). ``N`` larger than the number of cases is an
error (:class:`SampleError`), not a silent "all cases": a figure computed on "a sample of 300"
must be one.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Hashable, Sequence, TypeVar

T = TypeVar("T")


class SampleError(ValueError):
    """``--sample N`` larger than the cases it draws from (one-line message)."""


def allocate(sizes: dict[Hashable, int], n: int, rng: random.Random) -> dict[Hashable, int]:
    """How many of ``n`` cases each cell gets, by the rule of the module docstring.

    ``sizes`` maps each cell (sortable) to its number of cases (≥ 1); ``0 ≤ n ≤ sum``.
    Returns cell → count (every cell of ``sizes``, possibly 0)."""
    cells = sorted(sizes)
    if n < len(cells):
        chosen = set(rng.sample(cells, n))
        return {c: int(c in chosen) for c in cells}
    rest, pool = n - len(cells), sum(sizes.values()) - len(cells)
    quota = {c: rest * (sizes[c] - 1) / pool if pool else 0.0 for c in cells}
    counts = {c: 1 + math.floor(quota[c]) for c in cells}
    left = n - sum(counts.values())
    for c in sorted(cells, key=lambda c: -(quota[c] - math.floor(quota[c])))[:left]:  # stable: cell order on ties
        counts[c] += 1
    return counts


def stratified_sample(items: Sequence[T], cell: Callable[[T], Hashable], n: int, seed: int,
                      what: str = "cases") -> list[T]:
    """``n`` of ``items`` drawn at random, stratified by ``cell(item)`` (module docstring),
    in the order of ``items``; ``what`` names the items in the error message.

    Raises:
        SampleError: ``n`` is larger than ``len(items)``.
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"a sample needs N >= 1 (got {n})")
    if n > len(items):
        raise SampleError(f"--sample {n} asks for more {what} than the {len(items)} there are; "
                          f"give N <= {len(items)} (or no --sample for all of them)")
    rng = random.Random(seed)
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(cell(item), []).append(i)
    counts = allocate({c: len(v) for c, v in groups.items()}, n, rng)
    picked: set[int] = set()
    for c in sorted(groups):
        picked.update(rng.sample(groups[c], counts[c]))
    return [item for i, item in enumerate(items) if i in picked]

