"""Multi-agent collaboration with a detector in the loop (paper §6.4, App. D.7-D.8).

- :mod:`.tasks`: BigCodeBench JSONL and hidden-profile scenario files.
- :mod:`.team`, :mod:`.protocol`, :mod:`.replies`: the team's protocol as calls through a caller.
- :mod:`.harness`, :mod:`.check_worker`, :mod:`.scoring`: the official BigCodeBench harness, one
  worker process per check; the hidden-profile vote.
- :mod:`.detectors`: ``--detector NAME=CONFIG`` as endpoints of their own.
- :mod:`.run`: ``collab run`` on the shared run layer (the only module that knows it).
- :mod:`.report`: Tables 6 and 23, paired tests with the task as the unit.
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates
from ioa_synth.collab.run_settings import CollabSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

register_templates("collab", Path(__file__).resolve().parent / "templates",  # its prompts: collab/<file>.jinja2
                   renders={f.name: "discusser" for f in (Path(__file__).resolve().parent / "templates").glob("*.jinja2")})

#: The study's results folder (``collab run --out``, manifest ``run.json``).
register_folder_kind("collab", "an 'ioa-synth collab run' results folder", commands=("collab run",),
                     settings=CollabSettings, layout=FolderLayout(commands=("collab run",)),
                     hint="read it with 'ioa-synth collab report'")
