"""The human-annotation sample and its manifest (the paper's human study: two annotators, 2
dialogues from each of the 30 cells, joint calibration on 5 held-out dialogues).

The sample draws ``per_cell`` accepted cases from every cell of a split with a seeded
RNG; the calibration set draws ``K`` more accepted cases of the split from outside the
sample. ``DIR/annotation/<split>/manifest.json`` records both with the accepted
attempts and misalignment point ids, so imports and reports refer to exactly the items
that were shown. Items are ``<case_id>#<MA id>`` (stage 1) and ``<case_id>#dialogue``
(stage 2).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.build.builddir import AcceptedCase, StageAttempts
from ioa_synth.protocol.cells import cells
from ioa_synth.protocol.rubric import load_rubric

MANIFEST_VERSION = 1
DIALOGUE_ITEM = "dialogue"
SETS = ("sample", "calibration")


class AnnotationError(ValueError):
    """Bad annotation input (unknown item, out-of-range score, duplicate...); the message says which."""


@dataclass
class SampledCase(StageAttempts):
    """A case shown to annotators; ``item_set`` is ``sample`` or ``calibration``."""

    case_id: str
    domain: str
    task_type: str
    item_set: str
    stage1_attempt: int
    stage2_attempt: int
    ma_ids: list[str]

    def items(self) -> list[tuple[int, str]]:
        """(stage, item) pairs: every misalignment point, then the dialogue."""
        return [(1, m) for m in self.ma_ids] + [(2, DIALOGUE_ITEM)]


@dataclass
class Manifest:
    """What an export showed: settings, cells short of ``per_cell``, the sampled cases."""

    split: str
    per_cell: int
    rng_seed: int
    calibration_requested: int
    rubric_version: str
    cases: list[SampledCase]
    short_cells: dict[str, int] = field(default_factory=dict)
    version: int = MANIFEST_VERSION
    created_at: str = ""

    def case(self, case_id: str) -> SampledCase | None:
        """The sampled case ``case_id`` (sample or calibration), ``None`` when not in the manifest."""
        return next((c for c in self.cases if c.case_id == case_id), None)

    def of_set(self, item_set: str) -> list[SampledCase]:
        """The cases of ``item_set`` (``"sample"`` or ``"calibration"``, see :data:`SETS`) in manifest order."""
        return [c for c in self.cases if c.item_set == item_set]


def annotation_dir(out_dir: Path, split: str) -> Path:
    """``DIR/annotation/<split>``."""
    return Path(out_dir) / "annotation" / split


def draw(accepted: list[AcceptedCase], split: str, per_cell: int, rng_seed: int, calibration: int) -> Manifest:
    """Stratified sample plus calibration set from ``accepted`` (the split's accepted cases).

    Cells are visited in the fixed order of :func:`ioa_synth.protocol.cells.cells`; a cell with
    fewer than ``per_cell`` accepted cases gives all it has (listed in ``short_cells``).
    Raises :class:`AnnotationError` when the split has no accepted case.
    """
    if not accepted:
        raise AnnotationError(f"no accepted case in split {split!r}: nothing to annotate")
    rng = random.Random(rng_seed)
    by_cell: dict[tuple[str, str], list[AcceptedCase]] = {}
    for c in sorted(accepted, key=lambda c: c.case_id):
        by_cell.setdefault((c.domain, c.task_type), []).append(c)
    chosen: list[SampledCase] = []
    short: dict[str, int] = {}
    for cell in cells():
        pool = by_cell.get(cell, [])
        if len(pool) < per_cell:
            short[f"{cell[0]}/{cell[1]}"] = len(pool)
        chosen += [_sampled(c, "sample") for c in rng.sample(pool, min(per_cell, len(pool)))]
    taken = {c.case_id for c in chosen}
    rest = [c for c in sorted(accepted, key=lambda c: c.case_id) if c.case_id not in taken]
    chosen += [_sampled(c, "calibration") for c in rng.sample(rest, min(calibration, len(rest)))]
    return Manifest(split=split, per_cell=per_cell, rng_seed=rng_seed, calibration_requested=calibration,
                    rubric_version=load_rubric().version, cases=chosen, short_cells=short,
                    created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def _sampled(c: AcceptedCase, item_set: str) -> SampledCase:
    return SampledCase(c.case_id, c.domain, c.task_type, item_set, c.stage1_attempt, c.stage2_attempt, c.ma_ids)


def manifest_path(out_dir: Path, split: str) -> Path:
    """``DIR/annotation/<split>/manifest.json`` (the file may not exist yet)."""
    return annotation_dir(out_dir, split) / "manifest.json"


def write_manifest(out_dir: Path, manifest: Manifest) -> Path:
    """Write the manifest atomically and return its path."""
    return write_json_atomic(manifest_path(out_dir, manifest.split), asdict(manifest))


def load_manifest(out_dir: Path, split: str) -> Manifest:
    """Read ``DIR/annotation/<split>/manifest.json``; raises :class:`AnnotationError` if
    missing or malformed."""
    path = manifest_path(out_dir, split)
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8-sig"))
        data["cases"] = [SampledCase(**c) for c in data["cases"]]
        return Manifest(**data)
    except FileNotFoundError:
        raise AnnotationError(f"{path} not found: run 'ioa-synth annotate export --split {split}' first") from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise AnnotationError(f"{path}: unreadable manifest ({type(exc).__name__}: {exc})") from exc
