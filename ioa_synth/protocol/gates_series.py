"""Content gates of a series of meetings (``build --meetings K``,
:mod:`ioa_synth.protocol.series`), run on the series' dialogues after the stage-2 gates of one
meeting (which see the series as one dialogue):

- **planted**: a point's surface form (its cue, by the coverage rule of
  :attr:`~ioa_synth.protocol.gate_thresholds.GateThresholds.surface_form_coverage`) is said
  in no utterance before its ``planted_in`` meeting, and in one or more of that meeting;
- **latent, then surfacing**: no utterance before a point's ``surfaces_in`` meeting states one
  of its readings aloud (the latency rule of the single-meeting gates, ``private_ngram_words``),
  and an utterance of that meeting does: a member says what they mean and the difference comes
  to light. A point with ``surfaces_in`` null is held latent by the single-meeting gates
  through meeting K; a surfacing point's readings are left out of those gates
  (:func:`latency_reference`), since saying them from its ``surfaces_in`` meeting on is the plan.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ioa_synth.protocol.gates import ProfileReference, _private_leaks
from ioa_synth.protocol.gates_text import load_gates, stems
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.protocol.series import SeriesStage2Output


def _surfacing(profiles: Stage1Output) -> dict[str, int]:
    return {p.id: p.surfaces_in for p in profiles.misalignment_points if getattr(p, "surfaces_in", None)}


def latency_reference(ref: ProfileReference, profiles: Stage1Output) -> ProfileReference:
    """``ref`` without the readings of the points that surface (their latency is checked
    meeting by meeting in :func:`series_failures`)."""
    surfacing = _surfacing(profiles)
    return replace(ref, private=[(w, g) for w, g in ref.private if w.split(".")[0] not in surfacing])


def series_failures(dialogue: SeriesStage2Output, profiles: Stage1Output, ref: ProfileReference) -> list[str]:
    """The planted and surfacing failures of a series ``dialogue`` (empty when it passes);
    ``ref``: the profiles' full :class:`ProfileReference`. Each failure is one sentence naming
    the point, the meeting and what to fix."""
    gates = load_gates()
    failures: list[str] = []
    wanted = {ma: (form, want, need) for ma, form, want, need in ref.surface_forms}
    meeting_of = {t.turn_idx: t.meeting for t in dialogue.turns}
    for p in profiles.misalignment_points:
        form, want, need = wanted[p.id]
        said = [t for t in dialogue.turns if len(want & set(stems(t.utterance, content=False))) >= need]
        early = [t for t in said if t.meeting < p.planted_in]
        if early:
            failures.append(f"{p.id}: its surface form {form!r} is said in meeting {early[0].meeting} (turn "
                            f"{early[0].turn_idx}), before meeting {p.planted_in}, where the plan plants it; "
                            "leave it out of the earlier meetings")
        if not any(t.meeting == p.planted_in for t in said):
            failures.append(f"{p.id}: its surface form {form!r} is said in no utterance of meeting {p.planted_in}, "
                            "where the plan plants it; a speaker must say it there")
        surfaces = getattr(p, "surfaces_in", None)
        if not surfaces:
            continue
        own = replace(ref, private=[(w, g) for w, g in ref.private if w.split(".")[0] == p.id])
        leaks = _private_leaks(SimpleNamespace(turns=[t for t in dialogue.turns if t.meeting <= surfaces]),
                               own, gates)
        at = [(meeting_of[int(x.split(":")[0].split()[1])], x) for x in leaks]
        for m, leak in at:
            if m < surfaces:
                failures.append(f"{leak.split(';')[0]} in meeting {m}, but {p.id} stays latent until meeting "
                                f"{surfaces}")
        if not any(m == surfaces for m, _ in at):
            failures.append(f"{p.id} does not surface in meeting {surfaces}: no utterance there states either "
                            f"reading of {form!r}; a member says what they mean by it and the difference comes out")
    return failures


__all__ = ["latency_reference", "series_failures"]
