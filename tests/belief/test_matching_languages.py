"""Belief's alias matching in another language (``language``; no belief command reads one
yet): German, Spanish and French by the English rule (whole words, accents folded); Chinese
and Japanese, written without spaces, by substrings whose Latin edges are word edges, with
kana's voicing marks kept. Expected values by hand in the comments."""

from __future__ import annotations

import json

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


JA_ITEM = {"item_id": "ja-capital", "source": "written for the tests", "relation": "capital",
           "question": "オーストラリアの首都はどこですか？",  # "What is the capital of Australia?"
           "true_answer": "キャンベラ", "manipulated_answer": "シドニー",  # Canberra, Sydney
           "true_statement": "オーストラリアの首都はキャンベラです。",  # "Australia's capital is Canberra."
           "manipulated_statement": "オーストラリアの首都はシドニーです。",  # "... is Sydney."
           "discussion_seed": "オーストラリアの首都について話しましょう。",  # "Let's talk about Australia's capital."
           "language": "ja-JP"}


def test_a_japanese_item_is_checked_and_its_answers_matched_by_the_japanese_rule():
    from ioa_synth.belief.conversation import label_answer
    from ioa_synth.belief.items import Item, check_written

    item = Item.model_validate(JA_ITEM)
    assert item.language == "ja" and item.model_dump()["language"] == "ja"
    assert check_written(item) is None
    # English rules: "オーストラリアの首都はキャンベラです" is one word, so the statement lacks its answer
    assert check_written(item.model_copy(update={"language": None})) == "the true statement lacks the true answer"
    # "I think the capital is Canberra.": the string match decides, no judge is asked
    verdict = label_answer(None, item, "首都はキャンベラだと思います。", None, prematch=True)
    assert (verdict.verdict, verdict.confidence) == ("endorses_true", 1.0)


def test_english_items_are_written_and_digested_as_before(tmp_path):
    from ioa_synth.belief.items import ItemsError, Item, items_digest, load_items, write_items

    english = {k: v for k, v in JA_ITEM.items() if k != "language"} | {"item_id": "en"}
    item = Item.model_validate(english)
    assert "language" not in item.model_dump()
    assert Item.model_validate(english | {"language": "en-GB"}).model_dump() == item.model_dump()
    write_items(tmp_path / "items.jsonl", [item])
    line = (tmp_path / "items.jsonl").read_text(encoding="utf-8")
    assert '"language"' not in line and load_items(tmp_path / "items.jsonl") == [item]
    assert items_digest([item]) != items_digest([Item.model_validate(JA_ITEM)])
    (tmp_path / "bad.jsonl").write_text(json.dumps(english | {"language": "tlh"}) + "\n", encoding="utf-8")
    with pytest.raises(ItemsError, match=r"bad.jsonl:1: language: no rules for 'tlh'; supported: en, de"):
        load_items(tmp_path / "bad.jsonl")
