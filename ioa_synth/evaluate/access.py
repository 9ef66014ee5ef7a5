"""Information access of the simulator and the validity filter (paper App. C.3, Table 16),
from the field lists of :mod:`ioa_synth.probing.access` (the prober's): each component's
prompt context is built in these two modules only. No component sees ``meeting_scenario``
or the conversation outline; only the filter sees the misalignment points.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.probing.access import FULL_PROFILE_FIELDS, PUBLIC_PROFILE_FIELDS, profile_view, transcript_view
from ioa_synth.probing.cases import EvalCase

#: Ground-truth fields of a misalignment point shown to the validity filter.
MA_FIELDS: tuple[str, ...] = ("id", "type", "topic", "surface_form", "member_a_understanding",
                              "member_b_understanding", "why_undetected")


def simulator_context(case: EvalCase, participant: str) -> dict[str, Any]:
    """Template context of the simulator playing ``participant``: own full profile and own
    inner thoughts, the other's public profile, every utterance. Never the other's
    private state, assumptions or thoughts, never the misalignment points."""
    other = "M2" if participant == "M1" else "M1"
    return {"self_profile": profile_view(case.member(participant), FULL_PROFILE_FIELDS),
            "other_profile": profile_view(case.member(other), PUBLIC_PROFILE_FIELDS),
            "transcript": transcript_view(case, frozenset({participant}))}


def filter_context(case: EvalCase) -> dict[str, Any]:
    """Template context of the validity filter (without the questions): both full
    profiles, the misalignment points (ground truth), utterances only."""
    mas = [{f: getattr(p, f) for f in MA_FIELDS} for p in case.profiles.misalignment_points]
    return {"member_profiles": [profile_view(m, FULL_PROFILE_FIELDS) for m in case.profiles.members],
            "misalignment_points": mas, "transcript": transcript_view(case, frozenset())}
