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

In scripts written without spaces between words (Chinese, Japanese, Korean's syllables attached
to particles, Thai), a name is matched wherever it stands: "田中さん" -> "Averyさん", "김민수씨는"
-> "Avery씨는". In Hebrew and Arabic, a name keeps the one-letter prefixes written onto it ("and",
"to", "in" ...: "ולדני" -> "ולAvery", "ولمحمد" -> "ولAvery"). A name written as one unspaced
word of three or more characters ("佐藤花子") is also matched by each part of two or more
characters a split of it gives ("佐藤", "花子"); a one-character part ("王" of "王伟") is not: give
it as an alias if people use it (``--alias "王伟=王"``), knowing that it then goes wherever the
character stands.

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
_PIECE_SPLIT = re.compile(r"[-'’ʼ‘`´‐‑‒–—·・]+")
#: Scripts written without spaces between words (kana, CJK ideographs, Hangul, Thai): a name in
#: them is matched without word edges.
_UNSPACED = re.compile("[\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf"
                       "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")
#: One-letter prefixes written onto a word in Hebrew (ו ה ב כ ל מ ש) and Arabic (و ف ب ل ك س),
#: up to three, as in "ולדני" ("and to Dani").
_CLITICS = {"hebrew": "(?:[\u05d5\u05d4\u05d1\u05db\u05dc\u05de\u05e9]{1,3})?",
            "arabic": "(?:[\u0648\u0641\u0628\u0644\u0643\u0633]{1,3})?"}
_HEBREW, _ARABIC = re.compile("[\u0590-\u05ff]"), re.compile("[\u0600-\u06ff]")


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
        forms += [[part] for p in pieces for part in _unspaced_parts(p)]
    if len(whole) > 1:
        forms.insert(0, whole)
    elif len(whole) == 1 and len(whole[0]) == 1 and _UNSPACED.match(whole[0]):
        forms.append(whole)  # a one-character name or alias of its own ("王"): asked for, so matched
    unique: list[list[str]] = []
    for form in forms:
        if form not in unique:
            unique.append(form)
    return unique


def _unspaced_parts(piece: str) -> list[str]:
    """The parts of two or more characters that a split of an unspaced CJK or Hangul name of
    three or more characters gives, each a form of its own: "佐藤花子" -> "佐藤", "花子" (and
    "佐藤花", "藤花子"); "김민수" -> "김민", "민수". A family or given name written on its own is
    then found ("佐藤さん", "민수씨"); a one-character part ("王" of "王伟") is not (too many
    everyday words are one character): give it as an alias.
    """
    if len(piece) < 3 or not all(_UNSPACED.match(ch) for ch in piece):
        return []
    cuts = range(1, len(piece))
    return [part for k in cuts for part in (piece[:k], piece[k:]) if len(part) > 1]


def _form_pattern(form: list[str]) -> str:
    return r"[\s'\-·・]*".join(re.escape(p) for p in form)


def _alternative(i: int, form: list[str]) -> str:
    """The pattern of ``form`` as alternative ``n{i}``, with the edges its script has."""
    first, last = form[0][0], form[-1][-1]
    before = "" if _UNSPACED.match(first) else _LETTER_BEFORE
    after = "" if _UNSPACED.match(last) else rf"s?{_LETTER_AFTER}"
    clitic = _CLITICS["hebrew"] if _HEBREW.match(first) else _CLITICS["arabic"] if _ARABIC.match(first) else ""
    return rf"{before}{clitic}(?P<n{i}>{_form_pattern(form)}){after}"


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
        alternatives = "|".join(_alternative(i, list(f)) for i, f in enumerate(ordered))
        self.pattern = re.compile(alternatives) if ordered else None

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
