"""The settings of a build directory's manifest (``run.json`` -> ``settings``): those of the
last ``build`` run (paper §3). Written by ``build``; the other commands that write a build
directory (``seeds import``, ``build import``, ``regenerate``, ...) give a new directory a
manifest without settings."""

from __future__ import annotations

from ioa_synth.runs.kind_registry import Settings


class BuildSettings(Settings):
    """``split`` (``train`` | ``val`` | ``test``), ``type_mix`` (``--type-mix``, ``None``:
    the default mix), ``dedup`` (``--dedup`` threshold, ``None``: off) and ``participants``
    (``--participants``; ``None``: two, the paper's dyad, and the key is not written)."""

    split: str | None = None
    type_mix: str | None = None
    dedup: float | None = None
    participants: int | None = None
