"""Transcript import: each format's sample, merging, pseudonymisation, bad input."""

from __future__ import annotations

import json
import re

import pytest

from ioa_synth.meetings.session import pseudonymise
from ioa_synth.meetings.transcripts import Cue, read_transcript
from ioa_synth.text.normalise import fold_accents

from .conftest import REAL_NAMES, SAMPLES, write_detectors

STANDUP = ["Morning. Shall we go through the release checklist?",
           "Yes. The staging deploy went out last night. Smoke tests are green.",
           "Great, Priya. Then we freeze on Thursday as planned."]


@pytest.mark.parametrize("name, fmt", [("teams.vtt", "vtt"), ("zoom.vtt", "vtt"), ("standup.srt", "srt"),
                                       ("standup.txt", "text")])
def test_each_format_gives_merged_named_turns(name, fmt):
    found, turns = read_transcript(SAMPLES / name)
    assert found == fmt
    assert [t.speaker for t in turns] == ["Jonas Weber", "Priya Nair", "Jonas Weber"]
    assert [t.text for t in turns] == STANDUP


def test_whisperx_segments_use_the_diarised_speaker():
    found, turns = read_transcript(SAMPLES / "whisperx.json")
    assert found == "whisper"
    assert [t.speaker for t in turns] == ["SPEAKER_00", "SPEAKER_01", "SPEAKER_00"]
    assert turns[1].text == STANDUP[1]


def test_explicit_format_and_sample_meeting():
    found, turns = read_transcript(SAMPLES / "sample.vtt", "vtt")
    assert found == "vtt" and len({t.speaker for t in turns}) == 3
    assert len(turns) == 13  # 15 cues, two pairs of consecutive cues by one speaker


def test_pseudonyms_replace_full_names_and_parts_in_text():
    turns = [Cue("Maria Lopez", "Tom, can you ask maria lopez? Tom's plan is fine."),
             Cue("Tom Becker", "Sure, Maria. Ms Lopez agreed."),
             Cue("Tom Jones", "Which Tom?")]
    participants, names, out, _ = pseudonymise(turns)
    assert names == {"Maria Lopez": "P1", "Tom Becker": "P2", "Tom Jones": "P3"}
    text = " ".join(t["text"] for t in out)
    for real in ("Maria", "Lopez", "Becker", "Jones", "Tom"):
        assert real not in text and real.lower() not in text
    avery, blake = participants[0].pseudonym, participants[1].pseudonym
    assert out[1]["text"] == f"Sure, {avery}. Ms {avery} agreed."
    assert "[name]" in out[0]["text"]  # 'Tom' is shared by two speakers
    assert [t["speaker"] for t in out] == ["P1", "P2", "P3"] and blake


def test_import_writes_only_pseudonymised_text_outside_private(tmp_path, cli):
    out = tmp_path / "s"
    res = cli("meeting", "import", SAMPLES / "sample.vtt", "--out", out)
    assert res.exit_code == 0, res.output
    session = (out / "session.json").read_text()
    assert not any(n in session for n in REAL_NAMES)
    assert json.loads((out / "private" / "names.json").read_text()) == {"Maria Lopez": "P1", "Tom Becker": "P2",
                                                                          "Aisha Khan": "P3"}
    assert len(json.loads((out / "private" / "links.json").read_text())) == 3


@pytest.mark.parametrize("content, suffix, needle", [
    ("Maria: hello\nMaria: still me\n", ".txt", "1 speaker(s)"),
    ("", ".vtt", "empty"),
    ("\x00\x01 binary-ish stuff without speakers", ".bin", "unknown transcript format"),
    ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ann>Hi</v>\n", ".vtt", "1 speaker(s)"),
])
def test_bad_transcripts_one_error_line_exit_2_nothing_written(tmp_path, cli, content, suffix, needle):
    src = tmp_path / f"in{suffix}"
    src.write_text(content, encoding="utf-8")
    out = tmp_path / "session"
    res = cli("meeting", "import", src, "--out", out)
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert not out.exists()


def test_a_folder_of_transcripts_is_refused_in_one_line(tmp_path, cli):
    """Given the folder of transcripts (a natural first try), import says to give one file,
    not "cannot read (Is a directory)"; nothing is written."""
    res = cli("meeting", "import", SAMPLES, "--out", tmp_path / "s")
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "is a folder; give one transcript file" in lines[0], res.stderr
    assert not (tmp_path / "s").exists()


