"""The language registry (``build --language``) and the normaliser's rules per language:
tags, tokens (Snowball stems; character bigrams for Chinese and Japanese), the detector of
the language gate. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ioa_synth.text.languages import UnknownLanguage, language, language_tag, supported_languages
from ioa_synth.text.normalise import ALNUM, WORD, Normaliser, cjk_ngrams, english_stop_words


def test_bcp47_tags_choose_the_entry_by_their_primary_subtag():
    assert supported_languages()[:6] == ("en", "de", "es", "fr", "zh", "ja")
    assert [language_tag(t) for t in ("de", "de-DE", "DE_at", "zh-Hans-CN", "ja-JP", None)] == \
        ["de", "de", "de", "zh", "ja", "en"]
    assert language("ja").cjk and language("zh").cjk and not language("de").cjk and not language("en").cjk


@pytest.mark.parametrize("tag", ["xx", "tlh-Latn", "de DE", "1de", "-", "german", "", "  "])  # empty: not English
def test_a_tag_without_rules_is_refused_naming_the_supported_ones(tag):
    with pytest.raises(UnknownLanguage, match="supported: en, de, es, fr, zh, ja"):
        language(tag)


def test_every_other_language_has_conventions_of_indirect_disagreement():
    for tag in supported_languages()[1:]:
        assert len(language(tag).conventions) > 200, tag


def test_english_rules_are_the_normaliser_itself():
    words = Normaliser(WORD, casefold=False)
    assert words.for_language("en") is words and words.for_language(None) is words


def test_german_content_stems_by_hand():
    content = Normaliser(WORD, casefold=False, stop_words=english_stop_words, drop_single_letters=True,
                         stem="english").for_language("de")
    # "die", "aus", "dem" are German function words; Snowball german: "testdaten" loses "en"
    # (step 1, in R1), "herbst" loses "st" after a valid st-ending "b" with 3+ letters before
    assert content.tokens("Die Testdaten aus dem Herbst") == ["testdat", "herb"]
    # negations are no function words: "nicht" stays
    assert "nicht" in content.tokens("Das ist nicht der Start")


def test_japanese_tokens_are_bigrams_of_script_runs_by_hand():
    words = Normaliser(WORD, casefold=False).for_language("ja")
    content = Normaliser(WORD, casefold=False, stop_words=english_stop_words, drop_single_letters=True,
                         stem="english").for_language("ja")
    # runs: 秋 | の | テストデータ; the katakana run gives 5 bigrams, a one-character run stays whole
    assert words.tokens("秋のテストデータ") == ["秋", "の", "テス", "スト", "トデ", "デー", "ータ"]
    # content tokens drop hiragana-only tokens (particles and endings); Latin words stay whole
    assert content.tokens("秋のテストデータはBM25です") == ["秋", "テス", "スト", "トデ", "デー", "ータ", "bm25"]


def test_chinese_bigrams_drop_only_pairs_of_function_characters():
    content = Normaliser(ALNUM, stop_words=frozenset({"x"})).for_language("zh")
    # 我们 (both function characters) goes; 用的 keeps its content character
    assert content.tokens("我们用的测试集") == ["们用", "用的", "的测", "测试", "试集"]
    assert cjk_ngrams(["测"], 2) == ["测"]


def test_japanese_keeps_voicing_marks_where_english_rules_fold_accents():
    expr = Normaliser(ALNUM, fold_accents=True)
    assert expr.tokens("データ") == ["テータ"]  # the English rule's NFKD drops the dakuten
    assert expr.for_language("ja").tokens("データ") == ["デー", "ータ"]


def test_detector_tells_the_language_in_play():
    pytest.importorskip("lingua")
    from ioa_synth.text.detect import detected_language

    assert detected_language("Wir nehmen die Testdaten aus dem Herbst, dann sind die Zahlen vergleichbar.", "de") == "de"
    assert detected_language("We take the test data from the autumn, so the numbers compare.", "de") == "en"
    assert detected_language("来週末までに評価結果をまとめられそうですか。", "ja") == "ja"
    assert detected_language("我们能在下周末之前把评估结果整理好吗？", "ja") == "zh"
    assert detected_language("Ja, gut.", "de") is None  # too short to tell


def test_an_english_run_never_loads_the_detector():
    code = ("import sys\n"
            "from ioa_synth.protocol.gates import stage2_gate_failures\n"
            "from ioa_synth.protocol.schemas import Stage1Output, Stage2Output\n"
            "from ioa_synth.testing.scripted_case import valid_stage1, valid_stage2\n"
            "p = Stage1Output.model_validate(valid_stage1())\n"
            "assert stage2_gate_failures(Stage2Output.model_validate(valid_stage2()), p) == []\n"
            "print('lingua' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
