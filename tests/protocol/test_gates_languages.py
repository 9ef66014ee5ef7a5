"""The content gates of a build in another language (``build --language``): a German, a
Japanese, a Spanish, a French and a Chinese case (tests/fixtures/languages, written for these
tests; English translations in its PROVENANCE.md) pass every gate in their language, and
each language-aware rule gives the values worked out by hand below."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ioa_synth.protocol.gate_languages import gates_for
from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates import profile_reference, stage1_gate_failures, stage2_gate_failures
from ioa_synth.protocol.gates_form import surface_form_problem
from ioa_synth.protocol.gates_text import in_language, load_gates, stems
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output, stage1_problems, stage2_problems

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def case(tag: str) -> tuple[dict, dict]:
    data = json.loads((CASES / f"{tag}_case.json").read_text(encoding="utf-8"))
    return data["stage1"], data["stage2"]


def gates(tag: str, stage1: dict, stage2: dict | None = None) -> list[str]:
    s1 = Stage1Output.model_validate(stage1)
    with in_language(tag):
        if stage2 is None:
            return stage1_gate_failures(s1)
        return stage2_gate_failures(Stage2Output.model_validate(stage2), s1)


@pytest.mark.parametrize("tag", ["de", "ja"])
def test_the_written_case_passes_every_rule_and_gate_in_its_language(tag):
    pytest.importorskip("lingua")
    s1, s2 = case(tag)
    assert stage1_problems(Stage1Output.model_validate(s1)) == []
    assert stage2_problems(Stage2Output.model_validate(s2)) == []
    assert gates(tag, s1) == [] and gates(tag, s1, s2) == []


def test_read_by_english_rules_the_same_cases_fail():
    s1, _ = case("ja")
    assert any("another script" in f for f in stage1_gate_failures(Stage1Output.model_validate(s1)))
    s1, _ = case("de")  # the English word list reads "sobald" as "so" + "bald" run together
    assert any("run together" in f for f in stage1_gate_failures(Stage1Output.model_validate(s1)))


def test_cue_matching_wants_the_surface_forms_stems_by_hand():
    s1, _ = case("de")
    with in_language("de"):
        ref = profile_reference(Stage1Output.model_validate(s1))
    # "die Testdaten aus dem Herbst": die/aus/dem are function words; Snowball german gives
    # testdat, herb; 0.66 of 2 stems rounds up to 2. "der Start im November": start, novemb; 2
    assert [(ma, want, need) for ma, _, want, need in ref.surface_forms] == [
        ("MA1", {"testdat", "herb"}, 2), ("MA2", {"start", "novemb"}, 2)]
    s1, _ = case("ja")
    with in_language("ja"):
        ref = profile_reference(Stage1Output.model_validate(s1))
    # "秋のテストデータ": 秋 | の | テストデータ -> 秋, テス, スト, トデ, デー, ータ (の dropped): 6, need
    # ceil(6 x 0.66) = 4; "十一月のリリース": 十一, 一月, リリ, リー, ース: 5, need ceil(3.3) = 4
    assert [(ma, want, need) for ma, _, want, need in ref.surface_forms] == [
        ("MA1", {"秋", "テス", "スト", "トデ", "デー", "ータ"}, 4), ("MA2", {"十一", "一月", "リリ", "リー", "ース"}, 4)]


def test_a_surface_form_never_said_fails_in_german_and_japanese():
    pytest.importorskip("lingua")
    s1, s2 = case("de")
    s2 = copy.deepcopy(s2)
    s2["turns"][0]["utterance"] = "Für den Vergleich nehmen wir wieder die Daten vom Oktober, dann passt es."
    s2["turns"][1]["utterance"] = "Klar, die Daten lädt meine Pipeline sowieso jede Nacht, das kostet uns nichts."
    assert [f for f in gates("de", s1, s2) if "appears in no utterance" in f] == [
        "MA1: its surface form 'die Testdaten aus dem Herbst' appears in no utterance; a speaker must say it"]
    s1, s2 = case("ja")
    s2 = copy.deepcopy(s2)
    # "テスト用のデータ" shares テス, スト, デー, ータ with the form: 4 of 6, enough; "秋のデータ" shares
    # 秋, デー, ータ: 3, not enough
    s2["turns"][0]["utterance"] = "比較には、前回と同じく秋のデータを使いましょう。そうすれば数字を並べて見られます。"
    s2["turns"][1]["utterance"] = "はい、テスト用のデータならパイプラインが毎晩読み込んでいるので、手間はかかりません。"
    assert not [f for f in gates("ja", s1, s2) if "appears in no utterance" in f]
    s2["turns"][1]["utterance"] = "はい、そのデータならパイプラインが毎晩読み込んでいるので、手間はかかりません。"
    assert [f for f in gates("ja", s1, s2) if "appears in no utterance" in f] == [
        "MA1: its surface form '秋のテストデータ' appears in no utterance; a speaker must say it"]


def test_an_english_turn_inside_a_german_case_is_rejected():
    pytest.importorskip("lingua")
    s1, s2 = case("de")
    s2 = copy.deepcopy(s2)
    s2["turns"][4]["utterance"] = "Can we have the evaluation finished by the end of next week?"
    assert gates("de", s1, s2) == [
        "text not written in German in turn 5.utterance (English); write every field in German"]
    s1 = copy.deepcopy(s1)
    s1["misalignment_points"][1]["why_undetected"] = "the date is the same for both, so nobody asks what starts"
    assert gates("de", s1) == [
        "text not written in German in MA2.why_undetected (English); write every field in German"]


def test_a_chinese_line_inside_a_japanese_case_is_rejected():
    pytest.importorskip("lingua")
    s1, s2 = case("ja")
    s2 = copy.deepcopy(s2)
    s2["turns"][4]["inner_thought"] = "如果十月的数据有结果，我就可以直接给董事会看。"
    assert gates("ja", s1, s2) == [
        "text not written in Japanese in turn 5.inner_thought (Chinese); write every field in Japanese"]


def test_a_leaked_private_reading_fails_in_japanese():
    pytest.importorskip("lingua")
    s1, s2 = case("ja")
    s2 = copy.deepcopy(s2)
    # shares 倉庫, 庫シ, シス, ステ, テム (and more) with M2's reading of MA1: a run of 6+ bigrams
    s2["turns"][1]["utterance"] = "はい、秋のテストデータは倉庫システムから直近四週間分を取り出しています。"
    assert any("MA1.member_b_understanding" in f for f in gates("ja", s1, s2))


@pytest.mark.parametrize("surface, problem", [
    ("Was ist die Testmenge", "is a question"),
    ("die Testdaten sind fertig", "is a statement"),
    ("der Start im", "ends on 'im'"),
    ("die Testdaten aus dem Herbst", None),
])
def test_german_surface_forms_by_the_german_lists(surface, problem):
    with in_language("de"):
        found = surface_form_problem(surface, load_gates())
    assert (found is None) if problem is None else problem in found


def test_japanese_surface_forms_by_length_and_the_full_width_question_mark():
    with in_language("ja"):
        g = load_gates()
        assert surface_form_problem("秋のテストデータ", g) is None
        assert "is a question" in surface_form_problem("どのデータ？", g)
        # 秋, に, 集, めた, テス, スト, トデ, デー, ータ, の, 最新, の, 版: 13 tokens, one more than 12
        assert "has 13 words" in surface_form_problem("秋に集めたテストデータの最新の版", g)
        assert surface_form_problem("秋に集めたテストデータの最新版", g) is None  # ... 最新, 新版: 12


def test_english_thresholds_stay_the_shipped_ones():
    assert gates_for(None) == gates_for("en") == GateThresholds() == load_gates()
    assert gates_for("de").number_words[:2] == ("zwei", "drei") and gates_for("de").max_surface_words == 6
    assert gates_for("ja").max_surface_words == 12 and gates_for("ja").question_words == ()
    with in_language("de"):
        assert load_gates() is gates_for("de")
        assert stems("Die Testdaten") == ["testdat"]
    assert stems("Die Testdaten") == ["die", "testdaten"]  # outside: English rules again


# -- Spanish, French, Chinese: the same story (PROVENANCE.md) ------------------------------
@pytest.mark.parametrize("tag", ["es", "fr", "zh"])
def test_the_spanish_french_and_chinese_cases_pass_every_gate_and_an_english_turn_fails(tag):
    pytest.importorskip("lingua")
    s1, s2 = case(tag)
    assert stage1_problems(Stage1Output.model_validate(s1)) == []
    assert stage2_problems(Stage2Output.model_validate(s2)) == []
    assert gates(tag, s1) == [] and gates(tag, s1, s2) == []
    s2 = copy.deepcopy(s2)
    s2["turns"][4]["utterance"] = "Can we have the evaluation finished by the end of next week?"
    name = {"es": "Spanish", "fr": "French", "zh": "Chinese"}[tag]
    assert gates(tag, s1, s2) == [
        f"text not written in {name} in turn 5.utterance (English); write every field in {name}"]


def test_a_japanese_line_inside_a_chinese_case_is_rejected():
    pytest.importorskip("lingua")
    s1, s2 = case("zh")
    s2 = copy.deepcopy(s2)
    s2["turns"][4]["inner_thought"] = "十月の数字が出たら、すぐに役員会に見せられます。"
    assert gates("zh", s1, s2) == [  # its kana are another script than Chinese, and lingua reads Japanese
        "text switches into another script in turn 5.inner_thought; write every field in Chinese",
        "text not written in Chinese in turn 5.inner_thought (Japanese); write every field in Chinese"]


@pytest.mark.parametrize("tag, wanted", [
    # Snowball spanish drops the residual vowel in RV: datos -> dat, prueba -> prueb, otoño -> otoñ;
    # los, de, del are function words; "amiento" is not in R2 of lanzamiento, so only its -o goes
    ("es", [("MA1", {"dat", "prueb", "otoñ"}, 2), ("MA2", {"lanzamient", "noviembr"}, 2)]),
    # Snowball french: données -> donnée (-s) -> donn (-ée in step 2b's "ée") -> don (undoubled nn);
    # automne, novembre lose their -e; lancement loses -ement in RV; les, de, l', le are function words
    ("fr", [("MA1", {"don", "test", "automn"}, 2), ("MA2", {"lanc", "novembr"}, 2)]),
    # one CJK run each, bigrams; 的 alone is a function character, so pairs with a content
    # character stay: 秋季 季的 的测 测试 试数 数据 (6, need ceil(3.96) = 4); 十一 一月 月的 的上 上线 (5, 4)
    ("zh", [("MA1", {"秋季", "季的", "的测", "测试", "试数", "数据"}, 4), ("MA2", {"十一", "一月", "月的", "的上", "上线"}, 4)]),
])
def test_cue_matching_in_spanish_french_and_chinese(tag, wanted):
    s1, _ = case(tag)
    with in_language(tag):
        ref = profile_reference(Stage1Output.model_validate(s1))
    assert [(ma, want, need) for ma, _, want, need in ref.surface_forms] == wanted
