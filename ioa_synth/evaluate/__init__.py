"""``ioa-synth evaluate``: the IoA-Suite evaluation protocol (paper §4.1-4.2,
App. C). Inputs (``inputs``), the probers and what they see (:mod:`ioa_synth.probing`, one
per ``--mode``; questions of an earlier run, ``stored_questions``), the simulator's and the
filter's information access (``access``), solver-like steps (``simulator``, ``validity``)
chained per case (``case``), their reply shapes (``replies``), pure scoring (``scoring``),
per-case records (``records``), the resumable run (``run``) and its terminal output
(``report``)."""

from pathlib import Path

import ioa_synth.probing  # noqa: F401 - registers the probers' templates, the rest of evaluate/<file>.jinja2
from ioa_synth.core.templates import register_templates

register_templates("evaluate", Path(__file__).resolve().parent / "templates",  # its prompts: evaluate/<file>.jinja2
                   renders={"simulator.jinja2": "simulator", "validity_filter.jinja2": "validity_filter",
                            "validity_filter_items.jinja2": "validity_filter"},
                   shared=True)
register_templates("evaluate_multi", Path(__file__).resolve().parent / "templates_multi",  # meetings of 3-6 people
                   renders={"simulator.jinja2": "simulator (3-6 participants)",
                            "validity_filter.jinja2": "validity_filter (3-6 participants)",
                            "validity_filter_items.jinja2": "validity_filter (3-6 participants)"})
from ioa_synth.evaluate.run_settings import EvaluateSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

register_folder_kind("evaluate", "an 'ioa-synth evaluate' results folder", commands=("evaluate",),
                     settings=EvaluateSettings, layout=FolderLayout(commands=("evaluate",)),
                     hint="read it with 'ioa-synth report' or 'ioa-synth compare'")
