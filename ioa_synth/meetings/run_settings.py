"""The settings of a live-meeting session folder's manifest (``run.json`` -> ``settings``),
written by ``meeting import`` (paper §6.2). No argument of the import is stored: a
transcript's file name may name people."""

from __future__ import annotations

from ioa_synth.runs.kind_registry import Settings


class MeetingSettings(Settings):
    """``format``: the transcript format read (``vtt``, ``srt``, ``txt``, ...; ``None``: a
    session migrated from a folder without a manifest)."""

    format: str | None = None
