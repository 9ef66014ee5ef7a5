"""Token normalisation and the text-field checks every content gate shares: word tokens,
Snowball stems, content tokens, Jaccard overlap, placeholders and text copied from the
prompt's field descriptions or the instructions registered by the capability whose
outputs are checked (:func:`register_instructions`).

Used by :mod:`ioa_synth.protocol.gates` (stage gates) and
:mod:`ioa_synth.protocol.gates_form` (form gates); thresholds come from
:class:`~ioa_synth.protocol.gate_thresholds.GateThresholds`.
"""

from __future__ import annotations

import functools
import re
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, ParamSpec, TypeVar

from pydantic import BaseModel

from ioa_synth.core.templates import on_overrides_changed
from ioa_synth.protocol.gate_languages import gates_for
from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS
from ioa_synth.text.languages import DEFAULT_LANGUAGE, language_tag
from ioa_synth.text.normalise import WORD, Normaliser, english_stop_words, jaccard, stem_words, stemmer  # noqa: F401

def load_gates() -> GateThresholds:
    """The gate thresholds in force: the defaults of :class:`GateThresholds`, or those of the
    language set by :func:`in_language` (:func:`~ioa_synth.protocol.gate_languages.gates_for`)."""
    return gates_for(current_language())


# -- the language of the texts checked (``build --language``) ---------------------------
_language = threading.local()


def current_language() -> str:
    """The registry tag of the texts this thread's gates check (``"en"`` unless inside
    :func:`in_language`)."""
    return getattr(_language, "tag", None) or DEFAULT_LANGUAGE


@contextmanager
def in_language(tag: str | None) -> Iterator[None]:
    """Check texts in ``tag`` (BCP-47; ``None``/English: the English rules) on this thread
    while the block runs: :func:`words`, :func:`content_words`, :func:`stems` and
    :func:`load_gates` follow it. The build enters it around a case's gates; a worker thread
    that is not inside it checks English.

    Raises:
        UnknownLanguage: a tag the registry does not serve."""
    outer, tag = getattr(_language, "tag", None), language_tag(tag)
    _language.tag = None if tag == DEFAULT_LANGUAGE else tag
    try:
        yield
    finally:
        _language.tag = outer


# -- normalisation (:mod:`ioa_synth.text.normalise`) ----------------------------------
TITLES = {"dr", "prof", "mr", "ms", "mrs", "mx", "sir"}

#: Lower-cased word tokens (``\w+``), nothing dropped.
WORDS = Normaliser(WORD, casefold=False)
#: Content tokens: scikit-learn's English stop words and single letters (the "s" of "paper's") dropped.
CONTENT = WORDS.variant(stop_words=english_stop_words, drop_single_letters=True)
_STEMS, _CONTENT_STEMS = WORDS.variant(stem="english"), CONTENT.variant(stem="english")

_local = threading.local()
P = ParamSpec("P")
R = TypeVar("R")


def stop_words() -> frozenset[str]:
    """The words content tokens drop (loaded once: scikit-learn's list costs ~1 s of CPU to import);
    those of the language of :func:`in_language`."""
    tag = getattr(_language, "tag", None)
    return CONTENT.stop_words if tag is None else _normalisers(tag)[1].stop_words


