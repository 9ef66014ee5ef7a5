"""The settings of a reward catalog folder's manifest (``run.json`` -> ``settings``): the
evaluate protocol settings the reward scores with (paper §6.1: ``mcq``, one rollout)."""

from __future__ import annotations

from ioa_synth.runs.kind_registry import Settings


class RewardSettings(Settings):
    """``mode`` and ``rollouts`` (simulator rollouts per participant); ``None``: absent (a
    folder migrated from one without a manifest)."""

    mode: str | None = None
    access: str | None = None
    rollouts: int | None = None
    permute_seed: int | None = None
