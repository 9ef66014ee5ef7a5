"""Transcript import: each format's sample, merging, pseudonymisation, bad input."""

from __future__ import annotations

import json

import pytest

from ioa_synth.meetings.session import pseudonymise
from ioa_synth.meetings.transcripts import Cue, read_transcript

from .conftest import REAL_NAMES, SAMPLES

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
    participants, names, out = pseudonymise(turns)
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


def test_unknown_format_option_and_seven_speakers(tmp_path, cli):
    res = cli("meeting", "import", SAMPLES / "standup.txt", "--out", tmp_path / "x", "--format", "docx")
    assert res.exit_code == 2 and res.stderr.startswith("error: --format must be one of")
    many = tmp_path / "many.txt"
    many.write_text("".join(f"Person{i}: line {i}\n" for i in range(7)), encoding="utf-8")
    res = cli("meeting", "import", many, "--out", tmp_path / "y")
    assert res.exit_code == 2 and "7 speaker(s)" in res.stderr and not (tmp_path / "y").exists()
