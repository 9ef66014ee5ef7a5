"""Content gates on the form of generated text (the gaps a fresh user of the demo found
after the first gates): text cut off at its field's length limit, schema field names or JSON
syntax inside a text field, an unfinished sentence, the benchmark's own vocabulary inside a
case, a surface form that is a question, a sentence or longer than a
phrase, stock placeholder names,
two members with (nearly) the same ``private_state`` or hidden assumptions, and one
``why_undetected`` reason repeated across MAs.

Called by :func:`ioa_synth.protocol.gates.stage1_gate_failures` and
:func:`~ioa_synth.protocol.gates.stage2_gate_failures`; every threshold is a field of
:class:`~ioa_synth.protocol.gate_thresholds.GateThresholds` (docs/build.md, "Content gates").
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import combinations
from typing import Iterable

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.glued import glued_word, run_together
from ioa_synth.protocol.gates_text import (TITLES, current_language, field_failures, overlap, scan_text, scannable,
                                           stems, words)
from ioa_synth.text.languages import DEFAULT_LANGUAGE, Language, language
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output, request_schema
from ioa_synth.text.normalise import jaccard


@lru_cache(maxsize=1)
def field_limits() -> dict[str, int]:
    """``{field name: maxLength}`` of every string field (and list-of-string item) in the
    stage-1 and stage-2 request schemas (:func:`~ioa_synth.protocol.schemas.request_schema`),
    i.e. the lengths at which a llama.cpp grammar stops a string."""
    limits: dict[str, int] = {}

    def walk(node: object) -> None:
        if isinstance(node, list):
            for sub in node:
                walk(sub)
        elif isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                leaf = sub.get("items", {}) if sub.get("type") == "array" else sub
                if isinstance(leaf, dict) and leaf.get("type") == "string" and "maxLength" in leaf:
                    limits[key] = leaf["maxLength"]
            for sub in node.values():
                walk(sub)

    for model in (Stage1Output, Stage2Output):
        walk(request_schema(model))
    return limits


@lru_cache(maxsize=4096)
def _field_name(where: str) -> str:
    return re.sub(r"\[\d+\]$", "", where.rsplit(".", 1)[-1])


def cut_off(where: str, text: str, gates: GateThresholds) -> bool:
    """True when ``text`` (in field ``where``, e.g. ``MA1.surface_form``) is within
    :attr:`GateThresholds.cutoff_margin_chars` of its field's ``maxLength`` and does not end
    a sentence: the schema's grammar cut it there, mid-sentence. A text that reaches the
    limit with a full stop ("... on idiom structures.", recorded from the demo) is finished."""
    limit = field_limits().get(_field_name(where))
    finished = text.rstrip().endswith((".", "!", "?", '."', ".)", ".'"))
    return limit is not None and len(text) >= limit - gates.cutoff_margin_chars and not finished


def has_json_syntax(text: str, gates: GateThresholds) -> bool:
    """True when ``text`` contains a schema field name (:attr:`GateThresholds.field_name_words`),
    JSON syntax (:attr:`GateThresholds.json_syntax`) or code debris (:data:`CODE_DEBRIS`): a model that lost track of the JSON
    structure wrote part of the object into a value."""
    names = _field_name_tokens(gates.field_name_words)
    named = (not names.isdisjoint(words(text)) if names is not None
             else _word_pattern(gates.field_name_words).search(text.lower()) is not None)
    return named or bool(any_of(gates.json_syntax).search(text)) or CODE_DEBRIS.search(text) is not None


#: Code and JSON debris with no quoted key for :attr:`GateThresholds.json_syntax` to see: a
#: brace, a code fence, a subscript with a quoted key. The 1.5B demo model, past the end of a
#: line, wrote "m.{}},  {   }     ]}  ```obj['turns'] = turns  # Re." into the lines of a case
#: the gates accepted (a clean-clone demo run, 2026-12-07). No sentence of a meeting, spoken or
#: thought, has a brace or a fence; a single backtick round a name ("`fit()`") is left alone.
CODE_DEBRIS = re.compile(r"[{}]|```|\b[A-Za-z_]\w*\[['\"][^'\"\]]*['\"]\]")


@lru_cache(maxsize=16)
def _field_name_tokens(names: tuple[str, ...]) -> frozenset[str] | None:
    """``names`` as a set of word tokens when each is one lower-case ``\\w+`` token (then a
    text names one exactly when its :func:`words` include it, a set lookup on tokens the
    gates make anyway), else ``None`` (the whole-word pattern is used)."""
    return frozenset(names) if all(re.fullmatch(r"\w+", n) and n == n.lower() for n in names) else None


@lru_cache(maxsize=16)
def compiled(patterns: tuple[str, ...], flags: int = 0) -> tuple[re.Pattern[str], ...]:
    """``patterns`` compiled once per run (cached by content: a gate threshold tuple)."""
    return tuple(re.compile(rx, flags) for rx in patterns)


@lru_cache(maxsize=16)
def any_of(patterns: tuple[str, ...], flags: int = 0) -> re.Pattern[str]:
    """One pattern matching where any of ``patterns`` matches (one scan of a text instead of
    one per pattern; compiled once per run)."""
    return re.compile("|".join(f"(?:{rx})" for rx in patterns), flags)


@lru_cache(maxsize=16)
def _word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of ``words`` as a whole word (compiled once per run)."""
    return re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, words)))


