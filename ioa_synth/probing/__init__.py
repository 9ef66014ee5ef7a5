"""Probing: asking a prober model where the members of a meeting hold different meanings
(paper §4.1, §5.1, §6). Shared by ``evaluate`` (the benchmark protocol), ``collab`` (a team's
detectors), ``meetings`` (a live meeting's detectors) and ``train`` (the prober's prompt and
reward), none of which reaches into another for it.

The case a prober reads (``cases``), what it may see (``access``), one prober per ``--mode``
(``probers``), the reply shapes and their checks (``replies``), the log of a case's calls
(``calls``), detector configurations (``detectors``), and the normaliser and WordNet behind
the ambiguity and lexical baselines (``text``, ``wordnet``).

Its templates keep the names ``evaluate/<file>.jinja2``: the ``--prompts`` file paths, ``ioa-synth
prompts list`` and the setup fingerprints of results folders name them so. This package
registers its folder under ``evaluate`` (``shared``, beside :mod:`ioa_synth.evaluate`'s own
simulator and filter templates), so importing it alone makes the prober templates renderable."""

from pathlib import Path

from ioa_synth.core.templates import register_templates

register_templates("evaluate", Path(__file__).resolve().parent / "templates",  # the probers' prompts: evaluate/<file>.jinja2
                   renders={"_macros.jinja2": "(imported by the others)",
                            "prober_mcq.jinja2": "prober (also collab and meeting detectors)",
                            "prober_direct.jinja2": "prober", "prober_ambiguity_select.jinja2": "prober",
                            "prober_ambiguity_mcq.jinja2": "prober"},
                   shared=True)
