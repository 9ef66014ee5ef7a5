"""Live meetings (paper §6.2, App. D.5): probe a real meeting's pseudonymised transcript with
several detectors, collect every participant's blinded answers, validity labels and survey
on web pages, and compare the detectors per session and across sessions.

Modules: :mod:`.transcripts` (reading transcript formats), :mod:`.session` (the session folder,
pseudonymisation), :mod:`.probe` (question sets, blinding), :mod:`.forms` (the participants'
forms and their rules), :mod:`.web` (the answer pages), :mod:`.exchange` (forms as files),
:mod:`.report`, :mod:`.pooled` (merge judge) and :mod:`.render` (tables, Markdown).
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates

register_templates("meetings", Path(__file__).resolve().parent / "templates",  # its prompts: meetings/<file>.jinja2
                   renders={"merge_judge.jinja2": "merge_judge"})
from ioa_synth.meetings.run_settings import MeetingSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind


def _is_session(path: Path) -> bool:
    """A session folder written by ``ioa-synth meeting import``: ``session.json`` and ``private/``."""
    return (path / "session.json").is_file() and (path / "private").is_dir()


#: A session folder: its manifest is written by ``meeting import``; one imported before
#: sessions carried a manifest is told by ``session.json`` and ``private/`` (and migrated).
register_folder_kind("meeting", "a live-meeting session folder", commands=("meeting import",),
                     settings=MeetingSettings, layout=FolderLayout(marker=_is_session),
                     hint="read it with 'ioa-synth meeting report'")
