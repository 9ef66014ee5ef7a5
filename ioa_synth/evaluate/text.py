"""Text normalisation for comparing dialogue expressions with misalignment points'
surface forms (issue 8: the ``ambiguity`` baseline records whether each selected
expression overlaps an MA's surface form).

The normaliser is the toolkit's one (``ioa_synth.seeds.ids.normalize_title``: NFKD,
accents folded, casefolded, letters and digits kept); here it is split into tokens and
function words are dropped, so that "the budget" and "budget" overlap but "the plan"
and "the budget" do not.
"""

from __future__ import annotations

from ioa_synth.seeds.ids import normalize_title

#: Function words ignored by :func:`content_tokens` (English articles, pronouns, auxiliaries,
#: prepositions, conjunctions): they carry no reading of their own.
STOP_WORDS: frozenset[str] = frozenset("""
a an the this that these those it its we our us you your i me my he she they them their
is are was were be been being am do does did have has had will would shall should can could may might must
of to in on at by for with from as into onto about over under than then so and or but if not no
let lets let's s t just also very all any some each
""".split())

#: Share of the shorter side's content tokens that must be shared for an overlap.
OVERLAP_THRESHOLD = 0.5


def content_tokens(text: str | None) -> frozenset[str]:
    """Normalised tokens of ``text`` without :data:`STOP_WORDS`:
    ``"Let's learn Torch first."`` → ``{"learn", "torch", "first"}``."""
    return frozenset(t for t in normalize_title(text).split() if t not in STOP_WORDS)


def token_overlap(a: str | None, b: str | None) -> float:
    """Overlap coefficient of the content tokens of ``a`` and ``b``: |A ∩ B| / min(|A|, |B|),
    in 0-1; 0 when either has no content token."""
    ta, tb = content_tokens(a), content_tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def overlapping_mas(expression: str, surface_forms: dict[str, str | None]) -> dict[str, float]:
    """``{MA id: overlap}`` (rounded to 4 places) of the MAs whose surface form overlaps
    ``expression`` by at least :data:`OVERLAP_THRESHOLD`, in the order of ``surface_forms``."""
    scores = {ma: round(token_overlap(expression, form), 4) for ma, form in surface_forms.items()}
    return {ma: s for ma, s in scores.items() if s >= OVERLAP_THRESHOLD}
