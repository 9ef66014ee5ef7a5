"""The settings of a ``belief run`` results folder's manifest (``run.json`` -> ``settings``):
:class:`ioa_synth.belief.conversation.StudySettings` as written (§3), typed for the report,
``reask`` and status."""

from __future__ import annotations

from ioa_synth.runs.kind_registry import Settings


class BeliefSettings(Settings):
    """``agents``, ``attackers`` (the k values), ``rounds``, ``memory`` (turns), ``seed`` and
    ``labelling`` (``judge`` | ``prematch``). Every key may be absent (``None``): folders
    written before a key existed; an absent ``labelling`` means the legacy rule
    (:data:`ioa_synth.belief.conversation.LEGACY_LABELLING`)."""

    agents: int | None = None
    attackers: list[int | str] | None = None
    rounds: int | None = None
    memory: int | None = None
    seed: int | None = None
    labelling: str | None = None
