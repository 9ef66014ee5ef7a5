"""The toolkit's one text normaliser: text to comparable tokens.

Every comparison of free text goes through a :class:`Normaliser`; what differs between
uses is said by its parameters, not by another implementation:

- ``pattern``: what a token is: :data:`WORD` (``\\w+``: letters, digits and ``_``),
  :data:`ALNUM` (letters and digits; ``_`` splits) or :data:`NONSPACE` (whitespace splits,
  punctuation stays);
- ``casefold``: :meth:`str.casefold` (``"Straße"`` → ``"strasse"``) or :meth:`str.lower`;
- ``fold_accents``: Unicode NFKD with the combining marks dropped (``"Déjà"`` → ``"Deja"``);
- ``stop_words``: tokens dropped (a set, or a function returning one, loaded on first use);
- ``drop_single_letters``: drop one-letter tokens that are not digits (the ``s`` of ``paper's``);
- ``stem``: a Snowball stemmer language (``"english"``), or ``None``;
- ``cjk_ngrams``: ``0``, or the length of the overlapping character n-grams that runs of CJK
  characters (Chinese, Japanese: no spaces between words) become; other tokens stay whole.

:meth:`Normaliser.for_language` gives the same rules for another language of the registry
(:mod:`ioa_synth.text.languages`): its function words for the stop words, its stemmer, and
character n-grams for Chinese and Japanese. English rules are the ones below, unchanged.

The uses, side by side:

============================  =========  ========  ======  ==========  ============  =======
use                           pattern    casefold  accents stop words  single        stem
============================  =========  ========  ======  ==========  ============  =======
gates: word tokens            WORD       lower     kept    -           kept          -
gates: content stems          WORD       lower     kept    English     dropped       english
evaluate: expression overlap  ALNUM      casefold  folded  function    kept          -
evaluate: reply matching      ALNUM /    casefold  kept    -           kept          -
                              NONSPACE
seeds: title identity         ALNUM      casefold  folded  -           kept          -
belief: alias matching        ALNUM      lower     folded  -           kept          -
============================  =========  ========  ======  ==========  ============  =======
"""

from __future__ import annotations

import importlib.util
import re
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from ioa_synth.text.languages import Language

#: Letters, digits and underscore (``\w+``).
WORD = r"\w+"
#: Letters and digits; underscore and every other character split.
ALNUM = r"[^\W_]+"
#: Runs of non-whitespace: punctuation stays inside tokens.
NONSPACE = r"\S+"