def is_question(surface: str, gates: GateThresholds) -> bool:
    """True when a surface form is a question (contains ``?`` or starts with one of
    :attr:`GateThresholds.question_words`) rather than a phrase both members say."""
    toks = surface.lower().split()
    if current_language() != DEFAULT_LANGUAGE and ("？" in surface or "¿" in surface):  # full-width, Spanish
        return True
    return "?" in surface or (len(toks) > 1 and toks[0].strip("\"'(") in gates.question_words)


def surface_form_problem(surface: str, gates: GateThresholds) -> str | None:
    """Why ``surface`` is not a phrase both members say (``None`` when it is one): a question
    (:func:`is_question`), more than :attr:`GateThresholds.max_surface_words` words, a
    statement (one of :attr:`GateThresholds.statement_words` after the first word), stray
    punctuation (:attr:`GateThresholds.surface_punctuation`, an ending of
    :attr:`GateThresholds.unfinished_text`, or two words glued by a full stop,
    :data:`GLUED_WORDS`), or a
    phrase that ends on one of :attr:`GateThresholds.dangling_words` ("the metric used to
    assess the": cut mid-phrase, as the plan's word limit cuts a run-on phrase)."""
    if is_question(surface, gates):
        return "is a question; give the noun phrase both members say"
    toks = words(surface)
    n = len(surface.split())  # "scikit-learn" and "we're" are one word each
    if language(current_language()).cjk:  # no spaces between words: count its character bigrams
        n = len(toks)
    if n > gates.max_surface_words:
        return f"has {n} words; the shared phrase is two to {gates.max_surface_words} words, not a definition"
    plain = surface.strip().removesuffix(".")
    debris = re.search(gates.surface_punctuation, plain) or re.search(gates.unfinished_text, plain)
    if debris:
        return f"has stray punctuation ({debris.group()!r}); give the phrase as plain words"
    english = current_language() == DEFAULT_LANGUAGE  # the glue patterns and word list are English
    glued = GLUED_WORDS.search(plain) if english else None
    run_on = glued.group() if glued else glued_word(plain) if english else None
    if run_on:
        return f"has words run together ({run_on!r}); give the phrase as plain words"
    if set(toks[1:]) & set(gates.statement_words):
        return "is a statement about the phrase; give only the phrase both members say"
    last = surface.split()[-1].strip(".,;:!'\"()").lower() if surface.split() else ""
    if last in gates.dangling_words:  # whole words: "sign-off" does not end on "off"
        return f"ends on {last!r}, in the middle of a phrase; give the complete short phrase"
    return None


def is_stock_name(name: str, gates: GateThresholds) -> bool:
    """True when ``name`` (titles dropped, lower case) is one of :attr:`GateThresholds.stock_names`."""
    return " ".join(w for w in words(name) if w not in TITLES) in gates.stock_names


