"""Words run together in lower case ("isaccuracy", "onprivacy", "thispaper"): a function word
glued to the next word, which the camel-case patterns of
:data:`~ioa_synth.protocol.gates_form.GLUED_WORDS` cannot see; and a sentence's end glued to
what follows, or punctuation run on (:data:`SENTENCE_DEBRIS`).

A token counts as glued when it is all lower-case letters, is no word of an English word
list (pyspellchecker's, about 160,000 words), and splits into one of :data:`FUNCTION_WORDS`
followed by a listed word of four or more letters, by two listed words of three or more, by
a listed word of six or more and a rest ("acrossmultiplecales"), or by another function word
("tothe"). The 1.5B demo model wrote such phrases when a grammar held it to six words (a case
it accepted, 2026-12-07: "our objective isaccuracy", "our team agrees onprivacy
regulations"; another, the same day: "final tune various base models acrossmultiplecales").
Over the 4,598 distinct lower-case words of six or more letters in the seed corpus and the
shared fixtures only "informationally" matched (listed in :data:`NOT_GLUED`); jargon the list
lacks ("dataset", "pretrained", "dataloader", "allreduce", "throughput") does not match.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

#: Closed-class words the demo model glued to the next word.
FUNCTION_WORDS = ("is", "are", "was", "were", "be", "on", "of", "the", "this", "that", "these", "those", "to", "in",
                  "for", "and", "or", "with", "our", "their", "your", "its", "than", "from", "by", "an", "as", "at",
                  "into", "about", "between", "we", "it", "across", "through", "within", "among", "against", "during",
                  "before", "after", "using", "via", "without", "each", "every", "both", "more", "most", "very", "not",
                  "can", "will", "should", "has", "have", "had", "but", "so", "if", "when", "which", "what", "how")

#: Real words that look glued and that the word list lacks.
NOT_GLUED = frozenset({"onboarding", "onboard", "inpainting", "outpainting", "online", "offline", "inline",
                       "informationally"})

#: Debris of a sentence run on, each pattern with a literal first character (one alternation of
#: them all cost ~0.7 ms per 4 KB of text, a per-call cost of every build; these ~20 us):
#: a sentence's end glued to the next word by a quote mark ("research.'ve been", "project.'re
#: focusing", the 1.5B demo model's way past a three-sentence grammar in a case the gates
#: accepted, 2026-12-07; a quotation closed after its full stop is followed by a space); dots
#: run on past an ellipsis ("techniques...z....." and runs of 244-508 dots in the lines of one
#: demo case); a speaker's cue glued on after a stop ("Leilani.m.Whitefi acknowledges",
#: "questions??.m.Ueda continues:") and single letters and dots run on (".x.x.x.x.") in the
#: lines of another accepted demo case, the same day; and ellipses run on with a space between
#: ("before moving forward... ... And don't forget", a demo line of 972abc3: the scaffold's
#: grammar puts a space after an ellipsis, and the model wrote the next one there).
SENTENCE_DEBRIS = tuple(re.compile(rx) for rx in (r"\.['’][A-Za-z]", r"\?['’][A-Za-z]", r"!['’][A-Za-z]", r"\.\.\.\.+",
                                                  r"\.[a-z]\.(?:[A-Z]|[a-z]\.[a-z]\.)", r"\.\.\. +\.\.\.",
                                                  r"… *…"))

#: Question and exclamation marks run on ("ok?!!!!!??!!!" for 400 characters in the line of a
#: case the gates accepted, 2026-12-07; "Really?!" and "Great!!!" stay) and a stop after them
#: ("techniques??.m"): looked for only in a text with two such marks in a row.
MARKS_RUN_ON = re.compile(r"[!?]{4,}|[!?]{2,}\.")

#: Marks that are debris six times in a row ("******", "------"); dots, question and
#: exclamation marks have their own, shorter runs above.
REPEATABLE_MARKS = "*-=_~#+/\\|<>,;:()[]{}'\"^%&@$`"


#: A stop glued to the dots of an abbreviation ("data.e.g. using", "ata.e.g..." in a v10 demo
#: line): ``.x.y.`` after two letters ("a.k.a." after a space stays).
GLUED_ABBREVIATION = re.compile(r"\.[a-z]\.[a-z]\.")
#: The same word, or run of up to :data:`REPEAT_LONGEST` words, this many times in a row
#: ("using... using... using... using..." 18 times in the lines of a case the gates accepted,
#: 2026-12-07): real speech says "no, no, no", not four. Numbers are left out ("0, 0, 0, 0").
REPEAT_TIMES, REPEAT_LONGEST = 4, 3
_EDGE_MARKS = string.punctuation + "…“”‘’–—"


def repeated_words(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the first run of one to :data:`REPEAT_LONGEST` words said
    :data:`REPEAT_TIMES` times in a row in ``text`` (case and punctuation ignored), or ``None``.
    About 0.1 ms per 4 KB (words compared as bytes, no regex backtracking)."""
    words = [w.strip(_EDGE_MARKS) for w in text.lower().split()]
    for p in range(1, REPEAT_LONGEST + 1):
        need = (REPEAT_TIMES - 1) * p
        same = bytes([a == b and a != "" and not a.isdigit() for a, b in zip(words, words[p:])])
        at = same.find(b"\x01" * need)
        if at >= 0:
            tokens = [m.span() for m in re.finditer(r"\S+", text)]
            return tokens[at][0], tokens[at + need + p - 1][1]
    return None


