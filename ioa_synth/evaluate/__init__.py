"""``ioa-synth evaluate``: the IoA-Suite evaluation protocol (paper §4.1-4.2,
App. C). Inputs (``inputs``), information access (``access``), solver-like steps
(``probers``, one per ``--mode``; ``simulator``; ``validity``) chained per case (``case``),
reply shapes (``replies``), the normaliser behind the ambiguity mode's MA overlap
(``text``), WordNet for the lexical baseline (``wordnet``), pure scoring (``scoring``), per-case records with every call (``records``),
the resumable run (``run``) and its terminal output (``report``)."""

from pathlib import Path

from ioa_synth.core.templates import register_templates

register_templates("evaluate", Path(__file__).resolve().parent / "templates",  # its prompts: evaluate/<file>.jinja2
                   renders={"_macros.jinja2": "(imported by the others)",
                            "prober_mcq.jinja2": "prober (also collab and meeting detectors)",
                            "prober_direct.jinja2": "prober", "prober_ambiguity_select.jinja2": "prober",
                            "prober_ambiguity_mcq.jinja2": "prober", "simulator.jinja2": "simulator",
                            "validity_filter.jinja2": "validity_filter", "validity_filter_items.jinja2": "validity_filter"})
from ioa_synth.evaluate.run_settings import EvaluateSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

register_folder_kind("evaluate", "an 'ioa-synth evaluate' results folder", commands=("evaluate",),
                     settings=EvaluateSettings, layout=FolderLayout(commands=("evaluate",)),
                     hint="read it with 'ioa-synth report' or 'ioa-synth compare'")