_NEGATIONS = frozenset({"not", "no", "never", "nor", "cannot", "without"})


def same_premise(a: str, b: str, names: set[str], gates: GateThresholds) -> tuple[bool, float]:
    """``(same, share)``: whether two members' statements ``a`` and ``b`` are one premise.

    ``share`` is the Jaccard overlap of their stemmed content tokens without the members'
    names and ids (``names``: lower-cased tokens), so that "John assumes X" and "Jane
    assumes X" are the copy they are; they are the same when ``share`` reaches
    :attr:`GateThresholds.max_member_overlap`, unless exactly one of them is negated
    ("is accurate enough" vs "may not be accurate enough" are two premises).
    """
    return _same_premise(_premise(a, names), _premise(b, names), gates)


Premise = tuple[set[str], bool]


def _premise(text: str, names: set[str]) -> Premise:
    """What :func:`same_premise` compares of one statement: its stemmed content tokens
    without ``names``, and whether it is negated."""
    tag = current_language()
    if tag != DEFAULT_LANGUAGE:
        return {w for w in stems(text) if w not in names}, negated(text, language(tag))
    return {w for w in stems(text) if w not in names}, bool(_NEGATIONS & set(words(text))) or "n't" in text.lower()


def negated(text: str, lang: Language) -> bool:
    """Whether ``text`` in ``lang`` (not English) holds one of its
    :attr:`~ioa_synth.text.languages.Language.negations`: a word of it in a language written
    with spaces, a substring in Chinese and Japanese (no word boundaries to look for)."""
    if lang.cjk:
        return any(n in text for n in lang.negations)
    return not set(lang.negations).isdisjoint(w.lower() for w in re.findall(r"\w+", text))


def _same_premise(a: Premise, b: Premise, gates: GateThresholds) -> tuple[bool, float]:
    (sa, neg_a), (sb, neg_b) = a, b
    share = jaccard(sa, sb)
    return share >= gates.max_member_overlap and neg_a == neg_b, share


def form_failures(fields: Iterable[tuple[str, str]], gates: GateThresholds) -> list[str]:
    """One failure listing every cut-off field, one listing every field with JSON syntax,
    one listing every field with characters of :attr:`GateThresholds.foreign_script`, one
    listing every unfinished text (:attr:`GateThresholds.unfinished_text`; surface forms have
    their own check), one every field using :attr:`GateThresholds.meta_terms` and one every
    field with words or sentences run together (:func:`~ioa_synth.protocol.glued.run_together`;
    surface forms have their own check)."""
    script, unfinished = compiled((gates.foreign_script, gates.unfinished_text))
    meta, any_meta = compiled(gates.meta_terms, re.IGNORECASE), any_of(gates.meta_terms, re.IGNORECASE)
    fields = list(fields)
    scan = scan_text(fields)  # one scan of every text first: a clean output skips the field-by-field look
    json_seen = not scannable(gates.json_syntax) or has_json_syntax(scan, gates)
    script_seen = not scannable([gates.foreign_script]) or script.search(scan) is not None
    meta_seen = not scannable(gates.meta_terms) or any_meta.search(scan) is not None
    # no pattern of it crosses a line break, nor a token of glued_word; English words only
    run_seen = current_language() == DEFAULT_LANGUAGE and run_together(scan) is not None
    in_words = language(current_language()).name

    def meta_term(where: str, text: str) -> str | None:
        if not any_meta.search(text):  # which term, only when one is there
            return None
        found = next((m for m in (rx.search(text) for rx in meta) if m), None)
        return f"{where} ({found.group()!r})" if found else None

    return field_failures(fields, [
        (lambda where, text: f"{where} ({len(text)} chars, ends {text[-20:]!r})" if cut_off(where, text, gates) else None,
         "text cut off at its length limit in {fields}; write it shorter, as complete sentences"),
        ((lambda where, text: where if has_json_syntax(text, gates) else None) if json_seen else None,
         "field names or JSON syntax inside the text of {fields}; each value is plain prose about its own field"),
        ((lambda where, text: where if script.search(text) else None) if script_seen else None,
         "text switches into another script in {fields}; write every field in " + in_words),
        (lambda where, text: where if (not where.endswith("surface_form") and unfinished.search(text)
                                       and not cut_off(where, text, gates)) else None,
         "unfinished sentence in {fields} (it ends on a comma, semicolon or colon); finish it"),
        (meta_term if meta_seen else None, "the benchmark's own vocabulary inside the meeting in {fields}; describe the meeting itself, "
                    "never the plan or its misalignment points"),
        (_run_together if run_seen else None, "words or sentences run together (or punctuation run on) in {fields}; write every word apart, "
                        "end a sentence with one stop and start the next after a space"),
    ])


