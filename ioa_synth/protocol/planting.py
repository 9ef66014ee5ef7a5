"""Type-controlled planting: which disagreement type each misalignment point of a split is
asked to be, so that the split's mix follows a target (the paper reports its test split's
mix after the fact, Table 10; taxonomy of App. B.5).

A target is a share per type (:func:`load_type_mix`): ``paper`` (Table 10's test-split
shares, :data:`~ioa_synth.protocol.cells.PAPER_MA_TYPE_DISTRIBUTION`), ``uniform`` or a
JSON file ``{"type": share, ...}``. :func:`plant_types` walks the split's seed tuples in a
fixed order; each case's first point is ``definitional`` (the protocol asks for at least
one per case) and every further point takes the type furthest below its target count so
far (ties in taxonomy order; a type the case already has counts a quarter point less
behind, so a case repeats a type only when the target needs it),
so every prefix of the split stays close to the target. The one-definitional rule bounds
the definitional share from below (one point in three at 2-4 points per case, above
Table 10's 24.2%): :func:`attainable_counts` is the closest mix that rule allows, the mix
``status`` compares with.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from ioa_synth.protocol.cells import MA_TYPES, PAPER_MA_TYPE_DISTRIBUTION
from ioa_synth.core.jsonl import json_problem
from ioa_synth.text.utf8 import decode_utf8

#: The type every case keeps at least once (the protocol's stage-1 constraint).
REQUIRED_TYPE = "definitional"

#: One-line reading of each type of the App. B.5 taxonomy, for the generator and judge prompts.
TYPE_DEFINITIONS: dict[str, str] = {
    "definitional": "the same term, which each member takes to mean a different thing",
    "referential": "the same entity or event named, with a different instance in each member's mind",
    "criterial": "the same goal, with a different standard of what counts as success",
    "scopal": "the same task, with different boundaries of what it includes",
    "presuppositional": "one member takes for granted a fact or decision the other does not know about",
    "procedural": "the same goal, reached by a different method, tool or plan",
    "other": "a hidden disagreement of none of the kinds above",
}

#: Names ``--type-mix`` accepts besides a JSON file.
NAMED_MIXES = ("paper", "uniform")


class TypeMixError(ValueError):
    """An unusable ``--type-mix`` value or file; the message says which."""


#: ``--type-mix none``: no type is planned; as in the paper's own stage 1, MA1 is definitional
#: and the other points' types are the generator's, labelled after the fact (``label-types``).
NO_PLANTING = "none"


def plants(value: str | None) -> bool:
    """Whether ``--type-mix value`` plans each point's type (every value but ``none``)."""
    return value != NO_PLANTING


def load_type_mix(value: str | None) -> dict[str, float]:
    """The target shares of ``--type-mix``: ``paper`` (default), ``uniform``, ``none`` (no
    target: ``{}``, nothing is planted) or the path of a JSON object mapping types of the
    taxonomy to non-negative numbers (normalised to sum 1; types left out get 0)."""
    if value == NO_PLANTING:
        return {}
    if value in (None, "", "paper"):
        return dict(PAPER_MA_TYPE_DISTRIBUTION)
    if value == "uniform":
        return {t: 1 / len(MA_TYPES) for t in MA_TYPES}
    path = Path(value)
    try:
        raw = json.loads(decode_utf8(path.read_bytes(), f"--type-mix {value}", TypeMixError))
    except OSError as exc:
        raise TypeMixError(f"--type-mix {value}: not 'paper', 'uniform' or 'none' and not a readable file "
                           f"({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise TypeMixError(json_problem(f"--type-mix {value}", exc)) from exc
    if not isinstance(raw, dict) or not raw:
        raise TypeMixError(f"--type-mix {value}: expected a JSON object mapping types to shares")
    unknown = sorted(set(raw) - set(MA_TYPES))
    if unknown:
        raise TypeMixError(f"--type-mix {value}: unknown type(s) {', '.join(unknown)} "
                           f"(expected {', '.join(MA_TYPES)})")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in raw.values()):
        raise TypeMixError(f"--type-mix {value}: every share must be a non-negative number")
    total = float(sum(raw.values()))
    if total <= 0:
        raise TypeMixError(f"--type-mix {value}: the shares sum to 0")
    return {t: float(raw.get(t, 0)) / total for t in MA_TYPES}


def plant_types(cases: Iterable[tuple[str, int]], target: dict[str, float],
                start: Counter | None = None) -> dict[str, tuple[str, ...]]:
    """Planned types per case: ``cases`` is ``[(key, number of points), ...]`` in the split's
    order; returns ``{key: (type of MA1, type of MA2, ...)}``, MA1 always ``definitional``.
    ``start`` holds the counts of points planned earlier in the split (a resumed build)."""
    counts: Counter = Counter(start or {})
    planted, n_cases = sum(counts.values()), counts[REQUIRED_TYPE]
    out: dict[str, tuple[str, ...]] = {}
    for key, n in cases:
        types = [REQUIRED_TYPE]
        counts[REQUIRED_TYPE] += 1
        planted, n_cases = planted + 1, n_cases + 1
        for _ in range(n - 1):
            planted += 1
            aim = attainable_counts(planted, n_cases, target)
            # furthest below the attainable mix; a type already in this case counts a quarter point less behind
            best = max(MA_TYPES, key=lambda t: (aim[t] - counts[t] - 0.25 * types.count(t), -MA_TYPES.index(t)))
            types.append(best)
            counts[best] += 1
        out[key] = tuple(types)
    return out


def attainable_counts(points: int, cases: int, target: dict[str, float]) -> dict[str, float]:
    """The counts per type closest to ``target`` over ``points`` points in ``cases`` cases
    given one definitional point per case: definitional gets ``max(share x points, cases)``
    and the other types share the rest in proportion to their targets."""
    required = max(target.get(REQUIRED_TYPE, 0) * points, min(cases, points))
    rest = points - required
    others = sum(v for t, v in target.items() if t != REQUIRED_TYPE)
    out = {t: (rest * target.get(t, 0) / others if others else 0.0) for t in MA_TYPES}
    out[REQUIRED_TYPE] = required if others else float(points)
    return out


def mix_rows(planned: Counter, accepted: Counter, target: dict[str, float], cases: int) -> list[dict]:
    """Rows ``{type, target_share, attainable_share, planned, planned_share, accepted,
    accepted_share}`` comparing a split's planned and accepted mixes with the target."""
    n_plan, n_acc = sum(planned.values()), sum(accepted.values())
    attain = attainable_counts(n_plan, cases, target) if n_plan else {}
    return [{"type": t, "target_share": target.get(t, 0.0),
             "attainable_share": (attain[t] / n_plan) if n_plan else None,
             "planned": planned[t], "planned_share": planned[t] / n_plan if n_plan else None,
             "accepted": accepted[t], "accepted_share": accepted[t] / n_acc if n_acc else None} for t in MA_TYPES]


__all__ = ["NO_PLANTING", "plants", "NAMED_MIXES", "REQUIRED_TYPE", "TYPE_DEFINITIONS", "TypeMixError", "attainable_counts",
           "load_type_mix", "mix_rows", "plant_types"]
