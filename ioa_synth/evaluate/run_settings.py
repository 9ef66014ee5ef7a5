"""The settings of an ``evaluate`` results folder's manifest (``run.json`` -> ``settings``):
the protocol settings of :class:`ioa_synth.evaluate.case.EvalSettings` (paper §4.1-4.2,
Table 16), typed for every reader (reports, tables, ``train sft``, status)."""

from __future__ import annotations

from typing import Any

from ioa_synth.runs.kind_registry import Settings

#: The settings' keys, which manifests written before ``settings`` existed kept in ``args``.
KEYS = ("mode", "access", "rollouts", "permute_seed")


class EvaluateSettings(Settings):
    """``mode`` (``mcq`` | ``direct`` | ...), ``access`` (Table 16), ``rollouts`` (>= 1 per
    participant) and ``permute_seed`` (``None``: the prober's own order); an absent key has
    the default ``evaluate`` gives it."""

    mode: str = "mcq"
    access: str = "public"
    rollouts: int = 1
    permute_seed: int | None = None

    @classmethod
    def migrate(cls, manifest: dict) -> dict:
        """An older manifest's settings: ``settings`` when it has them, else those of its ``args``."""
        settings = manifest.get("settings")
        if isinstance(settings, dict) and settings:
            return settings
        args: Any = manifest.get("args")
        return {k: args[k] for k in KEYS if k in args} if isinstance(args, dict) else {}
