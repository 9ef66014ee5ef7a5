"""Replacing the participants' real names in a meeting transcript by pseudonyms (paper §6.2,
App. D.5: the detectors see the transcript only, and no real name may reach them).

What matches, in the speaker field and inside the text:

- the full name and every part of it: each word ("Ana", "Vasquez-Lindqvist") and each piece of
  a hyphenated or apostrophed word ("Vasquez", "Lindqvist"; "Brien" of "O'Brien");
- in any case ("desmond", "INGRID") and any accent form ("Jose", "MUÑOZ", "Muñoz" written with a
  combining accent), with the pieces of a compound joined by a hyphen, a space, an apostrophe or
  nothing ("Vasquez Lindqvist", "OBrien");
- with a possessive or plural ending kept as written ("Okonkwo's" -> "Avery's", "Desmonds" ->
  "Averys");
- ``aliases``: nicknames the researcher gives (``--alias "Desmond Okonkwo=Des"``), as names.

Left alone, because they identify no one: titles (``Dr``, ``Ms`` ...), initials (one letter),
and particles written in lower case after the first word of a name (``van``, ``de``, ``al`` ...).
A name part that is also an everyday word ("Will", "May") is replaced wherever the word occurs.
A part shared by several participants becomes :data:`SHARED_NAME`. What cannot be caught:
nicknames not given as aliases, misspellings and speech-recognition errors, and the names of
people who do not speak.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ioa_synth.meetings.transcripts import Cue
from ioa_synth.text.normalise import WORD, Normaliser, fold_accents

#: Pseudonyms handed out in order (skipping any word already in the transcript or an alias).
PSEUDONYMS: tuple[str, ...] = ("Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan",
                               "Kendall", "Logan", "Morgan", "Quinn", "Riley", "Rowan", "Sawyer", "Taylor")
#: What replaces a name part that several participants share.
SHARED_NAME = "[name]"
#: Words of a name that identify no one on their own (compared folded, without dots).
TITLES = frozenset("dr mr mrs ms miss mx prof sir dame jr sr ii iii iv".split())
#: Name particles: skipped when written in lower case after a name's first word.
PARTICLES = frozenset("al bin binti bint d da das de del della den der des di do dos du el ibn la le "
                      "st ten ter van von y zu".split())

_WORDS = Normaliser(WORD, casefold=True, fold_accents=True)
_APOSTROPHES = str.maketrans({c: "'" for c in "’ʼ‘`´"})
_HYPHENS = str.maketrans({c: "-" for c in "‐‑‒–—"})
_LETTER_BEFORE = r"(?<![^\W\d_])"
_LETTER_AFTER = r"(?![^\W\d_])"
_PIECE_SPLIT = re.compile(r"[-'’ʼ‘`´‐‑‒–—]+")


@dataclass(frozen=True)
class Participant:
    """A participant: ``id`` (``P1`` ...) and the ``pseudonym`` every page and prompt uses."""

    id: str
    pseudonym: str


def _fold_char(ch: str) -> str:
    return fold_accents(ch).casefold().translate(_APOSTROPHES).translate(_HYPHENS)


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` (NFC) folded character by character, and for each folded character the index of
    the character of ``text`` it came from."""
    out, where = [], []
    for i, ch in enumerate(text):
        f = _fold_char(ch)
        out.append(f)
        where.extend([i] * len(f))
    return "".join(out), where


def _fold(text: str) -> str:
    return "".join(map(_fold_char, text))


def name_forms(name: str) -> list[list[str]]:
    """The forms of ``name`` that identify its bearer, each as its folded pieces: the whole name
    (titles dropped), each word, each piece of a hyphenated or apostrophed word.

    ``"Dr. Ana Vasquez-Lindqvist"`` -> ``[["ana", "vasquez", "lindqvist"], ["ana"],
    ["vasquez", "lindqvist"], ["vasquez"], ["lindqvist"]]``.
    """
    forms: list[list[str]] = []
    whole: list[str] = []
    for i, word in enumerate(w.strip(".,;:()[]\"") for w in name.split()):
        raw = [p for p in _PIECE_SPLIT.split(word) if p]
        pieces = [_fold(p) for p in raw]
        if not pieces or (len(pieces) == 1 and pieces[0] in TITLES):
            continue
        whole += pieces
        if len(pieces) > 1:
            forms.append(pieces)
        forms += [[p] for p, r in zip(pieces, raw)
                  if len(p) > 1 and p not in TITLES and not (r.islower() and p in PARTICLES and (i or len(raw) > 1))]
    if len(whole) > 1:
        forms.insert(0, whole)
    unique: list[list[str]] = []
    for form in forms:
        if form not in unique:
            unique.append(form)
    return unique


