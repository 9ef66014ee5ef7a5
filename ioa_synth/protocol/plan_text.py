"""Patterns for the scaffold plan's free-text fields (:mod:`ioa_synth.protocol.plan`):
Latin script, and no point or member id written into the text.

Under the scaffold plan every free-text field of both stages is sent with a ``pattern``
that llama.cpp (and any endpoint with regex-constrained decoding) turns into a grammar:

- characters of :data:`LATIN_TEXT` only: the 1.5B demo model switched into Chinese
  mid-field in about one case of four, which the content gate "text switches into another
  script" discards;
- no ``M``/``m``, optionally followed by ``A``/``a``, directly followed by a digit: the
  model wrote the prompt's ids into what people say ("as for MA1, ...", "[MA2: say ..."),
  in every stage-2 dialogue of one demo run, which the gate on the benchmark's own
  vocabulary (``\\bMA\\d+\\b``) discards. The grammar is stricter than that gate: it also
  refuses "Llama2" or "5 m2" (write "Llama 2", "5 square metres").

A pattern carries the field's length: llama.cpp ignores ``maxLength`` next to a
``pattern``. The length counts steps (a run such as ``mma,`` is one), which differs from
the field's length only for text with runs of ``M`` and ``A``.
"""

from __future__ import annotations

#: Characters a scaffold-mode free-text field may use: printable ASCII but ``"`` and
#: ``\`` (the grammar writes them raw inside a JSON string), Latin-1 and Latin Extended
#: letters, typographic quotes, dashes and the ellipsis. No newline: a field is one
#: paragraph.
LATIN_TEXT = r"[ -!#-\[\]-~¡-ɏ‘’“”–—…]"

_EXTRA = "¡-ɏ‘’“”–—…"
_SPECIAL = {"[": r"\[", "]": r"\]", "\\": "\\\\", "^": r"\^", "-": r"\-"}


def _latin_without(excluded: str) -> str:
    """:data:`LATIN_TEXT` minus the ASCII characters in ``excluded``, as a character class."""
    keep = [c for c in map(chr, range(0x20, 0x7F)) if c not in excluded + '"\\']
    runs: list[list[str]] = []
    for c in keep:
        if runs and ord(c) == ord(runs[-1][-1]) + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    parts = []
    for run in runs:
        a, b = (_SPECIAL.get(run[0], run[0]), _SPECIAL.get(run[-1], run[-1]))
        parts.append(a if len(run) == 1 else f"{a}{b}" if len(run) == 2 else f"{a}-{b}")
    return "[" + "".join(parts) + _EXTRA + "]"


_DIGITS = "0123456789"
_M, _A = "[Mm]", "[Aa]"
#: One step of id-free text: a character other than M/m, or a short run of M/m (at most two,
#: A/a between runs) ended by a character that cannot make an id: not a digit, and after
#: "MA" not M. Unbounded runs let the demo model write "tommmammmm" to a field's limit.
_STEP = "(%s|%s{1,2}(%s%s{1,2}){0,2}(%s|%s%s))" % (_latin_without("Mm"), _M, _A, _M, _latin_without("MmAa" + _DIGITS),
                                       _A, _latin_without("Mm" + _DIGITS))
#: What may close id-free text: a trailing run of M/m, with an A/a.
_TAIL = "(%s{1,2}(%s%s{1,2}){0,2}%s?)?" % (_M, _A, _M, _A)


def free_text(low: int, high: int) -> str:
    """The regex (without anchors) of id-free :data:`LATIN_TEXT` of ``low`` to ``high`` steps."""
    return "%s{%d,%d}%s" % (_STEP, low, high, _TAIL)


__all__ = ["LATIN_TEXT", "free_text"]
