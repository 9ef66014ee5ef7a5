"""Mechanical content gates: checks a stage output must pass before the judge is called.

A gate failure is a stage failure (issue 9, deliverable 3): it uses the stage's one
regeneration round, its reasons go into the regeneration request and, on a second
failure, into the discard reason. The gates make parts of the protocol mechanical so
that a model which copies the prompt or writes ``"..."`` cannot pass, whatever the
judge says:

- placeholder or empty text in any text field, or text copied from the prompt's field
  descriptions; understandings shorter than :attr:`GateThresholds.min_understanding_words`;
- the two members' understandings of an MA (nearly) equal, with a higher bar when they name
  different quantities (PROTOCOL.md §1: an MA is a *difference*); two MAs with the same surface form; an MA no outline turn refers to
  (§3: the outline covers every MA);
- stage 2: a speaker id/name that does not match the profiles; a member id ("M1") said
  aloud; an utterance repeating an
  earlier one (§4: every turn adds content); an MA whose surface
  form (or a close variant) appears in no utterance (§4 coverage); an utterance sharing
  a long word n-gram with a member's private understanding or ``private_state`` (§4:
  MA topics surface only through the shared phrase; the implicitness rule);
- form (:mod:`ioa_synth.protocol.gates_form`): text cut off at its field's length limit,
  field names or JSON syntax inside text, a question as surface form, stock placeholder
  names, two members' private_state / hidden assumptions (nearly) equal, one
  ``why_undetected`` repeated across MAs.

Tokens are normalised for every comparison: lower-cased word tokens (``\\w+``),
stemmed with the Snowball English stemmer (``snowballstemmer``); "content tokens"
also drop scikit-learn's English stop-word list. Every threshold lives in
:class:`GateThresholds` (documented in the README, "Content gates").
"""

from __future__ import annotations

import math
import re
import threading
from functools import lru_cache
from typing import Iterable

from pydantic import BaseModel

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output, Stage2Output

__all__ = ["GateThresholds", "load_gates", "stage1_gate_failures", "stage2_gate_failures"]


@lru_cache(maxsize=1)
def load_gates() -> GateThresholds:
    """The gate thresholds in force (the defaults of :class:`GateThresholds`)."""
    return GateThresholds()


# -- normalisation ------------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)
_TITLES = {"dr", "prof", "mr", "ms", "mrs", "mx", "sir"}


_local = threading.local()


def _stemmer():
    """This thread's Snowball English stemmer: a stemmer object keeps its cursor between
    calls, so one shared by the build's worker threads corrupts words (IndexError)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (lower case), the words content tokens drop."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Word tokens of ``text`` without stop words and single letters (the "s" of "paper's")."""
    return [t for t in words(text) if t not in stop_words() and (len(t) > 1 or t.isdigit())]


def stems(text: str, content: bool = True) -> list[str]:
    """Stemmed word tokens of ``text`` in order; with ``content`` only :func:`content_words`."""
    return _stemmer().stemWords(content_words(text) if content else words(text))


def is_placeholder(text: str, gates: GateThresholds | None = None) -> bool:
    """True when ``text`` is empty, has no letter or digit, is a bracketed template
    (``<text>``) or one of :attr:`GateThresholds.placeholders`."""
    gates = gates or load_gates()
    stripped = text.strip()
    if not any(ch.isalnum() for ch in stripped):
        return True
    if re.fullmatch(r"<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]", stripped):
        return True
    return stripped.lower().strip(" .!?:;,'\"`…-") in gates.placeholders