#: English function words (articles, pronouns, auxiliaries, prepositions, conjunctions):
#: they carry no reading of their own.
FUNCTION_WORDS: frozenset[str] = frozenset("""
a an the this that these those it its we our us you your i me my he she they them their
is are was were be been being am do does did have has had will would shall should can could may might must
of to in on at by for with from as into onto about over under than then so and or but if not no
let lets let's s t just also very all any some each
""".split())


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (lower case): a longer list than :data:`FUNCTION_WORDS`.

    Read from scikit-learn's list module alone (``sklearn/feature_extraction/_stop_words.py``,
    a frozenset literal): importing ``sklearn`` loads scipy and pandas, 1-3 s before a build's
    first request. Falls back to the import if the module is not where it was."""
    spec = importlib.util.find_spec("sklearn")  # finds the package without running it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        words = Path(folder) / "feature_extraction" / "_stop_words.py"
        module_spec = importlib.util.spec_from_file_location("_ioa_sklearn_stop_words", words)
        if words.is_file() and module_spec is not None and module_spec.loader is not None:
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            return frozenset(module.ENGLISH_STOP_WORDS)
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


_local = threading.local()
#: Most words the stem cache of one language holds before it starts afresh.
STEM_CACHE_SIZE = 200_000
#: word -> stem per language, shared by all threads: a word's stem never changes, and
#: worker threads that each stemmed their own copy of the vocabulary paid for it once per
#: thread (32 workers starting together spent their first gate checks stemming the same words)
_stems: dict[str, dict[str, str]] = {}


def stemmer(language: str = "english") -> Any:
    """This thread's Snowball stemmer for ``language``: a stemmer object keeps its cursor
    between calls, so one shared by worker threads corrupts words (IndexError or wrong
    stems)."""
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    found = stemmers.get(language)
    if found is None:
        import snowballstemmer

        found = stemmers[language] = snowballstemmer.stemmer(language)
    return found


def stem_words(words: list[str], language: str = "english") -> list[str]:
    """``words`` stemmed by the Snowball stemmer of ``language``, each distinct word stemmed
    once per process (the pure-Python stemmer costs tens of microseconds a word; the gates
    stem the same case's words again and again, and cases share most of their words).
    The cache is shared by threads; the stemmer is this thread's (:func:`stemmer`)."""
    cache = _stems.get(language)
    if cache is None:
        cache = _stems.setdefault(language, {})
    if len(cache) > STEM_CACHE_SIZE:
        cache.clear()
    out = []
    for word in words:
        found = cache.get(word)
        if found is None:
            found = cache[word] = stemmer(language).stemWord(word)
        out.append(found)
    return out


def fold_accents(text: str) -> str:
    """Unicode NFKD with the combining marks dropped: ``"Déjà ﬁn"`` → ``"Deja fin"``."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


class Normaliser:
    """Turns text into tokens by the rules its parameters name (see the module docstring)."""

    def __init__(self, pattern: str = ALNUM, *, casefold: bool = True, fold_accents: bool = False,
                 stop_words: frozenset[str] | Callable[[], frozenset[str]] = frozenset(),
                 drop_single_letters: bool = False, stem: str | None = None, cjk_ngrams: int = 0) -> None:
        self.pattern, self._find = pattern, re.compile(pattern, re.UNICODE).findall
        self.cjk_ngrams = cjk_ngrams
        self.casefold, self.fold_accents, self.stem = casefold, fold_accents, stem
        self.drop_single_letters = drop_single_letters
        self._stop_words = stop_words
        self._filtered = bool(stop_words) or drop_single_letters

    @property
    def stop_words(self) -> frozenset[str]:
        """The stop words (loaded on first use when given as a function)."""
        if callable(self._stop_words):
            self._stop_words = self._stop_words()
        return self._stop_words

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text``, in order."""
        if self.fold_accents:
            text = fold_accents(text)
        toks = self._find(text.casefold() if self.casefold else text.lower())
        if self.cjk_ngrams:
            toks = cjk_ngrams(toks, self.cjk_ngrams)
        if self._filtered:
            stops, single = self.stop_words, self.drop_single_letters
            toks = [t for t in toks if t not in stops and (not single or len(t) > 1 or t.isdigit())]
        return stem_words(toks, self.stem) if self.stem else toks

    def text(self, text: str | None) -> str:
        """The tokens of ``text`` joined by single spaces (``""`` for ``None`` or empty)."""
        return " ".join(self.tokens(str(text))) if text else ""

    def token_set(self, text: str | None) -> frozenset[str]:
        """The set of tokens of ``text`` (empty for ``None``)."""
        return frozenset(self.tokens(str(text))) if text else frozenset()

    def variant(self, **changes: Any) -> "Normaliser":
        """A copy with some parameters changed (e.g. ``stem="english"``)."""
        params = {"pattern": self.pattern, "casefold": self.casefold, "fold_accents": self.fold_accents,
                  "stop_words": self._stop_words, "drop_single_letters": self.drop_single_letters, "stem": self.stem,
                  "cjk_ngrams": self.cjk_ngrams}
        return Normaliser(**(params | changes))

    def for_language(self, lang: "Language | str | None") -> "Normaliser":
        """These rules for ``lang`` (a :class:`~ioa_synth.text.languages.Language` or a BCP-47
        tag; English or ``None``: this normaliser itself). The pattern, case and accent
        rules stay; a normaliser with stop words drops ``lang``'s function words instead, one
        that stems uses ``lang``'s Snowball stemmer; for Chinese and Japanese, CJK runs become
        character n-grams (:data:`~ioa_synth.text.languages.CJK_NGRAM`), nothing is stemmed,
        accents are never folded (NFKD would strip kana's voicing marks) and one-character
        tokens stay (a single ideograph is a word).

        Raises:
            UnknownLanguage: a tag the registry does not serve."""
        from ioa_synth.text.languages import CJK_NGRAM, language

        lang = language(lang) if lang is None or isinstance(lang, str) else lang
        if lang.english:
            return self
        stops = (lang.stop_tokens if self._filtered and self._stop_words else frozenset())
        if lang.cjk:
            return self.variant(stop_words=stops, stem=None, cjk_ngrams=CJK_NGRAM, drop_single_letters=False,
                                fold_accents=False)  # NFKD would strip kana's voicing marks: "デ" -> "テ"
        return self.variant(stop_words=stops, stem=lang.snowball if self.stem else None)


_CJK_RUN: re.Pattern[str] | None = None


def cjk_ngrams(tokens: list[str], n: int) -> list[str]:
    """``tokens`` with every run of CJK characters inside a token replaced by its overlapping
    character ``n``-grams (a run shorter than ``n``: the run itself; hiragana and the other
    CJK characters are separate runs, :data:`~ioa_synth.text.languages.CJK_RUNS`); the rest
    of a token (Latin letters, digits) stays one token: ``["評価データは", "bm25"]`` →
    ``["評価", "価デ", "デー", "ータ", "は", "bm25"]``."""
    global _CJK_RUN
    if _CJK_RUN is None:
        from ioa_synth.text.languages import CJK_RUNS

        _CJK_RUN = re.compile(CJK_RUNS)
    out: list[str] = []
    for tok in tokens:
        for i, part in enumerate(_CJK_RUN.split(tok)):
            if not part:
                continue
            if i % 2 == 0:  # between CJK runs
                out.append(part)
            elif len(part) <= n:
                out.append(part)
            else:
                out.extend(part[j:j + n] for j in range(len(part) - n + 1))
    return out



def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap (0-1) of two token sets: shared over all; 1.0 when both are empty.
    The one overlap measure of the gates' repeat and copy rules and of near-duplicate
    detection."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0
