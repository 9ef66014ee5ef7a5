"""Hidden belief collapse: the multi-agent study of private versus public belief under a
persistent false claim ("Believed but Not Said: Measuring Hidden Belief Collapse in
Multi-Agent LLM Discussions", §2-§4).

Modules: :mod:`.items` (the item record and its files), :mod:`.sources` and
:mod:`.simpleqa` (importers of the public datasets), :mod:`.writer` (the ``item_writer``
component), :mod:`.screen`, :mod:`.chat` (agents, schedule, memory), :mod:`.judges`,
:mod:`.conversation` (one conversation) and :mod:`.run` (conversations in flight
together, records, resume), :mod:`.metrics`, :mod:`.report`, :mod:`.reask`,
:mod:`.agreement` and :mod:`.matching` (alias matching). A scripted study for tests and
the benchmark is :mod:`ioa_synth.testing.belief_scripted`.
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates

register_templates("belief", Path(__file__).resolve().parent / "templates",  # its prompts: belief/<file>.jinja2
                   renders={"attacker_persona.jinja2": "agent", "benign_persona.jinja2": "agent",
                            "utterance.jinja2": "agent", "probe.jinja2": "agent", "belief_judge.jinja2": "belief_judge",
                            "stance_judge.jinja2": "stance_judge", "item_writer.jinja2": "item_writer",
                            "screen.jinja2": "screener"})
from ioa_synth.belief.run_settings import BeliefSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

BELIEF_COMMANDS = ("belief run", "belief reask", "belief agreement", "belief screen", "belief items import")
#: The study's results folder (``belief run --out``, manifest ``run.json``), also the catalog
#: folders of the commands that write or screen items.
register_folder_kind("belief", "an 'ioa-synth belief run' results folder",
                     commands=BELIEF_COMMANDS, settings=BeliefSettings, layout=FolderLayout(commands=BELIEF_COMMANDS),
                     hint="read it with 'ioa-synth belief report'")
