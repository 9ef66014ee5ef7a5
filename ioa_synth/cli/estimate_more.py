"""The estimates of ``belief reask``, ``belief screen`` and ``meeting probe``
(``ioa-synth estimate belief reask ...``; :mod:`ioa_synth.cli.estimate`): each after its
command's own checks (:func:`~ioa_synth.cli.belief_inputs.reask_inputs`,
:func:`~ioa_synth.cli.belief_inputs.screen_inputs`, :func:`~ioa_synth.cli.meeting_inputs.probe_inputs`),
so that it refuses what the command refuses, with the same line. Nothing is written.

Each takes the command's parsed ``params``, the ``--prices`` table and ``--tokenizer``, and
returns the estimate contract (:func:`ioa_synth.runs.spend.fold`).
"""

from __future__ import annotations

from typing import Any, Callable


def _reask(p: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    from ioa_synth.belief.estimate_asks import estimate_reask
    from ioa_synth.cli.belief_inputs import reask_inputs, reask_refusals

    inputs = reask_inputs(p["results"], p["variant"], p["steps"], p["config"], p["batch"], p["batch_dir"])
    with reask_refusals():  # the plan's refusals (--sample too large, a tampered log), as the command's
        return estimate_reask(p["results"], p["variant"], inputs.steps, inputs.config, p["local_model"], prices,
                              tokenizer, sample=p["sample"], seed=p["seed"], batch=inputs.batch is not None)


def _screen(p: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    from ioa_synth.belief.estimate_asks import estimate_screen
    from ioa_synth.belief.screen import Thresholds
    from ioa_synth.cli.belief_inputs import screen_inputs

    th = Thresholds(p["samples"], p["min_true"], p["max_manipulated"], p["max_both"], p["cap_per_relation"])
    inputs = screen_inputs(p["items"], p["out"], th, p["config"], p["batch"], p["batch_dir"])
    return estimate_screen(inputs.items, inputs.work, th.samples, inputs.config, p["local_model"], prices, tokenizer,
                           batch=inputs.batch is not None)


def _probe(p: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    from ioa_synth.cli.meeting_inputs import probe_inputs
    from ioa_synth.meetings.estimate import estimate_probe

    inputs = probe_inputs(p["session_dir"], p["detector"], p["batch"], p["batch_dir"])
    return estimate_probe(inputs.session, inputs.detectors, p["local_model"], prices, tokenizer,
                          batch=inputs.batch is not None)


#: The estimate of each command this module serves, by its name (``belief reask``).
ESTIMATES: dict[str, Callable[[dict[str, Any], dict, str | None], dict[str, Any]]] = {
    "belief reask": _reask, "belief screen": _screen, "meeting probe": _probe}
