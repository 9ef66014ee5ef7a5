"""The settings of a ``collab run`` results folder's manifest (``run.json`` -> ``settings``):
:class:`ioa_synth.collab.team.TeamSettings` as written (paper §6.4), typed for its readers."""

from __future__ import annotations

from ioa_synth.runs.kind_registry import Settings


class CollabSettings(Settings):
    """``bench`` (``bcb`` | ``hidden-profile``) and ``max_extra_rounds`` (the cap on a
    detector's extra rounds); the team's other settings (rounds, temperatures, seed, limits)
    are kept as written. ``None``: absent."""

    bench: str | None = None
    max_extra_rounds: int | None = None
