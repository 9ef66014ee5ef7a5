"""Comparing dialogue expressions with misalignment points' surface forms (the
``ambiguity`` baseline of the paper's §5.1 records whether each selected expression
overlaps an MA's surface form).

Tokens come from the toolkit's normaliser (:mod:`ioa_synth.text.normalise`): accents and
case folded, letters and digits kept, and function words dropped, so that "the budget" and
"budget" overlap but "the plan" and "the budget" do not. A dialogue in another language
(``build --language``) is compared by that language's rules
(:meth:`~ioa_synth.text.normalise.Normaliser.for_language`: its function words; character
bigrams for Chinese and Japanese); English, the default, as above.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ioa_synth.text.normalise import ALNUM, FUNCTION_WORDS, Normaliser

#: Function words ignored by :func:`content_tokens`.
STOP_WORDS = FUNCTION_WORDS
#: Expression tokens: accents and case folded, letters and digits, no function word, no stemming.
EXPRESSION = Normaliser(ALNUM, casefold=True, fold_accents=True, stop_words=FUNCTION_WORDS)

#: Share of the shorter side's content tokens that must be shared for an overlap.
OVERLAP_THRESHOLD = 0.5


def content_tokens(text: str | None, language: str | None = None) -> frozenset[str]:
    """Normalised tokens of ``text`` without :data:`STOP_WORDS` (in ``language``, BCP-47, without
    its function words): ``"Let's learn Torch first."`` → ``{"learn", "torch", "first"}``."""
    return (EXPRESSION if language is None else _expression(language)).token_set(text)


@lru_cache(maxsize=8)
def _expression(language: str) -> Normaliser:
    return EXPRESSION.for_language(language)


def token_overlap(a: str | None, b: str | None, language: str | None = None) -> float:
    """Overlap coefficient of the content tokens of ``a`` and ``b``: |A ∩ B| / min(|A|, |B|),
    in 0-1; 0 when either has no content token (``language``: as :func:`content_tokens`)."""
    ta, tb = content_tokens(a, language), content_tokens(b, language)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def overlapping_mas(expression: str, surface_forms: dict[str, str | None],
                    overlap: Callable[[str | None, str | None], float] = token_overlap) -> dict[str, float]:
    """``{MA id: overlap}`` (rounded to 4 places) of the MAs whose surface form overlaps
    ``expression`` by at least :data:`OVERLAP_THRESHOLD`, in the order of ``surface_forms``;
    ``overlap`` scores a pair (default :func:`token_overlap`; the ``wordnet`` mode counts
    synonyms, :func:`ioa_synth.probing.wordnet.lexical_overlap`)."""
    scores = {ma: round(overlap(expression, form), 4) for ma, form in surface_forms.items()}
    return {ma: s for ma, s in scores.items() if s >= OVERLAP_THRESHOLD}
