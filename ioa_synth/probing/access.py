"""Information access of the prober (paper App. C.3, Table 16), as explicit field
lists.

The prober's prompt context is built here and only here, from the lists below (the
simulator's and the validity filter's in :mod:`ioa_synth.evaluate.access`, from the same
lists); the templates print what they are given and nothing else. So which case field
reaches which request is decided in these two modules (and checked by tests that plant a
distinct token in every field). No component sees ``meeting_scenario`` or the
conversation outline: the paper's slots are ``{member_profiles}`` and ``{transcript}`` only.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.probing.cases import EvalCase, EvalMember

#: ``--access`` settings of the prober (Table 16): r_i; r_i+h_k; r_i+g_i,a_i; r_i+g_i,a_i,h_k.
ACCESS_LEVELS: tuple[str, ...] = ("public", "thoughts", "private", "private+thoughts")

#: Public profile r_i.
PUBLIC_PROFILE_FIELDS: tuple[str, ...] = ("name", "role", "expertise", "background")
#: Full profile: r_i plus private agenda g_i and tacit assumptions a_i.
FULL_PROFILE_FIELDS: tuple[str, ...] = PUBLIC_PROFILE_FIELDS + ("private_state", "hidden_assumptions")

_LABELS = {"name": "Name", "role": "Role", "expertise": "Expertise", "background": "Background",
           "private_state": "Private agenda", "hidden_assumptions": "Assumptions taken as settled"}


def profile_view(member: EvalMember, fields: tuple[str, ...]) -> dict[str, Any]:
    """``{"id", "fields": [(label, text), ...]}`` of ``member`` restricted to ``fields``."""
    shown = []
    for f in fields:
        value = getattr(member, f)
        shown.append((_LABELS[f], "; ".join(value) if isinstance(value, list) else value))
    return {"id": member.id, "fields": shown}


def transcript_view(case: EvalCase, thoughts_of: frozenset[str]) -> list[dict[str, Any]]:
    """Turns as ``{"idx", "speaker_id", "speaker_name", "thought", "utterance"}``; ``thought``
    is the inner thought for speakers in ``thoughts_of``, else ``None``."""
    return [{"idx": t.turn_idx, "speaker_id": t.speaker_id, "speaker_name": t.speaker_name,
             "thought": t.inner_thought if t.speaker_id in thoughts_of else None, "utterance": t.utterance}
            for t in case.turns]


def prober_context(case: EvalCase, access: str) -> dict[str, Any]:
    """Template context of the prober for ``access`` (one of :data:`ACCESS_LEVELS`):
    ``member_profiles`` (public or full) and ``transcript`` (with every speaker's inner
    thoughts for ``thoughts`` settings). Never the misalignment points.

    Raises:
        ValueError: unknown ``access``.
    """
    if access not in ACCESS_LEVELS:
        raise ValueError(f"access must be one of {', '.join(ACCESS_LEVELS)}")
    fields = FULL_PROFILE_FIELDS if access.startswith("private") else PUBLIC_PROFILE_FIELDS
    thoughts = frozenset(m.id for m in case.profiles.members) if access.endswith("thoughts") else frozenset()
    return {"member_profiles": [profile_view(m, fields) for m in case.profiles.members],
            "transcript": transcript_view(case, thoughts), "with_thoughts": bool(thoughts),
            "people": people_word(len(case.profiles.members))}


#: Group sizes the prober prompt names in words (a benchmark case has two; a live meeting 2-6).
_PEOPLE = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def people_word(n: int) -> str:
    """``n`` participants in words (``two`` ... ``six``), as the prober prompt says it."""
    return _PEOPLE.get(n, str(n))


def transcript_only_context(participants: list[tuple[str, str]], turns: list[tuple[int, str, str]]) -> dict[str, Any]:
    """Prober context of a live meeting (paper §6.2: member profiles empty, the transcript
    alone): each participant ``(id, pseudonym)`` listed by pseudonym only, and the turns
    ``(idx, speaker id, text)`` with no thoughts. Only pseudonymised text may be passed."""
    names = dict(participants)
    return {"member_profiles": [{"id": pid, "fields": [(_LABELS["name"], name)]} for pid, name in participants],
            "transcript": [{"idx": idx, "speaker_id": sid, "speaker_name": names[sid], "thought": None, "utterance": text}
                           for idx, sid, text in turns],
            "with_thoughts": False, "people": people_word(len(participants))}
