"""Where a live-meeting session folder stands (``ioa-synth status --out SESSION``): probed
or not, and how many participants have answered and labelled (:func:`.forms.phase`)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.meetings.forms import phase
from ioa_synth.meetings.session import Session
from ioa_synth.runs.folder_status import Group, Progress


def meeting_progress(folder: Path) -> Progress:
    """Groups ``answers`` and ``labels``: the forms filled of one per participant each (paper
    App. D.5: every participant answers the questions, then labels the divergent ones), so
    ``all`` counts forms; from import on, since the participants are known then. A note names
    the participants, the phase and the next step."""
    session = Session(folder)
    everyone = len(session.ids)
    probed = session.path("sets.json").is_file()
    groups = [Group(name="answers", done=len(session.answers()) if probed else 0, total=everyone),
              Group(name="labels", done=len(session.labels()) if probed else 0, total=everyone)]
    now = phase(session) if probed else "not probed"
    nxt = {"not probed": f"next: ioa-synth meeting probe {folder}", "done": f"next: ioa-synth meeting report {folder}"}
    return Progress(unit="form", groups=groups,
                    notes=[f"{everyone} participant(s): {', '.join(f'{p} = {session.pseudonym(p)}' for p in session.ids)}",
                           f"phase: {now}" + (f"; {nxt[now]}" if now in nxt else "")])
