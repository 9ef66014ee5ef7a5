"""Answer matching by normalized alias strings (the paper's screening and import rules, §5):
lower case, accents and punctuation removed, whitespace collapsed; an alias occurs in a
text when it appears there as whole words."""

from __future__ import annotations

from typing import Iterable

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

