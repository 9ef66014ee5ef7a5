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


def folder_settings(out_dir: Path) -> BuildSettings | None:
    """The settings of the ``build`` that made ``out_dir`` (its manifest), or ``None``: no
    manifest, another kind's, or one written by a command that sets none (``build import``)."""
    from ioa_synth.runs.manifest import ManifestError, read_manifest

    try:
        settings = read_manifest(out_dir, "build").settings
    except ManifestError:
        return None
    return settings if isinstance(settings, BuildSettings) else None


def record_misfit(record: dict, settings: BuildSettings | None) -> str | None:
    """Why a record (IoA-Suite layout, ``build --participants/--meetings/--language`` fields
    additive) does not belong in a directory built with ``settings``: another meeting size,
    a series in a one-meeting build or the reverse, or another language. ``None``: it fits,
    or the directory names no settings (it holds imported records only)."""
    if settings is None:
        return None
    profiles = record.get("profiles") if isinstance(record.get("profiles"), dict) else {}
    members = profiles.get("members")
    people, want = (len(members) if isinstance(members, list) else 2), settings.participants or 2
    if people != want:
        return f"it is a meeting of {people} but the directory was built with --participants {want}"
    points = profiles.get("misalignment_points")
    series = isinstance(points, list) and any(isinstance(p, dict) and "planted_in" in p for p in points)
    if series != ((settings.meetings or 1) > 1):
        return ("it is a series of meetings but the directory was built for one meeting" if series else
                f"it is one meeting but the directory was built with --meetings {settings.meetings}")
    try:
        tag = language_tag(record.get("language")) if isinstance(record.get("language"), str) else DEFAULT_LANGUAGE
    except ValueError:
        tag = str(record.get("language"))
    if tag != (settings.language or DEFAULT_LANGUAGE):
        return f"it is written in {tag!r} but the directory was built with --language {settings.language or 'en'}"
    return None
