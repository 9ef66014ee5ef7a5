"""The settings of a build directory's manifest (``run.json`` -> ``settings``): those of the
last ``build`` run (paper §3). Written by ``build``; the other commands that write a build
directory (``seeds import``, ``build import``, ``regenerate``, ...) give a new directory a
manifest without settings."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.runs.kind_registry import Settings
from ioa_synth.text.languages import DEFAULT_LANGUAGE, language_tag


class BuildSettings(Settings):
    """``split`` (``train`` | ``val`` | ``test``), ``type_mix`` (``--type-mix``, ``None``:
    the default mix), ``dedup`` (``--dedup`` threshold, ``None``: off), ``participants``
    (``--participants``; ``None``: two, the paper's dyad, and the key is not written), ``meetings``
    (``--meetings``; ``None``: one, the paper's single meeting, and the key is not written) and
    ``language`` (``--language``, the registry's tag; absent: English, the paper's, so that an
    English build's manifest keeps its earlier keys)."""

    split: str | None = None
    type_mix: str | None = None
    dedup: float | None = None
    participants: int | None = None
    meetings: int | None = None
    language: str | None = None


def language_setting(language: str | None) -> dict[str, str]:
    """``{"language": tag}`` for a build in another language than English, else ``{}``."""
    tag = language_tag(language)
    return {} if tag == DEFAULT_LANGUAGE else {"language": tag}


def build_language(out_dir: Path) -> str | None:
    """The language a build directory's cases are written in (its manifest's settings;
    ``None``: English, also for a directory without a manifest or of another kind)."""
    from ioa_synth.runs.manifest import ManifestError, read_manifest

    try:
        settings = read_manifest(out_dir, "build").settings
    except ManifestError:  # no manifest (an earlier release's folder), or another kind's: the default
        return None
    return getattr(settings, "language", None)
