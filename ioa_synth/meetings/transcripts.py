"""Reading a meeting transcript into speaker turns (paper §6.2, App. D.5: real meetings,
transcript only).

Formats: WebVTT (``webvtt-py``) with Teams voice tags (``<v Name>text</v>``) or Zoom cues
(``Name: text``); SRT (``srt``) with ``Name: text`` cues; Whisper/WhisperX JSON (``segments``
with a ``speaker``); plain text lines ``Name: text``. Consecutive cues of one speaker merge
into one turn; a cue without a speaker continues the previous speaker's turn.

Any language and script: a name may be written in any letters (``田中 太郎: ...``,
``محمد علي: ...``), the colon after it may be the full-width ``：`` of Chinese and Japanese
text, and the invisible direction marks of right-to-left text (``U+200E``, ``U+200F``,
``U+061C``, the embeddings and isolates ``U+202A``-``U+202E``, ``U+2066``-``U+2069``) are
removed on reading: they only steer display, and would hide a line's speaker from the match.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.jsonl import json_problem

#: ``--format`` values (``auto`` guesses from the suffix, then the content).
FORMATS: tuple[str, ...] = ("auto", "vtt", "srt", "whisper", "text")

#: Participants a live-meeting session accepts (paper §6.2: two or more per meeting).
MIN_PARTICIPANTS, MAX_PARTICIPANTS = 2, 6

_SUFFIXES = {".vtt": "vtt", ".webvtt": "vtt", ".srt": "srt", ".json": "whisper", ".txt": "text"}
# "Name: text" -- a name of one to five words (letters, digits, . ' - _ and the middle dots of
# transcribed foreign names), then a colon, ASCII or full-width.
_NAMED = re.compile(r"^\s*([^\W\d][\w.'’\-·・]*(?:[ \t]+[\w.'’\-·・]+){0,4})[ \t]*[:：][ \t]*(.*)$", re.S)
#: Bidirectional control characters: display marks without content (module docstring).
BIDI_CONTROLS = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


class TranscriptError(ValueError):
    """A transcript that cannot be read (one line naming the file and the problem)."""


@dataclass
class Cue:
    """One cue or line: its ``speaker`` (``None`` when it names none) and ``text``."""

    speaker: str | None
    text: str


def split_named(text: str) -> Cue:
    """``Name: text`` -> ``Cue(Name, text)``; any other text -> ``Cue(None, text)``."""
    m = _NAMED.match(text)
    if m and m.group(2).strip():
        return Cue(m.group(1).strip(), m.group(2).strip())
    return Cue(None, text.strip())


def _vtt(raw: str, where: str) -> list[Cue]:
    import webvtt
    from webvtt.errors import MalformedFileError

    try:
        captions = webvtt.from_buffer(io.StringIO(raw))
    except MalformedFileError as exc:
        raise TranscriptError(f"{where}: not valid WebVTT ({exc})") from None
    cues = []
    for c in captions:
        text = " ".join(c.text.split())
        cues.append(Cue(c.voice.strip(), text) if c.voice else split_named(text))
    return cues


def _srt(raw: str, where: str) -> list[Cue]:
    import srt

    try:
        subs = list(srt.parse(raw))
    except srt.SRTParseError as exc:
        raise TranscriptError(f"{where}: not valid SRT ({' '.join(str(exc).split())[:200]})") from None
    return [split_named(" ".join(s.content.split())) for s in subs]


def _whisper(raw: str, where: str) -> list[Cue]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TranscriptError(json_problem(where, exc)) from None
    segments = data.get("segments") if isinstance(data, dict) else None
    if not isinstance(segments, list):
        raise TranscriptError(f"{where}: not a Whisper/WhisperX transcript (no \"segments\" list)")
    cues = []
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict) or not isinstance(seg.get("text"), str):
            raise TranscriptError(f"{where}: segments[{i}] has no \"text\"")
        speaker = seg.get("speaker")
        cues.append(Cue(str(speaker).strip() if speaker else None, " ".join(seg["text"].split())))
    return cues


def _text(raw: str, where: str) -> list[Cue]:
    return [split_named(line) for line in raw.splitlines() if line.strip()]


_READERS = {"vtt": _vtt, "srt": _srt, "whisper": _whisper, "text": _text}


def guess_format(path: Path, raw: str) -> str:
    """The format of ``raw`` read from ``path``: by suffix, else by content.

    Raises:
        TranscriptError: neither tells the format.
    """
    head = raw.lstrip("\ufeff \t\r\n")
    if head.startswith("WEBVTT"):
        return "vtt"
    if head.startswith("{"):
        return "whisper"
    if re.match(r"\d+\s*\r?\n\d\d:\d\d:\d\d,\d{3}\s*-->", head):
        return "srt"
    by_suffix = _SUFFIXES.get(path.suffix.lower())
    if by_suffix:
        return by_suffix
    if head and all(split_named(line).speaker for line in head.splitlines()[:3] if line.strip()):
        return "text"
    raise TranscriptError(f"{path}: unknown transcript format (expected WebVTT, SRT, Whisper JSON or "
                          f"'Name: text' lines; give --format)")


#: How each format names a cue's speaker, for the error of a first cue without one.
_SPEAKER_FORMS = {"vtt": "a voice tag <v Name> or 'Name: text'", "srt": "'Name: text'",
                  "whisper": "a \"speaker\" field in the segment (a diarised transcript, e.g. WhisperX)",
                  "text": "'Name: text'"}


def merge_cues(cues: list[Cue], where: str, fmt: str = "vtt") -> list[Cue]:
    """One turn per run of consecutive cues of one speaker; a cue without a speaker joins
    the turn before it (``fmt`` words the error: a Whisper segment, a subtitle cue).

    Raises:
        TranscriptError: no text at all, or the first cue names no speaker.
    """
    turns: list[Cue] = []
    for i, cue in enumerate(cues):
        if not cue.text:
            continue
        if cue.speaker is None or (turns and turns[-1].speaker == cue.speaker):
            if not turns:
                what = "segment" if fmt == "whisper" else "cue" if fmt in ("vtt", "srt") else "line"
                raise TranscriptError(f"{where}: {what} {i + 1} names no speaker (expected "
                                      f"{_SPEAKER_FORMS.get(fmt, _SPEAKER_FORMS['text'])})")
            turns[-1].text = f"{turns[-1].text} {cue.text}"
            continue
        turns.append(Cue(cue.speaker, cue.text))
    if not turns:
        raise TranscriptError(f"{where}: the transcript holds no speech")
    return turns


def read_transcript(path: Path, fmt: str = "auto") -> tuple[str, list[Cue]]:
    """``(format, turns)`` of the transcript file ``path`` (merged, real names still in).

    Raises:
        TranscriptError: unreadable or empty file, unknown format, malformed content,
            fewer than two or more than six speakers.
    """
    where = str(path)
    if path.is_dir():
        raise TranscriptError(f"{where} is a folder; give one transcript file (WebVTT, SRT, Whisper JSON or text): "
                              "each meeting is imported into a session of its own")
    try:
        raw = decode_utf8(path.read_bytes(), where, TranscriptError)
    except OSError as exc:
        raise TranscriptError(f"{where}: cannot read ({exc.strerror or exc})") from None
    raw = BIDI_CONTROLS.sub("", raw)
    if not raw.strip():
        raise TranscriptError(f"{where}: the file is empty")
    fmt = guess_format(path, raw) if fmt == "auto" else fmt
    turns = merge_cues(_READERS[fmt](raw, where), where, fmt)
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    if not MIN_PARTICIPANTS <= len(speakers) <= MAX_PARTICIPANTS:
        raise TranscriptError(f"{where}: {len(speakers)} speaker(s) found; a session needs "
                              f"{MIN_PARTICIPANTS} to {MAX_PARTICIPANTS} participants")
    return fmt, turns
