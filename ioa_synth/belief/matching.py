"""Answer matching by normalized alias strings (the paper's screening and import rules, §5):
lower case, accents and punctuation removed, whitespace collapsed; an alias occurs in a
text when it appears there as whole words.

``language`` (a BCP-47 tag of :mod:`ioa_synth.text.languages`; ``None``: English, the paper's
rule, unchanged): German, Spanish and French match by the same rule. Chinese and Japanese
write no spaces between words, so there an alias occurs in a text when it appears there as a
substring of the normalized text (``"東京"`` in ``"首都は東京です"``), except that a Latin or
digit edge of the alias may not continue a Latin word or number of the text (``"Python"``
is in ``"Pythonを使う"``, not in ``"Pythonista"``); accents are not folded there (NFKD would
strip kana's voicing marks: ``"データ"`` would read ``"テータ"``), widths are unified (NFKC).

An item's ``language`` (:class:`ioa_synth.belief.items.Item`) chooses the rule for its
answers; the importers (SimpleQA, Wikidata) make English items."""

from __future__ import annotations

import random
import re
import unicodedata
from typing import Callable, Iterable

from ioa_synth.text.languages import language as language_of
from ioa_synth.text.normalise import ALNUM, Normaliser

#: The alias rule, a use of the one normaliser: accents folded, ``str.lower`` (not casefold:
#: ``"Straße"`` keeps its ``ß``), letters and digits kept, everything else splits.
ALIASES = Normaliser(ALNUM, casefold=False, fold_accents=True)


#: The rule of Chinese and Japanese: the alias rule without accent folding.
CJK_ALIASES = ALIASES.variant(fold_accents=False)
#: A Latin letter or digit: a word character that is no CJK character (see the module docstring).
_LATIN = re.compile(r"[^\W\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


def normalize(text: str, language: str | None = None) -> str:
    """``text`` in lower case without accents or punctuation, single-spaced
    (``"Déjà-vu, São_Paulo!"`` → ``"deja vu sao paulo"``); in Chinese and Japanese, accents
    (voicing marks) kept and widths unified (NFKC: ``"ＴＯＫＹＯ"`` → ``"tokyo"``)."""
    if language_of(language).cjk:  # NFKC: full-width Latin and half-width kana to their usual forms
        return CJK_ALIASES.text(unicodedata.normalize("NFKC", text))
    return ALIASES.text(text)


def mentions(text: str, aliases: Iterable[str], language: str | None = None) -> bool:
    """True when any non-empty alias occurs in ``text`` as whole words (after :func:`normalize`);
    in Chinese and Japanese, as a substring whose Latin edges are word edges."""
    if language_of(language).cjk:
        norm_text = normalize(text, language)
        return any(norm and _in_cjk(norm, norm_text) for norm in (normalize(a, language) for a in aliases))
    padded = f" {normalize(text)} "
    return any(norm and f" {norm} " in padded for norm in (normalize(a) for a in aliases))


def _in_cjk(alias: str, text: str) -> bool:
    """``alias`` in ``text`` (both normalized) as a substring, not inside a Latin word or number."""
    start = text.find(alias)
    while start >= 0:
        end = start + len(alias)
        before_ok = start == 0 or not (_LATIN.match(alias[0]) and _LATIN.match(text[start - 1]))
        after_ok = end == len(text) or not (_LATIN.match(alias[-1]) and _LATIN.match(text[end]))
        if before_ok and after_ok:
            return True
        start = text.find(alias, start + 1)
    return False


def share_alias(a: Iterable[str], b: Iterable[str], language: str | None = None) -> bool:
    """True when the two alias lists share a normalized alias."""
    left = {normalize(x, language) for x in a} - {""}
    return bool(left & ({normalize(x, language) for x in b} - {""}))


def sample_label(text: str, true_aliases: list[str], manipulated_aliases: list[str],
                 language: str | None = None) -> str | None:
    """Screening label of one answer by string matching: ``true``, ``manipulated``,
    ``both``, or ``None`` when neither answer occurs (the judge decides then)."""
    t, m = mentions(text, true_aliases, language), mentions(text, manipulated_aliases, language)
    if t and m:
        return "both"
    return "true" if t else "manipulated" if m else None


def borrow_answer(question: str, true_names: list[str], pool: list[tuple[str, list[str]]], rng: random.Random,
                  compatible: Callable[[str], bool] = lambda a: True) -> tuple[str, list[str]] | None:
    """The manipulated answer of an imported item (§5): a random ``(answer, aliases)`` of
    ``pool`` (the answers of other questions) that shares no alias with ``true_names``, does
    not occur in ``question`` and is accepted by ``compatible``; ``None`` when there is none.
    Candidates are de-duplicated by answer and sorted before ``rng`` picks, so a seeded
    ``rng`` gives the same choice on every run."""
    candidates = [(a, al) for a, al in pool if not share_alias([a, *al], true_names)
                  and not mentions(question, [a, *al]) and compatible(a)]
    unique = sorted({a: al for a, al in candidates}.items())
    return rng.choice(unique) if unique else None
