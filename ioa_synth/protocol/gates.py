"""Mechanical content gates: checks a stage output must pass before the judge is called.

A gate failure is a stage failure: it uses the stage's one
regeneration round, its reasons go into the regeneration request and, on a second
failure, into the discard reason. The gates make parts of the protocol mechanical so
that a model which copies the prompt or writes ``"..."`` cannot pass, whatever the
judge says:

- placeholder or empty text in any text field, or text copied from the prompt's field
  descriptions; understandings shorter than :attr:`GateThresholds.min_understanding_words`;
- the two members' understandings of an MA (nearly) equal, with a higher bar when they name
  different quantities (an MA is a *difference* in understanding); two MAs with the same surface form; an MA no outline turn refers to
  (the generator is told the outline covers every MA);
- stage 2: a speaker id/name that does not match the profiles; a member id ("M1") said
  aloud; an utterance repeating an
  earlier one (stage-2 rule: every turn adds content); an inner thought repeating a spoken
  line; an MA whose surface
  form (or a close variant) appears in no utterance (the coverage dimension); an utterance sharing
  a long word n-gram with a member's private understanding or ``private_state`` that the
  plan does not also state in public, in the scenario, a member's role, expertise or
  background, or a point's topic or surface form (stage-2 rule:
  MA topics surface only through the shared phrase; the implicitness rule); an inner
  thought restating an outline turn's description instead of the speaker's private reading
  (stage-2 rule: inner thoughts state the private interpretation in detail); a surface form
  pasted onto a line, the prompt's marker copied, repeated lines and thoughts repeating lines
  (:mod:`ioa_synth.protocol.gates_lines`);
- form (:mod:`ioa_synth.protocol.gates_form`): text cut off at its field's length limit,
  field names or JSON syntax inside text, an unfinished sentence, the benchmark's own
  vocabulary ("MA1") inside a case, a question as surface form, stock placeholder
  names, two members' private_state / hidden assumptions (nearly) equal, one
  ``why_undetected`` repeated across MAs.

Tokens are normalised for every comparison (:mod:`ioa_synth.protocol.gates_text`): lower-cased word tokens (``\\w+``),
stemmed with the Snowball English stemmer (``snowballstemmer``); "content tokens"
also drop scikit-learn's English stop-word list. Every threshold lives in
:class:`GateThresholds` (documented in docs/build.md, "Content gates").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates_form import form_failures, stage1_form_failures
from ioa_synth.protocol.gates_language import language_failures
from ioa_synth.protocol.gates_thoughts import crossed_thoughts, defined_aloud, member_private
from ioa_synth.protocol.gates_lines import (pasted_surface_forms, prompt_markers, repeats, thoughts_repeating_lines,
                                            turns_label)
from ioa_synth.protocol.gates_text import (TITLES, content_words, copies_description, is_placeholder, load_gates,
                                           ngrams, once_per_output, overlap, quantities, stems, text_failures,
                                           text_fields, words)
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

__all__ = ["GateThresholds", "ProfileReference", "profile_reference", "copies_description", "is_placeholder", "load_gates", "overlap",
           "stage1_gate_failures", "stage2_gate_failures", "stems", "words"]


# -- stage 1 --------------------------------------------------------------------------
@once_per_output
def stage1_gate_failures(out: Stage1Output, gates: GateThresholds | None = None) -> list[str]:
    """Gate failures of a stage-1 output (empty when it passes); each is one sentence
    naming the field and what to fix."""
    gates = gates or load_gates()
    fields = [("meeting_scenario", out.meeting_scenario)]
    for m in out.members:
        fields += text_fields(m.id, m)
    for p in out.misalignment_points:
        fields += text_fields(p.id, p)
    for t in out.conversation_outline:
        fields += text_fields(f"outline turn {t.turn}", t)
    failures = text_failures(fields, gates)
    failures += stage1_form_failures(out, fields, gates)
    failures += language_failures(fields)  # another language than the build's (English builds: none)
    seen_forms: dict[tuple[str, ...], str] = {}
    for p in out.misalignment_points:
        for key in ("member_a_understanding", "member_b_understanding"):
            n = len(words(getattr(p, key)))
            if not is_placeholder(getattr(p, key), gates) and n < gates.min_understanding_words:
                failures.append(f"{p.id}.{key} has {n} word{'s' if n != 1 else ''}; state the reading concretely in at least "
                                f"{gates.min_understanding_words} words")
        share = overlap(p.member_a_understanding, p.member_b_understanding)
        readable = not (is_placeholder(p.member_a_understanding, gates) or is_placeholder(p.member_b_understanding, gates))
        same_quantities = quantities(p.member_a_understanding, gates) == quantities(p.member_b_understanding, gates)
        ceiling = gates.max_understanding_overlap if same_quantities else gates.max_quantity_understanding_overlap
        if readable and share >= ceiling:
            failures.append(f"{p.id}: the two understandings are (nearly) the same ({share:.0%} shared content "
                            "words); the members must mean different things")
        form = tuple(stems(p.surface_form, content=False))
        if form in seen_forms:
            failures.append(f"{p.id} has the same surface form as {seen_forms[form]} ({p.surface_form!r}); "
                            "each point needs its own phrase")
        seen_forms.setdefault(form, p.id)
    ids = [p.id for p in out.misalignment_points]
    touched = {i for t in out.conversation_outline for i in t.ma_ids}
    for i in ids:
        if i not in touched:
            failures.append(f"{i} is in no outline turn's ma_ids; plan a turn that uses its surface form")
    for unknown in sorted(touched - set(ids)):
        failures.append(f"outline ma_ids name {unknown}, which is not a misalignment point")
    return failures


# -- stage 2 --------------------------------------------------------------------------
def _name_matches(said: str, name: str) -> bool:
    s = [w for w in words(said) if w not in TITLES]
    full = [w for w in words(name) if w not in TITLES]
    return bool(s) and set(s) <= set(full)


def _wanted(surface: str, gates: GateThresholds) -> tuple[set[str], int]:
    """The stems an utterance must share with ``surface`` to voice it, and how many of them."""
    want = set(stems(surface)) or set(stems(surface, content=False))
    return want, max(1, math.ceil(len(want) * gates.surface_form_coverage - 1e-9))


@dataclass(frozen=True)
class ProfileReference:
    """What the stage-2 gates compare every dialogue of one accepted stage-1 output with:
    the members, the surface forms' stems, and the word n-grams of the private readings
    and of the outline. It depends on the profiles only, so the build makes it while the
    dialogue call is on the wire (:func:`profile_reference`)."""

    members: dict[str, str]  # member id -> name
    surface: set[str]  # stems of every surface form (content words kept)
    surface_forms: list[tuple[str, str, set[str], int]]  # (MA id, surface form, stems wanted, how many)
    private: list[tuple[str, set[tuple[str, ...]]]]  # (field, its n-grams of stems)
    outline: set[tuple[str, ...]]  # n-grams of the outline descriptions' stems
    public: tuple[str, ...]  # what the plan states in public (:func:`_public_texts`), stemmed only on a leak
    by_member: dict[str, list[tuple[str, set[tuple[str, ...]]]]]  # member id -> its private fields' n-grams


@once_per_output
def profile_reference(profiles: Stage1Output, gates: GateThresholds | None = None) -> ProfileReference:
    """The :class:`ProfileReference` of ``profiles`` under ``gates`` (default: the shipped thresholds)."""
    gates = gates or load_gates()
    n = gates.private_ngram_words
    private = [(f"{p.id}.{key}", ngrams(stems(getattr(p, key)), n)) for p in profiles.misalignment_points
               for key in ("member_a_understanding", "member_b_understanding")]
    private += [(f"{m.id}.private_state", ngrams(stems(m.private_state), n)) for m in profiles.members]
    outline = {g for t in profiles.conversation_outline
               for g in ngrams(stems(t.description), gates.thought_outline_words)}
    return ProfileReference({m.id: m.name for m in profiles.members}, _surface_stems(profiles),
                            [(p.id, p.surface_form, *_wanted(p.surface_form, gates))
                             for p in profiles.misalignment_points], private, outline, _public_texts(profiles),
                            member_private(profiles, private, n))


def _public_texts(profiles: Stage1Output) -> tuple[str, ...]:
    """What the plan states in public: the scenario, each member's role, expertise and
    background, each point's topic and surface form. Both people know these, so a run of a
    reading's words that one of them also says (the law demo case's reading and scenario
    both say "performance of large language models") states nothing private aloud."""
    texts = [profiles.meeting_scenario] + [f for m in profiles.members for f in (m.role, m.expertise, m.background)]
    return tuple(texts + [f for p in profiles.misalignment_points for f in (p.topic, p.surface_form)])


@once_per_output
def stage2_gate_failures(dialogue: Stage2Output, profiles: Stage1Output,
                         gates: GateThresholds | None = None, reference: ProfileReference | None = None) -> list[str]:
    """Gate failures of a dialogue given its accepted ``profiles`` (empty when it passes);
    ``reference``: ``profile_reference(profiles, gates)`` when already made."""
    gates = gates or load_gates()
    ref = reference or profile_reference(profiles, gates)
    fields = [f for t in dialogue.turns for f in text_fields(f"turn {t.turn_idx}", t)]
    failures = text_failures(fields, gates) + form_failures(fields, gates)
    failures += language_failures(fields)  # another language than the build's (English builds: none)
    members = ref.members
    for t in dialogue.turns:
        name = members.get(t.speaker_id)
        if name is None or not _name_matches(t.speaker_name, name):
            want = f"{t.speaker_id} is {name!r}" if name else f"speaker ids are {', '.join(members)}"
            failures.append(f"turn {t.turn_idx}: speaker {t.speaker_id} {t.speaker_name!r} does not match the "
                            f"profiles ({want})")
    ids = {i.lower() for i in members}
    by_id = [t.turn_idx for t in dialogue.turns if ids & set(words(t.utterance))]
    if by_id:
        failures.append(f"{turns_label(by_id)}: a speaker says a member id ({', '.join(sorted(members))}) "
                        "aloud; people call each other by name")
    utter = [set(stems(t.utterance, content=False)) for t in dialogue.turns]
    for ma_id, surface_form, want, need in ref.surface_forms:
        if not any(len(want & u) >= need for u in utter):
            failures.append(f"{ma_id}: its surface form {surface_form!r} appears in no utterance; "
                            "a speaker must say it")
    failures += pasted_surface_forms(dialogue, profiles)
    failures += prompt_markers(dialogue)
    failures += repeats(dialogue, gates)
    failures += thoughts_repeating_lines(dialogue, gates)
    failures += _private_leaks(dialogue, ref, gates)
    failures += _outline_echoes(dialogue, ref, gates)
    failures += crossed_thoughts(dialogue, ref.by_member, ref.surface, ref.public, gates)
    failures += defined_aloud(dialogue, profiles)
    return failures


def _surface_stems(profiles: Stage1Output) -> set[str]:
    return {s for p in profiles.misalignment_points for s in stems(p.surface_form, content=False)}


def _own_grams(st: list[str], n: int, surface: set[str]) -> set[tuple[str, ...]]:
    """Runs of ``n`` stems of ``st`` less than half made of surface-form stems (saying or
    thinking the shared phrase is never a copy)."""
    return {g for g in ngrams(st, n) if 2 * sum(w in surface for w in g) < n}


def _outline_echoes(dialogue: Stage2Output, ref: ProfileReference, gates: GateThresholds) -> list[str]:
    n, surface, outline = gates.thought_outline_words, ref.surface, ref.outline
    echoed = [t.turn_idx for t in dialogue.turns if _own_grams(stems(t.inner_thought), n, surface) & outline]
    if not echoed:
        return []
    return [f"{turns_label(echoed)}: the inner thought restates the outline's description of a turn; "
            "write what the speaker privately thinks there: their own reading of the point at hand and what they "
            "assume the other means"]


def _private_leaks(dialogue: Stage2Output, ref: ProfileReference, gates: GateThresholds) -> list[str]:
    n, surface, private = gates.private_ngram_words, ref.surface, ref.private
    out: list[str] = []
    public: set[tuple[str, ...]] | None = None
    for t in dialogue.turns:
        spoken = content_words(t.utterance)
        st = stems(t.utterance)  # = the stems of spoken, in order
        said = _own_grams(st, n, surface)
        for where, grams in private:
            hit = said & grams
            if hit:  # the public wording is stemmed only here: most dialogues state no reading
                public = public if public is not None else {g for x in ref.public for g in ngrams(stems(x), n)}
                hit -= public
            if hit:  # quote the utterance's own words, not their stems
                i = next(i for i in range(len(st) - n + 1) if tuple(st[i:i + n]) in hit)
                out.append(f"turn {t.turn_idx}: the utterance states {where} aloud ({' '.join(spoken[i:i + n])!r}); "
                           "private readings belong in inner thoughts only")
    return out
