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

import ast
import re
from typing import Collection

#: Characters a scaffold-mode free-text field may use: printable ASCII but ``"`` and
#: ``\`` (the grammar writes them raw inside a JSON string) and, since plan version 10, but
#: the brackets, braces, backtick, ``<>^_|`` of code and markup, Latin-1 and Latin Extended
#: letters, typographic quotes, dashes and the ellipsis. No newline: a field is one
#: paragraph. Why version 10: the 1.5B demo model ran a line on into the JSON and code it
#: was writing ("m.{}},  {   }  ]}  ```obj['turns'] = turns  # Re.", a clean-clone demo run,
#: 2026-12-07), which the gates reject; spoken meeting text needs none of those characters.
LATIN_TEXT = r"[ !#-;=?-Z~a-z¡-ɏ‘’“”–—…]"


#: :data:`LATIN_TEXT` without the sentence ends ``.?!``: a character inside a sentence.
_IN_SENTENCE = r"[ #-\-/-;=@-Z~a-z¡-ɏ‘’“”–—…]"
#: A ``.?!`` inside a sentence: in a number ("v2.1", "3.5%"), an abbreviation's inner dots
#: ("e.g.", "i.e."), an ellipsis or "?!", so that only ``.?!`` and a space (or the text's end)
#: end a sentence, and no sentence is glued to the next: "340 law exams.Our goal", "the
#: model.uguayx, how", "our project..Previously", "evaluated.0nHumanEval" (demo lines,
#: 2026-12-07; the last is a newline the grammar keeps out, written as "0n"). Up to plan
#: version 7 a closing mark or ``,;:`` could follow a stop inside a sentence; held to three
#: sentences, the model went on through it: "research.'ve been working", "project.'re
#: focusing" (a case the gates accepted, 2026-12-07). A line now ends after its third stop.
#: Since version 9 an ellipsis is followed by a space: the model ran ellipses together into
#: hundreds of dots inside a line ("techniques...z....."; a clean-clone run, 2026-12-07).
#: Since version 10 the inner dots are those of "e.g." and "i.e." only, and "?!" is not
#: written: the model ran letters and dots on (".x.x.x.x."), glued a speaker's cue on after
#: a stop as if it were an abbreviation (".m.Ueda continues") and wrote 400 characters of
#: "?!!!??" before a phrase (clean-clone demo runs, 2026-12-07; all gate failures since). The
#: inner dots of "e.g." and "i.e." are followed by a comma or a space: a v10 demo line had
#: "e.g.... using", which the gate on punctuation run on rejects.
_STOP_INSIDE = r"[0-9][.][0-9]|[.][ge][.][, ]|[.][.][.] "

#: Most sentences in a scaffold-mode line or inner thought (the prompts ask for one to three).
MAX_SENTENCES = 3


def in_sentence(low: int, high: int) -> str:
    """The regex (without anchors) of ``low`` to ``high`` characters (about: "2.1" or
    ".g." counts as one) inside one sentence of :data:`LATIN_TEXT` (a ``.?!`` only as
    :data:`_STOP_INSIDE` has it)."""
    return "(%s|%s){%d,%d}" % (_IN_SENTENCE, _STOP_INSIDE, low, high)


def sentence(high: int) -> str:
    """The regex (without anchors) of one sentence of at most ``high`` characters, ending
    in ``.``, ``?`` or ``!``."""
    return in_sentence(1, max(1, high - 1)) + "[.?!]"


def sentences(count: int, high: int) -> str:
    """The regex (without anchors) of one to ``count`` sentences of :data:`LATIN_TEXT`, in
    all at most ``high`` characters and every one ending in ``.``, ``?`` or ``!``,
    separated by a space: each sentence is at most ``high // count`` characters (a ``.``
    that a non-space follows, "v2.1", stays inside a sentence).

    Why (scaffold plan version 7): asked for one to three sentences, the 1.5B demo model
    wrote five or six per line and ran one line to the 700-character limit, cut off
    mid-sentence ("... valuable insights into the key"), which the cut-off gate discards
    (a clean-clone demo run, 2026-12-06); the next line went on with the cut sentence.
    Held to three, the line ends after its third sentence. A single sentence that reaches
    ``high // count`` characters is ended there by the grammar; the 1.5B model's
    sentences ran to about 200 characters."""
    one = sentence(max(2, high // count))
    return "%s( %s){0,%d}" % (one, one, count - 1)


def free_text(low: int, high: int) -> str:
    """The regex (without anchors) of ``low`` to ``high`` characters of :data:`LATIN_TEXT`."""
    return "%s{%d,%d}" % (LATIN_TEXT, low, high)


#: A snippet of the rejected text as a gate failure quotes it, in parentheses after what it
#: shows: `` ('ata. e.g.... using')`` or ``(702 chars, ends 'valuable insights into the key')``
#: (Python's ``repr`` of the snippet, single- or double-quoted).
_QUOTED_SNIPPET = re.compile(r""" \((\d+ chars), ends ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)"""
                             r"""| \(('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)""")


def unquoted(failure: str, keep: Collection[str] = ()) -> str:
    """A gate ``failure`` as a scaffold-mode regeneration request shows it: without the
    snippets of the rejected text it quotes in parentheses (`` ('ata. e.g.... using')``
    dropped; ``(702 chars, ends '...key')`` becomes ``(702 chars)``), except a snippet whose
    text is in ``keep`` (a stage-2 case's surface forms, which its lines must say). The
    discard reason and ``show`` keep the whole failure.

    Why (scaffold plan version 11): the 1.5B demo model pasted a quoted snippet of its
    rejected line into its regeneration: after the run-on gate quoted 'ata. e.g.... using',
    five of the six new lines held it and said "using..." 18 times (a clean-clone demo run,
    2026-12-07); stage 1 already showed its failures without the rejected surface forms."""
    def shown(m: re.Match[str]) -> str:
        chars, quote = (m.group(1), m.group(2)) if m.group(2) is not None else (None, m.group(3))
        if ast.literal_eval(quote) in keep:
            return m.group()
        return f" ({chars})" if chars else ""
    return _QUOTED_SNIPPET.sub(shown, failure)


__all__ = ["LATIN_TEXT", "MAX_SENTENCES", "free_text", "in_sentence", "sentence", "sentences", "unquoted"]