@lru_cache(maxsize=16)
def _normalisers(tag: str) -> tuple[Normaliser, Normaliser, Normaliser, Normaliser]:
    """``(words, content words, stems, content stems)`` of the language ``tag``
    (:meth:`Normaliser.for_language`: its function words, its stemmer, or character
    bigrams for Chinese and Japanese)."""
    return (WORDS.for_language(tag), CONTENT.for_language(tag), _STEMS.for_language(tag),
            _CONTENT_STEMS.for_language(tag))


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (once per text inside :func:`once_per_output`);
    in Chinese and Japanese, character bigrams (:func:`in_language`)."""
    tag = getattr(_language, "tag", None)
    if tag is None:
        return _memoised("words", text, WORDS.tokens)
    return _memoised(("words", tag), text, _normalisers(tag)[0].tokens)


def content_words(text: str) -> list[str]:
    """Word tokens of ``text`` without stop words and single letters (the "s" of "paper's");
    in another language without its function words (:func:`in_language`)."""
    tag = getattr(_language, "tag", None)
    if tag is None:
        return _memoised("content", text, CONTENT.tokens)
    return _memoised(("content", tag), text, _normalisers(tag)[1].tokens)


def _memoised(kind: Any, text: str, tokens: Callable[[str], list[str]]) -> list[str]:
    memo: dict[tuple[str, Any], list[str]] | None = getattr(_local, "memo", None)
    if memo is None:
        return tokens(text)
    if (kind, text) not in memo:
        memo[kind, text] = tokens(text)
    return list(memo[kind, text])


def stems(text: str, content: bool = True) -> list[str]:
    """Snowball-stemmed word tokens of ``text`` in order; with ``content`` only :func:`content_words`.
    Inside :func:`once_per_output` each text is stemmed once."""
    memo: dict[tuple[Any, ...], list[str]] | None = getattr(_local, "memo", None)
    tag = getattr(_language, "tag", None)
    if memo is None:
        return _stemmed(text, content)
    key = (text, content) if tag is None else (text, content, tag)
    if key not in memo:
        memo[key] = _stemmed(text, content)
    return list(memo[key])


def _stemmed(text: str, content: bool) -> list[str]:
    """The one place the gates stem a text (the per-call work guard counts it); in the
    language of :func:`in_language`."""
    tag = getattr(_language, "tag", None)
    if tag is None:
        return (_CONTENT_STEMS if content else _STEMS).tokens(text)
    return _normalisers(tag)[3 if content else 2].tokens(text)


def once_per_output(gate: Callable[P, R]) -> Callable[P, R]:
    """Decorator of a gate function that checks one output: while it runs, :func:`stems` of a
    text is computed once (a text is compared in several checks: an understanding for its
    overlap and its quantities, a hidden assumption with each of the other member's, an
    utterance for coverage, repeats and leaks), and forgotten when it returns, so that
    nothing is carried from one output to the next."""
    @functools.wraps(gate)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        outer = getattr(_local, "memo", None)
        if outer is None:
            _local.memo = {}
        try:
            return gate(*args, **kwargs)
        finally:
            if outer is None:
                _local.memo = None
    return checked


def is_placeholder(text: str, gates: GateThresholds | None = None) -> bool:
    """True when ``text`` is empty, has no letter or digit, is a bracketed template
    (``<text>``) or one of :attr:`GateThresholds.placeholders`."""
    gates = gates or load_gates()
    stripped = text.strip()
    if not _ALNUM.search(stripped):
        return True
    if _BRACKETED.fullmatch(stripped):
        return True
    return stripped.lower().strip(" .!?:;,'\"`…-") in gates.placeholders


_ALNUM = re.compile(r"[^\W_]")  # a letter or digit (str.isalnum)
_BRACKETED = re.compile(r"<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]")
_DIGIT = re.compile(r"\d")


def ngrams(toks: list[str], n: int) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive tokens of ``toks``."""
    return set(zip(*(toks[i:] for i in range(n))))


#: owner -> the instruction texts it registered (:func:`register_instructions`)
_INSTRUCTIONS: dict[str, Callable[[], Iterable[str]]] = {}


def register_instructions(owner: str, texts: Callable[[], Iterable[str]]) -> None:
    """Compare generated text with ``texts()`` too (read at the first check): the literal
    instructions of the prompts whose answers the gates check, which a model may copy into
    its answer. The build registers its generator templates' prose; registering ``owner``
    again replaces its texts."""
    _INSTRUCTIONS[owner] = texts
    _description_grams.cache_clear()


@lru_cache(maxsize=4)
def _description_grams(n: int) -> frozenset[tuple[str, ...]]:
    """Word n-grams of the field descriptions and of the registered instructions (the
    demo model copied "reach apparent agreement while privately reading" from the system
    prompt into a scenario, and "this paper's own subject matter" from a rule into an MA)."""
    texts = list(FIELD_DESCRIPTIONS.values())
    texts += [part for _, source in sorted(_INSTRUCTIONS.items()) for part in source()]
    return frozenset(g for d in texts for g in ngrams(WORDS.tokens(d), n))  # English prompts: English words


on_overrides_changed(_description_grams.cache_clear)  # the instructions may be prompts replaced by name


def copies_description(text: str, gates: GateThresholds | None = None) -> bool:
    """True when ``text`` shares :attr:`GateThresholds.copied_description_words` consecutive
    words (of ``gates``, default the shipped thresholds) with a field description or the
    registered instructions (:func:`register_instructions`)."""
    n = (gates or load_gates()).copied_description_words
    toks = words(text)
    return len(toks) >= n and not _description_grams(n).isdisjoint(zip(*(toks[i:] for i in range(n))))


