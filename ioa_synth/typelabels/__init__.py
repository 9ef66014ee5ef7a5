"""Type labels (paper App. B.5 taxonomy; the mixes of Tables 10, 12 and 20): a judge, the
``type_judge`` component, reads the kind of each misalignment point of a build folder or a
folder of IoA-Suite records, and of each validated disagreement of live-meeting sessions.

Modules: :mod:`.items` (what is labelled, read from each kind of input), :mod:`.labels`
(the one writer and reader of a labels folder's ``labels.jsonl``, and the lookup the
reports use), :mod:`.run` (the judge's calls through the runs layer), :mod:`.tables`
(agreement with planted types, the judged mix, meeting disagreements per type).
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

register_templates("typelabels", Path(__file__).resolve().parent / "templates",
                   renders={"type_judge.jinja2": "type_judge",
                            "type_judge_multi.jinja2": "type_judge (cases of more than two people)"})
register_folder_kind("label-types", "a 'label-types' results folder", commands=("label-types",),
                     layout=FolderLayout(commands=("label-types",)),
                     hint="give it to 'ioa-synth report --by type --types' or 'ioa-synth meeting report --types'")
