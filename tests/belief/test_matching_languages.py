"""Belief's alias matching in another language (``language``; no belief command reads one
yet): German, Spanish and French by the English rule (whole words, accents folded); Chinese
and Japanese, written without spaces, by substrings whose Latin edges are word edges, with
kana's voicing marks kept. Expected values by hand in the comments."""

from __future__ import annotations

import pytest

from ioa_synth.belief.matching import mentions, normalize, sample_label, share_alias


def test_japanese_aliases_are_found_inside_unspaced_text():
    # 首都は東京です is one \w+ run: English rules find no whole word 東京 in it
    assert mentions("首都は東京です。", ["東京"], "ja") and not mentions("首都は東京です。", ["東京"])
    # NFKD would strip the dakuten (データ -> テータ); Japanese keeps it
    assert normalize("データ", "ja") == "データ" and normalize("データ") == "テータ"
    assert not mentions("答えはテータです", ["データ"], "ja")
    # a Latin alias inside Japanese: its edges must be word edges
    assert mentions("Pythonを使います", ["python"], "ja")
    assert not mentions("Pythonistaです", ["Python"], "ja")
    # aliases are shared when equal after normalizing, not when one contains the other
    assert not share_alias(["東京都"], ["東京"], "ja") and share_alias(["ＴＯＫＹＯ"], ["tokyo"], "ja")


def test_chinese_screening_labels_by_hand():
    true, manipulated = ["堪培拉"], ["悉尼"]
    assert sample_label("澳大利亚的首都是堪培拉。", true, manipulated, "zh") == "true"
    assert sample_label("我觉得是悉尼，不是堪培拉。", true, manipulated, "zh") == "both"
    assert sample_label("我不确定。", true, manipulated, "zh") is None
    assert sample_label("澳大利亚的首都是堪培拉。", true, manipulated) is None  # English rules: no whole word


@pytest.mark.parametrize("tag", ["de", "es", "fr"])
def test_european_languages_keep_the_english_rule(tag):
    assert mentions("Die Hauptstadt ist München.", ["Munchen"], tag)  # accents folded
    assert not mentions("Münchener Freiheit", ["München"], tag)  # whole words only
    assert normalize("Déjà-vu, São_Paulo!", tag) == normalize("Déjà-vu, São_Paulo!") == "deja vu sao paulo"
