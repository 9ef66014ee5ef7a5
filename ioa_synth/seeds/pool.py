"""The assigned seed pool of a split, for ``build --split S`` without ``--seeds``."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.protocol.cells import SPLITS, cells
from ioa_synth.seeds.tuples import SeedTuple, load_seed_file
from ioa_synth.seeds.assign import seed_file

Pool = dict[tuple[str, str], tuple[list[SeedTuple], list[SeedTuple]]]


def load_pool(out_dir: str | Path, split: str) -> Pool:
    """Map every cell ``(domain, task_type)`` to ``(primaries, reserves)`` of ``split``.

    Reads ``DIR/seeds/<split>.jsonl`` and, if present, ``DIR/seeds/<split>_reserve.jsonl``
    (written by ``seeds assign``); each list is in rank order (the tuples' ``rank`` field,
    then file order). All 30 cells are present; a cell the assignment left empty maps to
    ``([], [])``.

    Raises:
        ValueError: unknown split, no assignment for ``split`` in ``out_dir``, or an
            invalid seed file (the message names the file and line).
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (expected one of {', '.join(SPLITS)})")
    primary_path = seed_file(out_dir, split)
    if not primary_path.exists():
        raise ValueError(f"no seed assignment for split {split!r} in {out_dir}: "
                         f"run `ioa-synth seeds assign --out {out_dir}` first (or pass --seeds)")
    pool: Pool = {cell: ([], []) for cell in cells()}
    for reserve, path in ((False, primary_path), (True, seed_file(out_dir, split, reserve=True))):
        if reserve and not path.exists():
            continue
        for seed in load_seed_file(path):
            pool[(seed.domain, seed.task_type)][1 if reserve else 0].append(seed)
    for primaries, reserves in pool.values():
        for seeds in (primaries, reserves):
            seeds.sort(key=lambda s: int(getattr(s, "rank", 0) or 0))
    return pool