def test_unknown_format_option_and_seven_speakers(tmp_path, cli):
    res = cli("meeting", "import", SAMPLES / "standup.txt", "--out", tmp_path / "x", "--format", "docx")
    assert res.exit_code == 2 and res.stderr.startswith("error: --format must be one of")
    many = tmp_path / "many.txt"
    many.write_text("".join(f"Person{i}: line {i}\n" for i in range(7)), encoding="utf-8")
    res = cli("meeting", "import", many, "--out", tmp_path / "y")
    assert res.exit_code == 2 and "7 speaker(s)" in res.stderr and not (tmp_path / "y").exists()


#: Names typed the way people type them: lower and upper case, without accents, one part of a
#: hyphenated surname, possessives, a plural, pieces joined without the hyphen.
TYPED = """Desmond Okonkwo: ok so desmond, you start. INGRID will follow, then Jose.
Ingrid Vasquez-Lindqvist: Fine. In case okonkwo forgot: Lindqvist is fine, so is vasquez lindqvist.
José Muñoz: MUÑOZ here; Munoz's budget and Desmonds draft, okonkwo’s notes, the Okonkwos.
Desmond Okonkwo: Thanks ingrid-vasquez-lindqvist and JOSÉ MUNOZ. Des will send the notes.
Ingrid Vasquez-Lindqvist: Des, send them to VasquezLindqvist at work and to josé too.
"""
TYPED_PARTS = ("desmond", "okonkwo", "ingrid", "vasquez", "lindqvist", "jose", "munoz")


def folded_words(text: str) -> str:
    return fold_accents(text).casefold()


def leaked(text: str, parts: tuple[str, ...]) -> list[str]:
    """The parts that start a word of ``text`` in any case or accent form."""
    folded = folded_words(text)
    return [p for p in parts if re.search(rf"(?<![^\W\d_]){p}", folded)]


def test_names_in_any_case_accent_or_part_reach_no_request_and_no_session_file(tmp_path, cli, meeting_server):
    src = tmp_path / "okonkwo-munoz-sync.txt"
    src.write_text(TYPED, encoding="utf-8")
    out = tmp_path / "s"
    res = cli("meeting", "import", src, "--out", out, "--alias", "desmond okonkwo=Des")
    assert res.exit_code == 0, res.output
    res = cli("meeting", "probe", out, *write_detectors(tmp_path / "detectors"), "--seed", 1)
    assert res.exit_code == 0, res.output
    bodies = [json.dumps(r["body"], ensure_ascii=False) for r in meeting_server.requests]
    assert len(bodies) == 2 and all("Tom" not in b for b in bodies)
    for body in bodies:
        assert leaked(body, TYPED_PARTS) == [], body
        assert not re.search(r"\bDes\b", body)
    for path in out.rglob("*"):
        if path.is_file() and "private" not in path.parts and path.suffix == ".json":
            assert leaked(path.read_text(encoding="utf-8"), TYPED_PARTS) == [], path
    session = json.loads((out / "session.json").read_text(encoding="utf-8"))
    texts = [t["text"] for t in session["turns"]]
    avery, blake, casey = (p["pseudonym"] for p in session["participants"])
    assert texts[0] == f"ok so {avery}, you start. {blake} will follow, then {casey}."
    assert texts[2] == f"{casey} here; {casey}'s budget and {avery}s draft, {avery}’s notes, the {avery}s."
    assert texts[3] == f"Thanks {blake} and {casey}. {avery} will send the notes."
    assert json.loads((out / "private" / "aliases.json").read_text()) == [{"name": "Desmond Okonkwo", "alias": "Des"}]


def test_titles_initials_and_lowercase_particles_stay(tmp_path):
    turns = [Cue("Dr. Ludwig van Beethoven", "The van is here, Dr Ludwig. Ask Beethoven."),
             Cue("Ahmed al-Farsi", "An al dente plan, Mr. Van Beethoven and mr al-farsi agree.")]
    participants, _, out, _ = pseudonymise(turns)
    avery, blake = (p.pseudonym for p in participants)
    assert out[0]["text"] == f"The van is here, Dr {avery}. Ask {avery}."
    assert out[1]["text"] == f"An al dente plan, Mr. Van {avery} and mr {blake} agree."


