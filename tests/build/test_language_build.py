"""``build --language``: a German, Japanese, Spanish, French and Chinese build against a
scripted server (the cases of tests/fixtures/languages, English translations in its
PROVENANCE.md), the language gate through the loop, the near-duplicate shingles and the
lexical baselines' overlap in each language, with the values worked out by hand; English
builds stay as they were."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ioa_helpers import q

from ioa_synth.build.dedup import NearDuplicateIndex, shingles
from ioa_synth.probing.text import content_tokens, token_overlap
from ioa_synth.testing.scripted_languages import LanguageResponder as ScriptedLanguage
from ioa_synth.testing.scripted_server import request_kind
from ioa_synth.text.normalise import jaccard

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def case(tag: str) -> dict:
    return json.loads((CASES / f"{tag}_case.json").read_text(encoding="utf-8"))


def LanguageResponder(tag: str, english_turn: bool = False) -> ScriptedLanguage:
    """The scripted server's replies with the written case of ``tag`` as the generator's output."""
    return ScriptedLanguage(case(tag), english_turn)


def build(cli, seeds, out, *extra):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", *extra)


def prompts_of(server, kind: str) -> list[str]:
    return ["\n".join(m["content"] for m in r["body"]["messages"]) for r in server.requests
            if request_kind(r["body"]) == kind]


@pytest.mark.parametrize("tag, name", [("de", "German"), ("ja", "Japanese"), ("es", "Spanish"), ("fr", "French"),
                                       ("zh", "Chinese")])
def test_a_build_in_another_language_accepts_its_case_and_says_its_language(cli, endpoint, seeds_file, tmp_path,
                                                                            tag, name):
    pytest.importorskip("lingua")
    server = endpoint(responder=LanguageResponder(tag))
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--language", tag, "--type-mix", "none")
    assert res.exit_code == 0, res.output
    [(status, path)] = q(out, "SELECT status, path FROM cases")
    assert status == "accepted"
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    assert list(record) == ["case_id", "profiles", "dialogue", "seed", "quality", "language"]
    assert record["language"] == tag
    assert record["dialogue"]["turns"][0]["utterance"] == case(tag)["stage2"]["turns"][0]["utterance"]
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["language"] == tag and manifest["args"]["language"] == tag
    from ioa_synth.text.languages import language

    for kind in ("stage1_generator", "stage2_generator"):
        [prompt] = prompts_of(server, kind)
        assert f"Write every text value in {name}" in prompt and language(tag).conventions in prompt
    for kind in ("stage1_judge", "stage2_judge"):
        [prompt] = prompts_of(server, kind)
        assert f"The case you score is written in {name}" in prompt
    [(described,)] = q(out, "SELECT fingerprint_json FROM runs WHERE command = 'build'")
    assert json.loads(described)["components"]["generator"]["language"] == tag  # its setup says the language


def test_an_english_turn_in_a_german_build_is_rejected_and_the_case_discarded(cli, endpoint, seeds_file, tmp_path):
    pytest.importorskip("lingua")
    endpoint(responder=LanguageResponder("de", english_turn=True))
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--language", "de-DE", "--type-mix", "none")
    assert res.exit_code == 0, res.output
    [(status, attempts, reason)] = q(out, "SELECT status, stage2_attempts, discard_reason FROM cases")
    assert (status, attempts) == ("discarded", 2)
    assert reason.count("text not written in German in turn 5.utterance (English)") == 2
    assert q(out, "SELECT count(*) FROM llm_calls WHERE stage = 2 AND role = 'judge'") == [(0,)]
    shown = cli("show", "--out", out, "--json")  # re-checks the stored reply in the build's language
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["stage2"]["gate_failures"] == [
        "text not written in German in turn 5.utterance (English); write every field in German"]


def test_an_english_build_sends_the_prompts_and_writes_the_records_of_before(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    [(path,)] = q(out, "SELECT path FROM cases")
    assert "language" not in json.loads(Path(path).read_text(encoding="utf-8"))
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "language" not in manifest["settings"] and "language" not in manifest["args"]
    assert not any("Language of the meeting" in p for kind in ("stage1_generator", "stage2_judge")
                   for p in prompts_of(server, kind))


def test_the_language_is_part_of_the_setup_and_english_describes_itself_as_before():
    from ioa_synth.build.fingerprint import build_setup_description
    from ioa_synth.llm.config import ComponentConfig
    from ioa_synth.llm.endpoints import Endpoint
    from ioa_synth.runs.fingerprint import fingerprint

    eps = {c: Endpoint.from_config(c, ComponentConfig(), "http://host:9000/v1", "m", None, False)
           for c in ("generator", "judge")}
    en = build_setup_description(eps)
    assert build_setup_description(eps, language="en") == en
    de = build_setup_description(eps, language="de")
    assert fingerprint(de) != fingerprint(en)
    assert de["components"]["generator"]["language"] == "de"
    assert "build/language_note.jinja2" in de["components"]["judge"]["templates"]
    assert de["components"]["generator"]["gates"]["number_words"][0] == "zwei"
    assert "language" not in en["components"]["generator"]


@pytest.mark.parametrize("argv, message", [
    (["--language", "xx"], "error: --language 'xx': no rules for this language; supported: en, de, es, fr, zh, ja"),
    (["--language", "de DE"], "error: --language 'de DE' is not a BCP-47 language tag"),
    (["--language", ""], "error: --language is empty"),  # an unset variable, --language "$L": not English
])
def test_an_unknown_language_is_one_error_line_and_nothing_written(cli, seeds_file, tmp_path, argv, message):
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, *argv)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and res.stderr.startswith(message)
    assert not out.exists()


def test_a_missing_detector_names_the_extra(cli, seeds_file, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "lingua", None)  # importlib finds no lingua
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--language", "ja")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "install the 'languages' extra" in res.stderr
    assert not out.exists()
    from ioa_synth.text.detect import require_detector

    require_detector("en")  # English needs no detector


# -- near-duplicate shingles -------------------------------------------------------------
def test_german_shingles_are_word_trigrams_of_stems_by_hand():
    # die, testdat, aus, dem, herb / ..., oktob: two of four distinct trigrams shared
    a, b = shingles("Die Testdaten aus dem Herbst", "de"), shingles("Die Testdaten aus dem Oktober", "de")
    assert a == {"die testdat aus", "testdat aus dem", "aus dem herb"}
    assert jaccard(a, b) == 2 / 4
    assert shingles("Die Testdaten aus dem Herbst") == {"die testdaten aus", "testdaten aus dem", "aus dem herbst"}


def test_japanese_shingles_are_runs_of_three_bigrams_by_hand():
    a, b = shingles("秋のテストデータ", "ja"), shingles("春のテストデータ", "ja")
    # 秋 の テス スト トデ デー ータ: five trigrams of tokens; 春 changes only the first
    assert a == {"秋 の テス", "の テス スト", "テス スト トデ", "スト トデ デー", "トデ デー ータ"}
    assert jaccard(a, b) == 4 / 6
    assert shingles("秋のテストデータ") == {"秋のテストデータ"}  # English rules: one \w+ word


@pytest.mark.parametrize("tag, names", [("de", ("Lena Hoffmann", "Anna Schulz")), ("ja", ("佐藤 美咲", "鈴木 花子")),
                                        ("es", ("Lucía Martín", "Ana Gómez")), ("fr", ("Claire Dubois", "Julie Bernard")),
                                        ("zh", ("王丽", "李娜"))])
def test_a_renamed_copy_is_a_near_duplicate_in_its_language(tag, names):
    data = case(tag)
    index = NearDuplicateIndex(0.7, language=tag)
    assert index.add("test/a", "test", data["stage1"], data["stage2"]["turns"]) is None
    copy_ = json.loads(json.dumps(data, ensure_ascii=False).replace(names[0], names[1]))
    pair = index.add("test/b", "test", copy_["stage1"], copy_["stage2"]["turns"])
    assert pair is not None and pair.similarity == 1.0


# -- lexical baselines (Table 11's expression overlap) -----------------------------------
def test_expression_overlap_in_german_and_japanese_by_hand():
    # German function words dropped: {herbst} against {testdaten, herbst}: 1 / min(1, 2)
    assert token_overlap("im Herbst", "die Testdaten aus dem Herbst", "de") == 1.0
    # English rules keep im, die, aus, dem: {im, herbst} against five tokens: 1 / 2
    assert token_overlap("im Herbst", "die Testdaten aus dem Herbst") == 0.5
    # テスト用 | の | データ: テス, スト, ト用, デー, ータ (の dropped); four shared with 秋のテストデータ's six
    assert content_tokens("テスト用のデータ", "ja") == {"テス", "スト", "ト用", "デー", "ータ"}
    assert token_overlap("テスト用のデータ", "秋のテストデータ", "ja") == 4 / 5
    assert token_overlap("テスト用のデータ", "秋のテストデータ") == 0.0  # English rules: two whole \w+ words


def test_a_directory_holds_one_language(cli, endpoint, seeds_file, tmp_path):
    pytest.importorskip("lingua")
    endpoint(responder=LanguageResponder("de"))
    out, seeds = tmp_path / "out", seeds_file(1)
    assert build(cli, seeds, out, "--language", "de", "--type-mix", "none").exit_code == 0
    res = build(cli, seeds, out, "--language", "ja", "--type-mix", "none")
    assert res.exit_code == 2, res.output  # a changed setup, named
    assert "judge.language: 'de' -> 'ja'" in res.stderr and "use a new --out directory" in res.stderr
    assert q(out, "SELECT count(*) FROM runs WHERE command = 'build'") == [(1,)]
