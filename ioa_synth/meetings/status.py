"""Where a live-meeting session folder stands (``ioa-synth status --out SESSION``): probed
or not, and how many participants have answered and labelled (:func:`.forms.phase`)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.meetings.forms import phase
from ioa_synth.meetings.session import Session
from ioa_synth.runs.folder_status import Group, Progress


def meeting_progress(folder: Path) -> Progress:
    """Groups ``answered`` and ``labelled`` (participants done of all), and a note naming
    the phase and the next step."""
    session = Session(folder)
    everyone = len(session.ids)
    probed = session.path("sets.json").is_file()
    groups = [Group(name="answered", done=len(session.answers()), total=everyone),
              Group(name="labelled", done=len(session.labels()), total=everyone)] if probed else []
    now = phase(session) if probed else "not probed"
    nxt = {"not probed": f"next: ioa-synth meeting probe {folder}", "done": f"next: ioa-synth meeting report {folder}"}
    return Progress(unit="participant", groups=groups,
                    notes=[f"phase: {now}" + (f"; {nxt[now]}" if now in nxt else "")])