@pytest.mark.parametrize("spec, needle", [("Desmond", "expected \"Full Name=Nick\""),
                                          ("Nobody Here=Nob", "no speaker of the transcript has that name"),
                                          ("=Des", "expected")])
def test_bad_alias_one_error_line_nothing_written(tmp_path, cli, spec, needle):
    src = tmp_path / "t.txt"
    src.write_text(TYPED, encoding="utf-8")
    out = tmp_path / "s"
    res = cli("meeting", "import", src, "--out", out, "--alias", spec)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: --alias") and needle in res.stderr and len(res.stderr.splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())


# Non-English transcripts. Translations: ja "Good morning. Sato-san, shall we check the release?" /
# "Yes, Tanaka-san. Staging went out last night." / "Then we freeze on Thursday. Is that fine for
# you too, Hanako-san?"; zh "Yes, Mr Wang." / "OK, Hanako."; ar "Good morning, Sara." / "Hello
# Mohammed, and does Mohammed (lit. 'and to Mohammed') have another opinion?"; he "Good morning,
# Ruti." / "Hello Dani, and does Dani (lit. 'and to Dani') have another question?".
JA_VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v 田中 太郎>おはようございます。佐藤さん、リリースの確認をしましょうか。</v>

00:00:04.000 --> 00:00:08.000
<v 佐藤 花子>はい、田中さん。ステージングは昨夜出ました。</v>

00:00:08.000 --> 00:00:11.000
<v 田中 太郎>では木曜日に凍結ですね。花子さんもそれでいいですか。</v>
"""
ZH_TXT = "佐藤花子：はい、王さん。\n王伟：好的，花子。\n"
AR_TXT = "\u200fمحمد علي: صباح الخير يا سارة.\n\u200fسارة حسن: أهلا محمد، ولمحمد رأي آخر؟\n"
HE_TXT = "דני כהן: בוקר טוב, רותי.\nרותי לוי: שלום דני, ולדני יש עוד שאלה?\n"


@pytest.mark.parametrize("name, content, aliases, expected", [
    # Japanese: names inside unspaced text, followed by さん, are found without word edges.
    ("ja.vtt", JA_VTT, [], ["おはようございます。Blakeさん、リリースの確認をしましょうか。",
                            "はい、Averyさん。ステージングは昨夜出ました。",
                            "では木曜日に凍結ですね。Blakeさんもそれでいいですか。"]),
    # Chinese/Japanese with the full-width colon; "佐藤花子" written unspaced is found by its part
    # "花子"; "王" (one character) only as an alias.
    ("zh.txt", ZH_TXT, [("王伟", "王")], ["はい、Blakeさん。", "好的，Avery。"]),
    # Arabic with right-to-left marks before each line; the prefix و+ل stays on the pseudonym.
    ("ar.txt", AR_TXT, [], ["صباح الخير يا Blake.", "أهلا Avery، ولAvery رأي آخر؟"]),
    # Hebrew: the prefixes ו+ל stay on the pseudonym.
    ("he.txt", HE_TXT, [], ["בוקר טוב, Blake.", "שלום Avery, ולAvery יש עוד שאלה?"]),
])
def test_non_english_transcripts_keep_no_real_name(tmp_path, cli, name, content, aliases, expected):
    src = tmp_path / name
    src.write_text(content, encoding="utf-8")
    out = tmp_path / "session"
    res = cli("meeting", "import", src, "--out", out,
              *[a for real, nick in aliases for a in ("--alias", f"{real}={nick}")])
    assert res.exit_code == 0, res.output
    session = json.loads((out / "session.json").read_text(encoding="utf-8"))
    assert [t["text"] for t in session["turns"]] == expected
    names = json.loads((out / "private" / "names.json").read_text(encoding="utf-8"))
    assert len(names) == 2 and "\u200f" not in "".join(names)
    raw = (out / "session.json").read_text(encoding="utf-8")
    for real in names:
        for part in real.split():
            assert part not in raw


def test_an_unspaced_one_character_part_is_not_replaced_without_an_alias():
    participants, _, out, _ = pseudonymise([Cue("王伟", "你好，王老师。"), Cue("李娜", "王伟，好的。")])
    assert out[0]["text"] == "你好，王老师。"  # one character: an everyday word too (docs)
    assert out[1]["text"] == f"{participants[0].pseudonym}，好的。"
