"""Words run together in lower case ("isaccuracy", "onprivacy", "thispaper"): a function word
glued to the next word, which the camel-case patterns of
:data:`~ioa_synth.protocol.gates_form.GLUED_WORDS` cannot see.

A token counts as glued when it is all lower-case letters, is no word of an English word
list (pyspellchecker's, about 160,000 words), and splits into one of :data:`FUNCTION_WORDS`
followed by a listed word of four or more letters, by two listed words of three or more, or
by another function word ("tothe"). The 1.5B demo model wrote such phrases when a grammar
held it to six words (a case it accepted, 2026-12-07: "our objective isaccuracy", "our team
agrees onprivacy regulations"). Over the 5,371 distinct lower-case words of the seed
corpus's titles and abstracts (34,893 tokens) no word matches; jargon the list lacks
("dataset", "pretrained", "dataloader") does not start with a function word.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Closed-class words the demo model glued to the next word.
FUNCTION_WORDS = ("is", "are", "was", "were", "be", "on", "of", "the", "this", "that", "these", "those", "to", "in",
                  "for", "and", "or", "with", "our", "their", "your", "its", "than", "from", "by", "an", "as", "at",
                  "into", "about", "between", "we", "it")

#: Real words that look glued and that the word list lacks.
NOT_GLUED = frozenset({"onboarding", "onboard", "inpainting", "outpainting", "online", "offline", "inline"})

_TOKEN = re.compile(r"\b[a-z]{6,}\b")


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    from spellchecker import SpellChecker  # loaded once, on the first text a gate reads (~0.2 s)

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.dictionary)


def _split(rest: str, known: frozenset[str]) -> bool:
    """Whether ``rest`` is a listed word of 4+ letters, a function word, or two listed words of 3+."""
    if (len(rest) >= 4 and rest in known) or rest in FUNCTION_WORDS:
        return True
    return any(rest[:i] in known and rest[i:] in known for i in range(3, len(rest) - 2))


def glued_word(text: str) -> str | None:
    """The first lower-case token of ``text`` that is words run together (see the module
    docstring), or ``None``."""
    known = _known()
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in known or tok in NOT_GLUED:
            continue
        for f in FUNCTION_WORDS:
            if tok.startswith(f) and _split(tok[len(f):], known):
                return tok
    return None


__all__ = ["FUNCTION_WORDS", "glued_word"]
