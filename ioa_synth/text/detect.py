"""Which language a text is written in: the language gate of ``build --language``
(:mod:`ioa_synth.protocol.gates_language`), offline, with ``lingua-language-detector``
(the optional extra ``languages``).

The detector knows only the languages in play (``LanguageDetectorBuilder.from_languages``):
the build's language, English (what a model drifts back into) and the registry's
``neighbours`` of it (Chinese for Japanese and back). It is built once per language and
process, the first time a text of a non-English build is checked; an English build never
imports lingua.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Any

from ioa_synth.text.languages import DEFAULT_LANGUAGE, language

#: The optional extra that installs the detector.
EXTRA = "languages"
#: Fewest letters a text needs before its language is judged (shorter texts, names and
#: short phrases, are left alone: lingua is unreliable on a few words)
MIN_LETTERS = 20
#: The same for a text checked against Chinese or Japanese (a character there is a syllable or a word).
MIN_LETTERS_CJK = 6


class MissingExtra(RuntimeError):
    """The detector's package is not installed (the message names the extra)."""


def require_detector(tag: str) -> None:
    """Nothing when a build in ``tag`` can check its language (always for English).

    Raises:
        MissingExtra: ``lingua-language-detector`` is not installed."""
    if language(tag).english:
        return
    if importlib.util.find_spec("lingua") is None:
        raise MissingExtra(f"--language {tag} checks each text's language with lingua-language-detector, which is "
                           f"not installed: install the '{EXTRA}' extra (pip install -e '.[{EXTRA}]')")


@lru_cache(maxsize=8)
def detector(tag: str) -> Any:
    """The lingua detector of the languages in play for a build in ``tag``."""
    require_detector(tag)
    from lingua import Language as Lingua
    from lingua import LanguageDetectorBuilder

    lang = language(tag)
    tags = dict.fromkeys([lang.tag, DEFAULT_LANGUAGE, *lang.neighbours])
    return LanguageDetectorBuilder.from_languages(*(getattr(Lingua, language(t).lingua) for t in tags)).build()


def detected_language(text: str, tag: str) -> str | None:
    """The registry tag of the language ``text`` is written in, among those in play for a
    build in ``tag``; ``None`` when the text is too short to tell (:data:`MIN_LETTERS`) or
    lingua cannot tell."""
    letters = sum(ch.isalpha() for ch in text)
    if letters < (MIN_LETTERS_CJK if language(tag).cjk else MIN_LETTERS):
        return None
    found = detector(language(tag).tag).detect_language_of(text)
    if found is None:
        return None
    code = found.iso_code_639_1.name.lower()
    return code
