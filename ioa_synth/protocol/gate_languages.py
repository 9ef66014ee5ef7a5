"""The content gates' thresholds for a build in another language (``build --language``).

English keeps :class:`GateThresholds` as shipped (its values are part of every English
build's fingerprint). For another language of the registry
(:mod:`ioa_synth.text.languages`) the thresholds that are English word lists are replaced
by lists written for that language, and the counts that are measured in tokens are set for
Chinese and Japanese, whose tokens are character bigrams rather than words
(docs/build.md, "Other languages", has the table):

- ``number_words``, ``question_words``, ``statement_words``, ``dangling_words``: German,
  Spanish and French lists; none for Chinese and Japanese (their tokens are bigrams: a
  surface form there is held to its length, its question mark and its punctuation only);
- ``placeholders``: the English ones plus the language's ("k. A.", "desconocido", "未定");
- ``foreign_script``: Chinese text may not drift into kana or Hangul, Japanese into Hangul
  (kanji are Han characters: a Chinese line in a Japanese case is the language gate's to
  find); the others keep the English rule (no CJK in a European language);
- ``unfinished_text``: also the ideographic comma, semicolon and colon for Chinese and Japanese;
- ``min_understanding_words`` 8, ``max_surface_words`` 12, ``private_ngram_words`` 6 and
  ``thought_outline_words`` 8 for Chinese and Japanese (bigrams: about 9, 13, 7 and 9 characters).

Everything else (overlap shares, the JSON and meta-vocabulary patterns, stock names) is the
same in every language.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.text.languages import language

_W = str.split

#: Per language, the thresholds that differ from English.
_CHANGES: dict[str, dict[str, Any]] = {
    "de": {
        "number_words": _W("zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig vierzig fünfzig "
                           "hundert tausend million millionen milliarde milliarden wenige dutzend hälfte halb viertel"),
        "question_words": _W("was warum wieso weshalb wie wann wo wohin welche welcher welches wer wen wem wessen ist "
                             "sind hat haben kann können soll sollen würde wird werden gibt"),
        "statement_words": _W("ist sind war waren bedeutet bedeuten heißt meint bezeichnet"),
        "dangling_words": _W("der die das den dem des ein eine einen einem einer eines und oder aber für mit von vom zu "
                             "zum zur in im an am auf bei aus nach über unter als dass sein seine ihr ihre unser unsere"),
        "placeholders_extra": ("k. a", "k.a", "keine angabe", "unbekannt", "entfällt", "siehe oben", "dito"),
    },
    "es": {
        "number_words": _W("dos tres cuatro cinco seis siete ocho nueve diez once doce veinte treinta cuarenta "
                           "cincuenta cien ciento mil millón millones pocos pocas docena mitad cuarto"),
        "question_words": _W("qué cómo cuándo dónde cuál cuáles quién quiénes cuánto cuánta cuántos cuántas es son "
                             "hay puede pueden debe deben"),
        "statement_words": _W("es son era eran fue significa significan refiere"),
        "dangling_words": _W("el la los las un una unos unas de del a al en con por para y o u e que su sus nuestro "
                             "nuestra nuestros nuestras entre sobre sin"),
        "placeholders_extra": ("n/d", "desconocido", "ninguno", "igual", "ver arriba", "por definir"),
    },
    "fr": {
        "number_words": _W("deux trois quatre cinq six sept huit neuf dix onze douze vingt trente quarante cinquante "
                           "cent mille million millions milliard milliards quelques douzaine moitié quart"),
        "question_words": _W("que quoi pourquoi comment quand où quel quelle quels quelles qui combien est peut "
                             "doit faut"),
        "statement_words": _W("est sont était étaient signifie signifient désigne désignent"),
        "dangling_words": _W("le la les l un une des du de d au aux à en dans par pour avec et ou que qui son sa ses "
                             "notre nos leur leurs sur entre sans"),
        "placeholders_extra": ("n/d", "inconnu", "aucun", "néant", "idem", "voir ci-dessus", "à définir"),
    },
    "zh": {
        "number_words": (), "question_words": (), "statement_words": (), "dangling_words": (),
        "placeholders_extra": ("无", "待定", "未知", "同上", "暂无"),
        "foreign_script": r"[\u3040-\u30ff\uac00-\ud7af]",
    },
    "ja": {
        "number_words": (), "question_words": (), "statement_words": (), "dangling_words": (),
        "placeholders_extra": ("なし", "未定", "不明", "同上", "特になし"),
        "foreign_script": r"[\uac00-\ud7af]",
    },
}

#: Token counts of Chinese and Japanese, whose tokens are character bigrams.
_CJK_COUNTS = {"min_understanding_words": 8, "max_surface_words": 12, "private_ngram_words": 6,
               "thought_outline_words": 8, "unfinished_text": r"[,;:、，；：]\s*$"}


@lru_cache(maxsize=16)
def gates_for(tag: str | None = None) -> GateThresholds:
    """The gate thresholds of a build in ``tag`` (BCP-47; ``None`` or English: the shipped
    :class:`GateThresholds`, the same object for every call).

    Raises:
        UnknownLanguage: a tag the registry does not serve."""
    lang = language(tag)
    base = GateThresholds()
    if lang.english:
        return base
    changes = dict(_CHANGES.get(lang.tag, {}))
    extra = tuple(changes.pop("placeholders_extra", ()))
    changes["placeholders"] = base.placeholders + extra
    if lang.cjk:
        changes |= _CJK_COUNTS
    return base.model_copy(update={k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()})
