"""The pattern of the scaffold plan's free-text fields (:mod:`ioa_synth.protocol.plan`):
Latin script within the field's length.

Under the scaffold plan every free-text field of both stages is sent with a ``pattern``
that llama.cpp (and any endpoint with regex-constrained decoding) turns into a grammar of
:data:`LATIN_TEXT` characters: the 1.5B demo model switched into Chinese mid-field in about
one case of four, which the content gate "text switches into another script" discards. A
pattern carries the field's length: llama.cpp ignores ``maxLength`` next to a ``pattern``.

Tried and dropped: a pattern that also refused the prompt's ids (``MA1``, ``M2``) inside
text, which the model wrote into every stage-2 dialogue of one demo run. Held away from
the tokens it wanted, the model ran fields on to their length limit in odd spellings
("submamamA", "tommmammmm"): in two demo runs, five stage-1 answers were cut off at a
limit against none in the run before. The gate on the benchmark's vocabulary still
discards such text.
"""

from __future__ import annotations

#: Characters a scaffold-mode free-text field may use: printable ASCII but ``"`` and
#: ``\`` (the grammar writes them raw inside a JSON string), Latin-1 and Latin Extended
#: letters, typographic quotes, dashes and the ellipsis. No newline: a field is one
#: paragraph.
LATIN_TEXT = r"[ -!#-\[\]-~¡-ɏ‘’“”–—…]"


def free_text(low: int, high: int) -> str:
    """The regex (without anchors) of ``low`` to ``high`` characters of :data:`LATIN_TEXT`."""
    return "%s{%d,%d}" % (LATIN_TEXT, low, high)


__all__ = ["LATIN_TEXT", "free_text"]
