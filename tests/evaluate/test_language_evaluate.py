"""``evaluate`` on records of ``build --language``: a German, Japanese, Spanish, French and
Chinese case (the dialogues of tests/fixtures/languages, written for these tests; English
translations in its PROVENANCE.md) beside an English one, against the three scripted
servers. Each prompt about a case in another language says the language and its conventions
(the prober writes its questions in it, the simulator answers as a speaker of it, the filter
judges in it); English prompts and setups stay as they were; the lexical baselines'
expression overlap follows the dialogue's language (values worked out by hand below);
``--mode wordnet`` (English WordNet) refuses a case in another language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .eval_helpers import Q, Study, toolkit_case, user_text, write_case
from .test_modes import ModeStudy, evaluate
from ioa_helpers import one_line_error
from ioa_synth.evaluate.inputs import InputError, load_cases
from ioa_synth.text.languages import language

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
#: M1's name in each written case: it marks the requests about that case
NAMES = {"de": "Lena Hoffmann", "ja": "佐藤 美咲", "es": "Lucía Martín", "fr": "Claire Dubois", "zh": "王丽"}
#: A(MA1), A(MA2), C not_diverging: P = 2/2, R = 2/2 on the two-MA cases (2/4 on the English one)
TWO_MAS = [Q("q1", "A", "B", hit="MA1"), Q("q2", "A", "C", hit="MA2"), Q("q3", "A", "A")]


def written_record(tag: str, language_field: str | None = None) -> dict:
    """The written case of ``tag`` as ``build --language`` records it (``language``: its tag)."""
    data = json.loads((CASES / f"{tag}_case.json").read_text(encoding="utf-8"))
    turns = data["stage2"]["turns"]
    return {"case_id": f"test/ml_research/planning_{tag}", "profiles": data["stage1"],
            "dialogue": {"num_turns": len(turns), "turns": turns},
            "seed": {"seed_id": "arxiv:0000.00000", "domain": "ml_research", "task_type": "planning",
                     "title": "t", "abstract": "a"},
            "quality": {}, "language": tag if language_field is None else language_field}


def prompts(server) -> list[str]:
    return [user_text(r["body"]) for r in server.requests]


def test_each_prompt_about_a_case_says_its_language_and_english_ones_stay_as_they_were(cli, trio, tmp_path):
    pytest.importorskip("snowballstemmer")
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", written_record("de", "de-DE"))
    for i, tag in enumerate(("ja", "es", "fr", "zh"), 1):
        write_case(data, f"ml_research/planning_00{i}.json", written_record(tag))
    write_case(data, "ml_research/planning_005.json", toolkit_case())  # English: no language field
    t = trio(Study(TWO_MAS))
    out = tmp_path / "out"
    res = evaluate(cli, data, out)
    assert res.exit_code == 0, res.output
    says = {"prober": "Write every question and every option in {name}",
            "simulator": "think in {name}", "validity_filter": "The questions are in {name}"}
    for comp in says:
        texts = prompts(getattr(t, comp))
        for tag, marker in NAMES.items():
            lang = language(tag)
            mine = [x for x in texts if marker in x]
            assert mine, (comp, tag)
            for text in mine:
                assert says[comp].format(name=lang.name) in text and lang.conventions in text
                assert f"Language of the meeting: {lang.name} ({tag})" in text
        english = [x for x in texts if not any(m in x for m in NAMES.values())]
        assert english and not any("Language of the meeting" in x for x in english)
    for i in range(6):
        record = json.loads((out / f"records/ml_research/planning_00{i}.json").read_text(encoding="utf-8"))
        assert record["status"] == "scored"
    parts = json.loads((out / "run.json").read_text(encoding="utf-8"))["fingerprint_parts"]
    assert list(parts["language_note"]) == ["evaluate_language/language_note.jinja2"]


def test_an_english_only_run_describes_its_setup_as_before(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", toolkit_case())
    trio(Study(TWO_MAS))
    out = tmp_path / "out"
    assert evaluate(cli, data, out).exit_code == 0
    assert "language_note" not in json.loads((out / "run.json").read_text(encoding="utf-8"))["fingerprint_parts"]


# The ambiguity baseline (Table 11): four expressions from the dialogue, one MCQ each; the
# overlap with the MAs' surface forms is the language's (probing.text.token_overlap).
# Japanese, bigrams of script runs, hiragana-only tokens dropped:
#   テストデータ -> テス スト トデ デー ータ; MA1 秋のテストデータ -> 秋 + those five: 5 / min(5, 6) = 1
#   リリース -> リリ リー ース; MA2 十一月のリリース -> 十一 一月 + those three: 3 / min(3, 5) = 1
#   数字, 評価結果 (数字; 評価 価結 結果) share nothing with either form
# (English rules read テストデータ and 秋のテストデータ as two different whole words: 0.)
# German, no stemming, German function words dropped:
#   "nehmen wir wieder die Testdaten" -> nehmen wieder testdaten; MA1 -> testdaten herbst: 1 / 2 = .5
#   (English rules keep wir, die: {nehmen wir wieder die testdaten} and {die testdaten aus dem herbst}
#   share 2 of 5: .4, under the .5 threshold)
#   "den Start im November" -> start november; MA2 -> start november: 1
#   "Monitoring", "am Freitag" -> monitoring; freitag: nothing shared
EXPRESSIONS = {
    "ja": [("テストデータ", 1, {"MA1": 1.0}), ("リリース", 3, {"MA2": 1.0}), ("数字", 1, {}), ("評価結果", 5, {})],
    "de": [("nehmen wir wieder die Testdaten", 1, {"MA1": 0.5}), ("den Start im November", 3, {"MA2": 1.0}),
           ("Monitoring", 4, {}), ("am Freitag", 6, {})],
}

#: The MCQ stems: "What does '...' mean for the plan?" / "What exactly does '...' refer to?"
STEMS = {"de": "Was heißt „{}“ für den Plan?", "ja": "「{}」とは具体的に何を指しますか？"}


@pytest.mark.parametrize("tag", ["de", "ja"])
def test_the_ambiguity_baselines_overlap_is_read_in_the_dialogues_language(cli, trio, tmp_path, tag):
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", written_record(tag))
    picked = [(e, turn) for e, turn, _ in EXPRESSIONS[tag]]
    # one MCQ per expression, each naming its expression: A(MA1), A(MA2), C not_diverging, B
    stem = STEMS[tag]
    questions = [Q(stem.format(picked[0][0]), "A", "B", hit="MA1"), Q(stem.format(picked[1][0]), "A", "C", hit="MA2"),
                 Q(stem.format(picked[2][0]), "A", "A"), Q(stem.format(picked[3][0]), "B", "C")]
    t = trio(ModeStudy(questions, expressions=[picked]))
    out = tmp_path / "out"
    res = evaluate(cli, data, out, "--mode", "ambiguity")
    assert res.exit_code == 0, res.output
    assert all(f"Language of the meeting: {language(tag).name}" in p for p in prompts(t.prober))
    record = json.loads((out / "records/ml_research/planning_000.json").read_text(encoding="utf-8"))
    assert record["status"] == "scored"
    assert [(e["expression"], e["turn"], e["overlaps_ma"]) for e in record["expressions"]] == EXPRESSIONS[tag]


def test_wordnet_mode_refuses_a_case_in_another_language(cli, tmp_path):
    pytest.importorskip("nltk")
    from ioa_synth.probing.wordnet import WordNetMissing, load_wordnet

    try:
        load_wordnet()
    except WordNetMissing:
        pytest.skip("WordNet is not installed")
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", written_record("de"))
    res = evaluate(cli, data, tmp_path / "out", "--mode", "wordnet")
    one_line_error(res, "--mode wordnet ranks words by WordNet, which is English",
                   "ml_research/planning_000: de", "--mode ambiguity or mcq")
    assert not (tmp_path / "out").exists()


def test_a_records_language_is_read_as_its_registry_tag(tmp_path):
    write_case(tmp_path, "a/de.json", written_record("de", "de-AT"))
    write_case(tmp_path, "a/en.json", written_record("de", "en-GB"))  # English, said aloud: as if absent
    write_case(tmp_path, "a/ja.json", written_record("ja", "ja-JP"))
    assert [(c.case_id, c.language) for c in load_cases(tmp_path)] == [("a/de", "de"), ("a/en", None), ("a/ja", "ja")]
    write_case(tmp_path, "a/xx.json", written_record("de", "tlh"))
    with pytest.raises(InputError, match=r"a/xx.json: field language: no rules for 'tlh'; supported: en, de, es, fr, zh, ja"):
        load_cases(tmp_path)


def test_an_empty_language_field_is_refused_not_read_as_english(tmp_path):
    # an unset variable written into a record must not quietly make a case English
    write_case(tmp_path, "a/blank.json", written_record("de", ""))
    with pytest.raises(InputError, match=r"a/blank.json: field language: is empty \(leave the field out for English\)"):
        load_cases(tmp_path)