def _run_together(where: str, text: str) -> str | None:
    """``where`` with the words run together in its text (a surface form has its own check)."""
    if where.endswith("surface_form"):
        return None
    found = run_together(text)
    return f"{where} ({found!r})" if found else None


#: Words glued together: by a full stop with no space, the second capitalised ("both.Readings",
#: written by the 1.5B demo model into a surface form): token debris in a phrase both members
#: say. "e.g.", "U.S.", "Node.js", "ASP.NET" and code such as "unittest.TestCase" do not match
#: (a lower-case word, then one capitalised word); checked in surface forms only, since an
#: utterance of a software meeting may name ``threading.Lock``.
GLUED_WORDS = re.compile(r"\b[a-z]{2,}\.[A-Z][a-z]+\b"
                         # a short function word run into a capitalised word ("aStructured", "forInstruction"),
                         # a lower-case word run into one ("togeneratePredictive") or into an acronym
                         # ("maintainingIT-based"), and two words joined by an apostrophe ("languagemodel'parameters"),
                         # as the 1.5B demo model wrote them into surface forms (2026-12-06); "iPhone", "mRNA",
                         # "fastText", "macOS", "kNN", "don't" and "o'clock" do not match
                         r"|\b(?:a|an|the|to|for|of|in|on|and|with|by|from)[A-Z][a-z]{3,}"
                         r"|\b[a-z]{4,}[A-Z][a-z]{4,}|\b[a-z]{5,}[A-Z]{2,}|[a-z]{3,}['’][a-z]{3,}")


def stage1_form_failures(out: Stage1Output, fields: list[tuple[str, str]], gates: GateThresholds) -> list[str]:
    """Form failures of a stage-1 output whose text ``fields`` are ``(where, text)`` pairs."""
    failures = form_failures(fields, gates)
    for m in out.members:
        if is_stock_name(m.name, gates):
            failures.append(f"{m.id}.name {m.name!r} is a stock placeholder name; give a realistic, specific name")
    if len(out.members) == 2:
        a, b = out.members
        names = set(stems(f"{a.id} {a.name} {b.id} {b.name}", content=False))
        same_state, share = same_premise(a.private_state, b.private_state, names, gates)
        if same_state:
            failures.append(f"{a.id} and {b.id} have (nearly) the same private_state ({share:.0%} shared content "
                            "words); each member's goals are their own")
        ours = [_premise(x, names) for x in a.hidden_assumptions]  # each statement read once, not once per pair
        theirs = [_premise(y, names) for y in b.hidden_assumptions]
        same = [(i, j) for i, x in enumerate(ours) for j, y in enumerate(theirs) if _same_premise(x, y, gates)[0]]
        if same:
            pairs = ", ".join(f"{a.id}[{i}]~{b.id}[{j}]" for i, j in same)
            failures.append(f"{a.id} and {b.id} share (nearly) the same hidden assumptions ({pairs}); "
                            "each member takes different things for granted")
    for p in out.misalignment_points:
        problem = surface_form_problem(p.surface_form, gates)
        if problem:
            failures.append(f"{p.id}.surface_form {p.surface_form!r} {problem}")
    for p, q in combinations(out.misalignment_points, 2):
        share = overlap(p.why_undetected, q.why_undetected)
        if share >= gates.max_why_undetected_overlap:
            failures.append(f"{q.id}.why_undetected repeats {p.id}'s ({share:.0%} shared content words); "
                            "give each point its own reason")
    return failures