def scan_text(fields: Iterable[tuple[str, str]]) -> str:
    """The texts of ``fields`` (``(where, text)`` pairs) joined by line breaks, for a first
    scan of all of them at once: a pattern that :func:`scannable` accepts and that finds
    nothing in it finds nothing in any one text (a line break is no word character, so
    ``\\b`` falls where it does in each text alone); what it finds is then looked for field
    by field, as without the scan (a match across two texts only costs that second look)."""
    return "\n".join(text for _, text in fields)


_ANCHORED = ("^", "$", "\\A", "\\Z", "\\B", "\\G", "(?=", "(?!", "(?<")


def scannable(patterns: Iterable[str]) -> bool:
    """True when none of ``patterns`` has an anchor or a lookaround (which could read the
    joined :func:`scan_text` differently from one text; a negated class ``[^...]`` counts,
    to be safe)."""
    return not any(a in rx for rx in patterns for a in _ANCHORED)


def quantities(text: str, gates: GateThresholds) -> set[str]:
    """The quantity tokens of ``text``: tokens with a digit and :attr:`GateThresholds.number_words`."""
    if text.isascii() and not _DIGIT.search(text):  # no digit anywhere (the usual reading): number words only
        return {w for w in words(text) if w in gates.number_words}
    return {w for w in words(text) if w in gates.number_words or _DIGIT.search(w)
            or (not w.isascii() and any(ch.isdigit() for ch in w))}  # "x²": str.isdigit beyond \d


def overlap(a: str, b: str) -> float:
    """Jaccard overlap (0-1) of the stemmed content-token sets of ``a`` and ``b``."""
    return jaccard(stems(a), stems(b))


def text_fields(prefix: str, obj: BaseModel) -> Iterable[tuple[str, str]]:
    """``(where, text)`` for every free-text field of ``obj`` (lists item by item; ids, types, a point's ``neutral`` ids,
    speakers and an outline turn's ``ma_ids`` are no text), ``where`` being ``prefix.field``
    or ``prefix.field[i]``."""
    for name, value in obj.model_dump().items():
        if name in ("id", "type", "speaker", "speaker_id", "ma_ids", "neutral"):
            continue
        if isinstance(value, str):
            yield f"{prefix}.{name}", value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            yield from ((f"{prefix}.{name}[{i}]", v) for i, v in enumerate(value))


#: A per-field check: ``(find, message)``; ``find(where, text)`` returns how the field is
#: listed when it fails (``where`` itself, or with a detail) or None; ``message`` is the
#: failure sentence with ``{fields}`` for the listed fields. A ``find`` of ``None`` is a check
#: that a first scan of all texts (:func:`scan_text`) ruled out: no field fails it.
FieldCheck = tuple["Callable[[str, str], str | None] | None", str]


def field_failures(fields: Iterable[tuple[str, str]], checks: list[FieldCheck]) -> list[str]:
    """One failure sentence per check of ``checks`` that some of ``fields`` (``(where, text)``
    pairs) fail, listing those fields, in the order of ``checks``."""
    checks = [check for check in checks if check[0] is not None]
    found: list[list[str]] = [[] for _ in checks]
    for where, text in fields:
        for listed, (find, _) in zip(found, checks):
            label = find(where, text)  # type: ignore[misc]
            if label is not None:
                listed.append(label)
    return [message.format(fields=", ".join(listed)) for listed, (_, message) in zip(found, checks) if listed]


def text_failures(fields: Iterable[tuple[str, str]], gates: GateThresholds) -> list[str]:
    """One failure listing every placeholder field, one listing every copied description."""
    fields = list(fields)
    placeholder = {where: is_placeholder(text, gates) for where, text in fields}  # both checks ask
    # the word tokens of the joined texts are every text's in turn: no copied n-gram there, none in any text
    any_copy = copies_description(scan_text(fields), gates)
    return field_failures(fields, [
        (lambda where, text: f"{where} ({text.strip()[:12]!r})" if placeholder[where] else None,
         "placeholder instead of content in {fields}; write the actual content"),
        ((lambda where, text: where if not placeholder[where] and copies_description(text, gates) else None)
         if any_copy else None,
         "{fields} copies the field description from the instructions; write the actual content"),
    ])
