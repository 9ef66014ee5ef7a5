"""Content gates of multi-party cases (``build --participants N``, N = 3..6), on top of the
dyadic gates of :mod:`ioa_synth.protocol.gates`, which apply unchanged (latency of every
reading, surface forms voiced, speakers matching the profiles, ...).

- stage 1: no two members share (nearly) the same ``private_state`` or hidden assumption
  (the dyadic gate compares M1 with M2 only; here every pair);
- stage 2, *sides by participant*: each point's sides are held by exactly the participants
  its ``between`` names. An inner thought *holds* a side's reading when it carries at least
  :data:`HOLD_SHARE` of the content stems that set that reading apart (the reading's own
  stems, without the surface form's and without those the two readings share), more of
  them than of the other reading's. A thought of a participant who holds a reading their
  side does not (or who is ``neutral``) fails; so does a named holder none of whose
  thoughts holds their side's reading.

The thresholds live here, not in :class:`~ioa_synth.protocol.gate_thresholds.GateThresholds`,
so that a two-person build's gate fingerprint stays as it was; a multi-party generator's
fingerprint lists them (:func:`multi_gate_settings`).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates_form import same_premise
from ioa_synth.protocol.gates_text import load_gates, stems
from ioa_synth.protocol.multiparty import SIDES, sides_of
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

#: Share of a reading's distinguishing stems an inner thought must carry to hold it.
HOLD_SHARE = 0.5


def multi_gate_settings() -> dict[str, Any]:
    """The multi-party gates' own settings, as fingerprinted."""
    return {"hold_share": HOLD_SHARE}


def member_pair_failures(out: Stage1Output, gates: GateThresholds | None = None) -> list[str]:
    """Pairs of members (beyond a dyad's M1-M2, which the dyadic gate checks) whose
    ``private_state`` or a hidden assumption is (nearly) the same."""
    gates = gates or load_gates()
    failures: list[str] = []
    if len(out.members) <= 2:
        return failures
    for a, b in combinations(out.members, 2):
        names = set(stems(f"{a.id} {a.name} {b.id} {b.name}", content=False))
        same, share = same_premise(a.private_state, b.private_state, names, gates)
        if same:
            failures.append(f"{a.id} and {b.id} have (nearly) the same private_state ({share:.0%} shared content "
                            "words); each member's goals are their own")
        pairs = [f"{a.id}[{i}]~{b.id}[{j}]" for i, x in enumerate(a.hidden_assumptions)
                 for j, y in enumerate(b.hidden_assumptions) if same_premise(x, y, names, gates)[0]]
        if pairs:
            failures.append(f"{a.id} and {b.id} share (nearly) the same hidden assumptions ({', '.join(pairs)}); "
                            "each member takes different things for granted")
    return failures


def distinguishing_stems(point: Any) -> dict[str, set[str]]:
    """``{"a": stems, "b": stems}``: the content stems of each reading of ``point`` that
    neither its surface form nor the other reading has."""
    surface = set(stems(point.surface_form, content=False))
    a, b = set(stems(point.member_a_understanding)), set(stems(point.member_b_understanding))
    return {"a": a - b - surface, "b": b - a - surface}


def held_side(thought: str, marks: dict[str, set[str]]) -> str | None:
    """The side whose reading ``thought`` holds (``marks`` from :func:`distinguishing_stems`),
    or ``None``."""
    said = set(stems(thought))
    share = {s: len(marks[s] & said) / len(marks[s]) if marks[s] else 0.0 for s in SIDES}
    best = max(SIDES, key=lambda s: share[s])
    other = "b" if best == "a" else "a"
    return best if share[best] >= HOLD_SHARE and share[best] > share[other] else None


def side_failures(dialogue: Stage2Output, profiles: Stage1Output) -> list[str]:
    """Stage-2 failures of the rule "each point's sides are held by exactly the named
    participants" (see the module docstring); empty for a dyad's points (no ``between``)."""
    failures: list[str] = []
    names = {m.id: m.name for m in profiles.members}
    for p in profiles.misalignment_points:
        if getattr(p, "between", None) is None:
            continue
        sides = sides_of(p)
        marks = distinguishing_stems(p)
        held: dict[str, set[str]] = {}
        for t in dialogue.turns:
            side = held_side(t.inner_thought, marks)
            if side is None:
                continue
            held.setdefault(t.speaker_id, set()).add(side)
            if t.speaker_id not in sides[side]:
                own = next((s for s in SIDES if t.speaker_id in sides[s]), None)
                where = f"on side {own}" if own else "neutral on it"
                failures.append(f"turn {t.turn_idx}: {t.speaker_id} ({names.get(t.speaker_id, '?')}) holds "
                                f"{p.id}'s side-{side} reading in the inner thought, but the plan puts "
                                f"{t.speaker_id} {where}; that reading is held only by {', '.join(sides[side])}")
        for side in SIDES:
            for m in sides[side]:
                if side not in held.get(m, set()):
                    failures.append(f"{p.id}: {m} ({names.get(m, '?')}) holds its side-{side} reading, but no "
                                    f"inner thought of {m} says so; give {m} a thought with that reading")
    return failures


__all__ = ["HOLD_SHARE", "distinguishing_stems", "held_side", "member_pair_failures", "multi_gate_settings",
           "side_failures"]