def _ngrams(toks: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


@lru_cache(maxsize=4)
def _description_grams(n: int) -> frozenset[tuple[str, ...]]:
    """Word n-grams of the field descriptions and of the generator templates' own text (the
    demo model copied "reach apparent agreement while privately reading" from the system
    prompt into a scenario, and "this paper's own subject matter" from a rule into an MA)."""
    from ioa_synth.llm.prompts import TEMPLATE_FILES, template_prose

    texts = list(FIELD_DESCRIPTIONS.values())
    texts += [part for (_, role), name in TEMPLATE_FILES.items() if role == "generator" for part in template_prose(name)]
    return frozenset(g for d in texts for g in _ngrams(words(d), n))


def copies_description(text: str, gates: GateThresholds | None = None) -> bool:
    """True when ``text`` shares :attr:`GateThresholds.copied_description_words` consecutive
    words (of ``gates``, default the shipped thresholds) with a field description or the
    instructions of the generator prompts."""
    n = (gates or load_gates()).copied_description_words
    return bool(_ngrams(words(text), n) & _description_grams(n))


def quantities(text: str, gates: GateThresholds) -> set[str]:
    """The quantity tokens of ``text``: tokens with a digit and :attr:`GateThresholds.number_words`."""
    return {w for w in words(text) if any(ch.isdigit() for ch in w) or w in gates.number_words}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap (0-1) of the stemmed content-token sets of ``a`` and ``b``."""
    sa, sb = set(stems(a)), set(stems(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def _text_fields(prefix: str, obj: BaseModel) -> Iterable[tuple[str, str]]:
    for name, value in obj.model_dump().items():
        if isinstance(value, str) and name not in ("id", "type", "speaker", "speaker_id"):
            yield f"{prefix}.{name}", value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            yield from ((f"{prefix}.{name}[{i}]", v) for i, v in enumerate(value))


def _text_failures(fields: Iterable[tuple[str, str]], gates: GateThresholds) -> list[str]:
    """One failure listing every placeholder field, one listing every copied description."""
    empty: list[str] = []
    copied: list[str] = []
    for where, text in fields:
        if is_placeholder(text, gates):
            empty.append(f"{where} ({text.strip()[:12]!r})")
        elif copies_description(text, gates):
            copied.append(where)
    out: list[str] = []
    if empty:
        out.append(f"placeholder instead of content in {', '.join(empty)}; write the actual content")
    if copied:
        out.append(f"{', '.join(copied)} copies the field description from the instructions; "
                   "write the actual content")
    return out


# -- stage 1 --------------------------------------------------------------------------
def stage1_gate_failures(out: Stage1Output, gates: GateThresholds | None = None) -> list[str]:
    """Gate failures of a stage-1 output (empty when it passes); each is one sentence
    naming the field and what to fix."""
    gates = gates or load_gates()
    fields = [("meeting_scenario", out.meeting_scenario)]
    for m in out.members:
        fields += _text_fields(m.id, m)
    for p in out.misalignment_points:
        fields += _text_fields(p.id, p)
    for t in out.conversation_outline:
        fields += _text_fields(f"outline turn {t.turn}", t)
    failures = _text_failures(fields, gates)
    failures += stage1_form_failures(out, fields, gates)
    seen_forms: dict[tuple[str, ...], str] = {}
    for p in out.misalignment_points:
        for key in ("member_a_understanding", "member_b_understanding"):
            n = len(words(getattr(p, key)))
            if not is_placeholder(getattr(p, key), gates) and n < gates.min_understanding_words:
                failures.append(f"{p.id}.{key} has {n} words; state the reading concretely in at least "
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


from ioa_synth.protocol.gates_form import form_failures, stage1_form_failures  # noqa: E402 - uses the helpers above


# -- stage 2 --------------------------------------------------------------------------
def _name_matches(said: str, name: str) -> bool:
    s = [w for w in words(said) if w not in _TITLES]
    full = [w for w in words(name) if w not in _TITLES]
    return bool(s) and set(s) <= set(full)


def _voiced(surface: str, utterance_stems: list[set[str]], gates: GateThresholds) -> bool:
    want = set(stems(surface)) or set(stems(surface, content=False))
    need = max(1, math.ceil(len(want) * gates.surface_form_coverage - 1e-9))
    return any(len(want & u) >= need for u in utterance_stems)


def stage2_gate_failures(dialogue: Stage2Output, profiles: Stage1Output,
                         gates: GateThresholds | None = None) -> list[str]:
    """Gate failures of a dialogue given its accepted ``profiles`` (empty when it passes)."""
    gates = gates or load_gates()
    fields = [f for t in dialogue.turns for f in _text_fields(f"turn {t.turn_idx}", t)]
    failures = _text_failures(fields, gates) + form_failures(fields, gates)
    members = {m.id: m.name for m in profiles.members}
    for t in dialogue.turns:
        name = members.get(t.speaker_id)
        if name is None or not _name_matches(t.speaker_name, name):
            want = f"{t.speaker_id} is {name!r}" if name else f"speaker ids are {', '.join(members)}"
            failures.append(f"turn {t.turn_idx}: speaker {t.speaker_id} {t.speaker_name!r} does not match the "
                            f"profiles ({want})")
    ids = {m.id.lower() for m in profiles.members}
    by_id = [t.turn_idx for t in dialogue.turns if ids & set(words(t.utterance))]
    if by_id:
        failures.append(f"turns {', '.join(map(str, by_id))}: a speaker says a member id ({', '.join(sorted(members))}) "
                        "aloud; people call each other by name")
    utter = [set(stems(t.utterance, content=False)) for t in dialogue.turns]
    for p in profiles.misalignment_points:
        if not _voiced(p.surface_form, utter, gates):
            failures.append(f"{p.id}: its surface form {p.surface_form!r} appears in no utterance; "
                            "a speaker must say it")
    failures += _repeats(dialogue, gates)
    failures += _private_leaks(dialogue, profiles, gates)
    return failures


def _repeats(dialogue: Stage2Output, gates: GateThresholds) -> list[str]:
    seen: list[tuple[int, set[str]]] = []
    repeated: list[str] = []
    for t in dialogue.turns:
        toks = set(stems(t.utterance))
        if len(toks) >= 4:
            for idx, earlier in seen:
                if len(toks & earlier) / len(toks | earlier) >= gates.repeated_utterance_overlap:
                    repeated.append(f"turn {t.turn_idx} (repeats turn {idx})")
                    break
            seen.append((t.turn_idx, toks))
    if not repeated:
        return []
    return [f"utterances repeat earlier ones: {', '.join(repeated)}; every turn must add something new"]


def _private_leaks(dialogue: Stage2Output, profiles: Stage1Output, gates: GateThresholds) -> list[str]:
    n = gates.private_ngram_words
    surface = {s for p in profiles.misalignment_points for s in stems(p.surface_form, content=False)}
    private: list[tuple[str, set[tuple[str, ...]]]] = []
    for p in profiles.misalignment_points:
        for key in ("member_a_understanding", "member_b_understanding"):
            private.append((f"{p.id}.{key}", _ngrams(stems(getattr(p, key)), n)))
    for m in profiles.members:
        private.append((f"{m.id}.private_state", _ngrams(stems(m.private_state), n)))
    out: list[str] = []
    for t in dialogue.turns:
        spoken = content_words(t.utterance)
        st = _stemmer().stemWords(spoken)
        said = {g for g in _ngrams(st, n) if 2 * sum(w in surface for w in g) < n}
        for where, grams in private:
            if said & grams:  # quote the utterance's own words, not their stems
                i = next(i for i in range(len(st) - n + 1) if tuple(st[i:i + n]) in said & grams)
                out.append(f"turn {t.turn_idx}: the utterance states {where} aloud ({' '.join(spoken[i:i + n])!r}); "
                           "private readings belong in inner thoughts only")
    return out