def _form_pattern(form: list[str]) -> str:
    return r"[\s'\-]*".join(re.escape(p) for p in form)


class NameReplacer:
    """Replaces every form of the given names (see the module docstring) in a text.

    ``owners``: ``(name or nickname, replacement)`` pairs; a form that several replacements
    claim is replaced by :data:`SHARED_NAME`.
    """

    def __init__(self, owners: list[tuple[str, str]]) -> None:
        claims: dict[tuple[str, ...], set[str]] = {}
        for name, replacement in owners:
            for form in name_forms(name):
                claims.setdefault(tuple(form), set()).add(replacement)
        ordered = sorted(claims, key=lambda f: (-sum(map(len, f)), f))
        self.replacements = [next(iter(claims[f])) if len(claims[f]) == 1 else SHARED_NAME for f in ordered]
        alternatives = "|".join(f"(?P<n{i}>{_form_pattern(list(f))})" for i, f in enumerate(ordered))
        self.pattern = re.compile(rf"{_LETTER_BEFORE}(?:{alternatives})s?{_LETTER_AFTER}") if ordered else None

    def __call__(self, text: str) -> str:
        """``text`` with every form replaced (a possessive or plural ``s`` kept as written)."""
        text = unicodedata.normalize("NFC", text)
        if self.pattern is None:
            return text
        folded, where = _folded(text)
        out, done = [], 0
        for m in self.pattern.finditer(folded):
            group = next(k for k, v in m.groupdict().items() if v is not None)
            start, end = where[m.start(group)], where[m.end(group) - 1] + 1
            while end < len(text) and unicodedata.combining(text[end]):
                end += 1
            out += [text[done:start], self.replacements[int(group[1:])]]
            done = end
        return "".join(out) + text[done:]


def speakers(turns: list[Cue]) -> list[str]:
    """The speakers' names in order of first speech."""
    return list(dict.fromkeys(t.speaker for t in turns if t.speaker))


def resolve_aliases(aliases: list[tuple[str, str]], speakers: list[str]) -> list[tuple[str, str]]:
    """``(name, nickname)`` pairs with each name replaced by the speaker's name as the transcript
    writes it (``name`` matches in any case or accent form).

    Raises:
        ValueError: a name that is no speaker's, or an empty nickname.
    """
    out = []
    for name, nick in aliases:
        key = _WORDS.tokens(name)
        speaker = next((s for s in speakers if _WORDS.tokens(s) == key), None)
        if speaker is None or not _WORDS.tokens(nick):
            problem = "no speaker of the transcript has that name" if speaker is None else "the nickname is empty"
            raise ValueError(f"--alias {name}={nick}: {problem}")
        out.append((speaker, nick))
    return out


def pseudonymise(turns: list[Cue], aliases: list[tuple[str, str]] = ()
                 ) -> tuple[list[Participant], dict[str, str], list[dict[str, Any]], NameReplacer]:
    """Replace every speaker's name, in the speakers and in the text, by a pseudonym.

    ``aliases``: ``(speaker's name, nickname)`` pairs; the name in any case or accent form.
    Returns ``(participants, {real name: id}, turns, replacer)`` with turns
    ``{"idx", "speaker", "text"}`` (ids in order of first speech); ``replacer`` replaces the same
    names in any other text (the source file's name).

    Raises:
        ValueError: an alias names no speaker, or gives no nickname.
    """
    real = speakers(turns)
    nicks = resolve_aliases(list(aliases), real)
    used = {w for t in turns for w in _WORDS.tokens(f"{t.speaker} {t.text}")}
    used |= {w for _, nick in nicks for w in _WORDS.tokens(nick)}
    pool = [p for p in PSEUDONYMS if p.casefold() not in used]
    participants = [Participant(f"P{i + 1}", pool[i]) for i in range(len(real))]
    ids = {name: p.id for name, p in zip(real, participants)}
    by_id = {p.id: p.pseudonym for p in participants}
    owners = [(name, by_id[ids[name]]) for name in real] + [(nick, by_id[ids[name]]) for name, nick in nicks]
    replacer = NameReplacer(owners)
    out = [{"idx": i + 1, "speaker": ids[t.speaker], "text": replacer(t.text)} for i, t in enumerate(turns)]
    return participants, ids, out, replacer
