"""Answer matching by normalized alias strings (the paper's screening and import rules, §5):
lower case, accents and punctuation removed, whitespace collapsed; an alias occurs in a
text when it appears there as whole words."""

from __future__ import annotations

import random
from typing import Callable, Iterable

from ioa_synth.text.normalise import ALNUM, Normaliser

#: The alias rule, a use of the one normaliser: accents folded, ``str.lower`` (not casefold:
#: ``"Straße"`` keeps its ``ß``), letters and digits kept, everything else splits.
ALIASES = Normaliser(ALNUM, casefold=False, fold_accents=True)


def normalize(text: str) -> str:
    """``text`` in lower case without accents or punctuation, single-spaced
    (``"Déjà-vu, São_Paulo!"`` → ``"deja vu sao paulo"``)."""
    return ALIASES.text(text)


def mentions(text: str, aliases: Iterable[str]) -> bool:
    """True when any non-empty alias occurs in ``text`` as whole words (after :func:`normalize`)."""
    padded = f" {normalize(text)} "
    return any(norm and f" {norm} " in padded for norm in (normalize(a) for a in aliases))


def share_alias(a: Iterable[str], b: Iterable[str]) -> bool:
    """True when the two alias lists share a normalized alias."""
    left = {normalize(x) for x in a} - {""}
    return bool(left & ({normalize(x) for x in b} - {""}))


def sample_label(text: str, true_aliases: list[str], manipulated_aliases: list[str]) -> str | None:
    """Screening label of one answer by string matching: ``true``, ``manipulated``,
    ``both``, or ``None`` when neither answer occurs (the judge decides then)."""
    t, m = mentions(text, true_aliases), mentions(text, manipulated_aliases)
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
