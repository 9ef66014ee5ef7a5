"""The scaffold plan's grammar of phrases: what a planned surface form may be (stage 1),
and how the stage-2 line that first lists a point must say it (:mod:`ioa_synth.protocol.plan`
holds the plan and the request schemas that use both).

Every rule here is a regex that an endpoint with regex-constrained decoding (llama.cpp's
``pattern``) turns into a grammar; llama.cpp's pattern reader has no lookahead and knows few
escapes, so "any word but these" is spelled out (:func:`_not_words`) and specials go in a
character class (:func:`_literal`). The gates still check every phrase and line.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.plan_text import MAX_SENTENCES, in_sentence, sentence
from ioa_synth.protocol.schemas import Stage1Output

#: Words a planned surface form may start with: a phrase as it stands inside a sentence
#: begins with a determiner, possessive or number ("the held-out set", "our March release",
#: "two reviewers"). The demo model wrote nearly every surface form as a question ("What
#: version of ...?", "how to name ..."), which no free first word prevents.
SURFACE_FORM_STARTS = ("the", "our", "your", "their", "its", "a", "an", "this", "that", "these", "those", "each",
                       "every", "any", "all", "both", "one", "two", "three", "first", "last", "next", "final")

#: The letters and digits of a word in a planned surface form (a character-class body).
_WORD_CHARS = "A-Za-z0-9À-ɏ"


def _not_words(stop: tuple[str, ...], longest: int = 20) -> str:
    """A regex (no anchors) of one run of 1 to ``longest`` :data:`_WORD_CHARS` that is not
    one of the lower-case ASCII words ``stop`` in any case: llama.cpp's pattern reader has
    no lookahead, so the complement is spelled out over the words' letter trie (at each
    prefix of a stop word: end here unless the prefix is one, go on with a letter no stop
    word continues with, or follow the trie)."""
    trie: dict[str, Any] = {}
    for word in stop:
        node = trie
        for c in word:
            node = node.setdefault(c, {})
        node[""] = {}

    def rest(depth: int) -> str:
        return "[%s]{0,%d}" % (_WORD_CHARS, longest - depth - 1)

    def other(children: list[str]) -> str:
        letters = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in children]
        return "[%s%s0-9À-ɏ]" % ("".join(letters), "".join(letters).upper())

    def walk(node: dict[str, Any], depth: int) -> str:
        children = sorted(c for c in node if c)
        alts = [other(children) + rest(depth)] if depth < longest else []
        alts += [f"[{c}{c.upper()}]" + walk(node[c], depth + 1) for c in children if depth < longest]
        body = "|".join(alts)
        if depth > 0 and "" not in node:  # the prefix itself is a word, not a stop word
            return f"({body})?" if body else ""
        return f"({body})"

    return walk(trie, 0)


_DEFAULT_GATES = GateThresholds()

#: The joined part of a word: one of ``'-/&+`` and a run of at most 12 letters or digits,
#: or a ``.`` and a digit-led run ("held-out", "R&D", "model's", "v2.1"), at most twice; a
#: dot before a letter was the demo model's way of packing words into the word limit
#: ("multiple.time-series", "capable.ofGenerating.text", 2026-12-07).
_JOINED = r"([-'’/&+][%s]{1,12}|[.][0-9][%s]{0,11})" % (_WORD_CHARS, _WORD_CHARS)

#: A word of a planned surface form: runs of Latin letters and digits (at most 20, then up
#: to two more of at most 12) joined by one of ``'-./&+``, an optional trailing ``%``: the
#: demo model otherwise ran words together ("appropriateresponses") or trailed off in dots
#: ("the matrix...of...second"). Statement words ("is", "are") stay allowed, for the gates
#: to reject: held away from "is", the demo model glued it to the next word instead ("our
#: objective isaccuracy", in a case the gates then accepted, 2026-12-07).
_WORD = "[%s]{1,20}%s{0,2}%%?" % (_WORD_CHARS, _JOINED)

#: The last word of a planned surface form: a :data:`_WORD` that, when it is one plain run,
#: is no :attr:`GateThresholds.dangling_words` ("the impact of environmental policies on",
#: cut at the word limit; the gates reject it).
_LAST_WORD = "(%s%%?|[%s]{1,20}%s{1,2}%%?)" % (_not_words(_DEFAULT_GATES.dangling_words), _WORD_CHARS, _JOINED)

#: The pattern of a planned surface form: one of :data:`SURFACE_FORM_STARTS` or a number,
#: then zero to four more words (:data:`_WORD`) and a last one (:data:`_LAST_WORD`): no
#: question mark, quote or other script, at most the gates' ``max_surface_words``. The 1.5B
#: model runs a phrase to whatever limit the grammar sets (with seven words allowed, nearly
#: every surface form had seven and failed the gates), so a run-on phrase is cut at six
#: words; the last may not be an article, preposition or conjunction, so a cut lands on a
#: content word (scaffold plan version 7: two of four cases of a clean-clone demo run
#: ended at stage 1 on a phrase ending on "a" or "on").
SURFACE_FORM_PATTERN = r'^(%s|[0-9][0-9.,%%]{0,11})( %s){0,4} %s$' % ("|".join(SURFACE_FORM_STARTS), _WORD, _LAST_WORD)

def _literal(text: str, case: str = "either") -> str:
    """``text`` as a regex of its own characters (llama.cpp's pattern reader knows few
    escapes: specials go in a class). ``case`` of its first letter: ``"either"``;
    ``"inside"``, as written (it stands inside a sentence; the demo model otherwise
    capitalised it mid-sentence, "the pre A collection of ..."); ``"opening"``, upper case
    (it opens a sentence)."""
    out = "".join(f"[{c}]" if c in ".+*?()[]{}|^$\\" else c for c in text)
    if case != "inside" and text[:1].isalpha() and text[0].lower() != text[0].upper():
        first = text[0].upper() if case == "opening" else text[0].lower() + text[0].upper()
        out = f"[{first}]" + out[1:]
    return out


def say_surface_forms(turns: list[dict[str, Any]], profiles: Stage1Output) -> None:
    """Hold the utterance (changed in place in ``turns``, the stage-2 turn schemas) of the
    first outline turn listing each MA to contain that MA's surface form (scaffold mode):
    the demo model left a planned phrase unsaid in about one dialogue of two, which the
    coverage gate discards. The line is one to :data:`MAX_SENTENCES` sentences, any of them
    the one that says the phrase(s). In that sentence the
    first phrase stands either inside it (a word, or ``,;:``, and a space before it; the
    phrase as written) or opens it (capitalised); any further phrase stands inside it; a
    space or ``,;:`` follows a phrase, and the sentence ends in ``.?!`` (held to one, the
    model pasted the phrase onto the start or end of its line, which the pasted-phrase gate
    rejects). The rest stays free, in :data:`~ioa_synth.protocol.plan_text.LATIN_TEXT`
    within the field's length.

    Why a phrase may open a sentence (scaffold plan version 7): held to a word before it,
    the demo model that meant to open a sentence with the phrase wrote one stray letter
    first ("As we D a code generation tool is crucial", "So, U the LEXam ..."), which the
    pasted-phrase gate rejects: 2 of 4 cases of one clean-clone demo run (2026-12-06).
    Why sentences: the model wrote five or six per line (see
    :func:`~ioa_synth.protocol.plan_text.sentences`). Why any of them, with the words around
    the phrase up to a whole sentence's length: held to one sentence before the phrase's and
    about 100 characters before the phrase in it, the model that ran past either had the
    phrase forced in mid-word ("do y all base models will be trained", a clean-clone demo
    run, 2026-12-07), which the pasted-phrase gate rejects. A line may so run a little past
    the field's ``maxLength`` (the pattern replaces it for llama.cpp); the reply still parses,
    and its sentences are whole."""
    phrase = {p.id: p.surface_form for p in profiles.misalignment_points}
    said: set[str] = set()
    for schema, planned in zip(turns, profiles.conversation_outline):
        forms = [phrase[i] for i in dict.fromkeys(planned.ma_ids) if i in phrase and i not in said and phrase[i]]
        said.update(planned.ma_ids)
        field = schema["properties"]["utterance"]
        each = field["maxLength"] // MAX_SENTENCES
        share = each - sum(len(f) for f in forms) - 2  # the words around the phrase(s) in their sentence
        if not forms or share < 2:
            continue
        said_in = ""
        for k, form in enumerate(forms):
            inside = ((in_sentence(1, share) if k == 0 else "[ ,;:]" + in_sentence(0, share))
                      + _WORD_END + " " + _literal(form, "inside"))
            said_in += "(%s|%s)" % (inside, _literal(form, "opening")) if k == 0 else inside
        said_in += "([ ,;:]%s)?[.?!]" % in_sentence(0, share)  # the sentence ends
        o, p = sentence(each), said_in  # the phrase's sentence is the first, second or third
        schema["properties"]["utterance"] = {**field, "pattern": "^(%s %s %s|%s %s( %s)?|%s( %s( %s)?)?)$" % (
            o, o, p, o, p, o, p, o, o)}


#: The character before the space that precedes a surface form said in a sentence: a word's
#: last letter or digit, or a comma, semicolon or colon (not a sentence's end).
_WORD_END = "[A-Za-z0-9À-ɏ,;:]"


__all__ = ["SURFACE_FORM_PATTERN", "SURFACE_FORM_STARTS", "say_surface_forms"]