def sentence_debris(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the first debris in ``text`` (:data:`SENTENCE_DEBRIS`,
    :data:`MARKS_RUN_ON`, six of one of :data:`REPEATABLE_MARKS`, :data:`GLUED_ABBREVIATION`,
    :func:`repeated_words`), or ``None``."""
    spans = [m.span() for m in (rx.search(text) for rx in SENTENCE_DEBRIS) if m]
    for m in GLUED_ABBREVIATION.finditer(text):
        if text[max(0, m.start() - 2):m.start()].isalpha() and m.start() >= 2:
            spans.append(m.span())
            break
    repeated = repeated_words(text)
    if repeated:
        spans.append(repeated)
    if any(pair in text for pair in ("??", "!!", "?!", "!?")):
        m = MARKS_RUN_ON.search(text)
        if m:
            spans.append(m.span())
    for mark in REPEATABLE_MARKS:
        at = text.find(mark * 6)
        if at >= 0:
            spans.append((at, at + 6 + len(text[at + 6:]) - len(text[at + 6:].lstrip(mark))))
    return min(spans) if spans else None

_TOKEN = re.compile(r"\b[a-z]{6,}\b")


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    from spellchecker import SpellChecker  # loaded once, on the first text a gate reads (~0.2 s)

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.dictionary)


def _split(rest: str, known: frozenset[str]) -> bool:
    """Whether ``rest`` is a listed word of 4+ letters, a function word, two listed words of
    3+, or a listed word of 6+ followed by 3+ more letters."""
    if (len(rest) >= 4 and rest in known) or rest in FUNCTION_WORDS:
        return True
    return any(rest[:i] in known and (rest[i:] in known or i >= 6) for i in range(3, len(rest) - 2))


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


def run_together(text: str) -> str | None:
    """What of ``text`` is words or sentences run together (:func:`sentence_debris` with the
    words around it, at most 40 characters; then :func:`glued_word`), or ``None``."""
    debris = sentence_debris(text)
    if debris:
        start, end = debris
        shown = text[max(0, start - 8):end + 6].strip()
        return shown if len(shown) <= 40 else shown[:18] + "..." + shown[-18:]
    return glued_word(text)


__all__ = ["FUNCTION_WORDS", "SENTENCE_DEBRIS", "glued_word", "repeated_words", "run_together", "sentence_debris"]
