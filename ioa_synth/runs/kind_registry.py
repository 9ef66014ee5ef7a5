"""The kinds of results folder the capabilities register: each kind's name, title, the
commands that write it, its typed manifest settings and, for folders written before they
carried a manifest, the layout that tells them. The runs layer names no kind itself.

A capability registers each kind of folder it writes, at import (its package's
``__init__``)::

    register_folder_kind("evaluate", "an 'ioa-synth evaluate' results folder", commands=("evaluate",),
                         settings=EvaluateSettings, hint="read it with 'ioa-synth report'")

This module is the registry only (it imports nothing of the runs layer): the manifest
(:mod:`ioa_synth.runs.manifest`) reads a kind's settings model here, and the detection of a
folder's kind (:mod:`ioa_synth.runs.folder_kinds`) reads the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict


class Settings(BaseModel):
    """The settings of a results folder (``run.json`` -> ``settings``): the base of each
    capability's settings model. Keys no model names are kept (``extra="allow"``), so
    manifests of other versions read and write back unchanged; a model's fields default to
    ``None`` (absent) unless absence has a documented meaning."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def migrate(cls, manifest: dict) -> dict:
        """The ``settings`` object of a manifest (as read from disk, before validation) written
        before this model existed; the default returns ``manifest["settings"]`` (or ``{}``).
        A capability whose older manifests kept their settings elsewhere (``args``) overrides it."""
        settings = manifest.get("settings")
        return settings if isinstance(settings, dict) else {}

    def as_json(self) -> dict:
        """The settings as stored: the keys given, in their order (no default is added)."""
        return self.model_dump(mode="json", exclude_unset=True)


@dataclass(frozen=True)
class FolderLayout:
    """How a folder written before folders carried a manifest (``run.json``) is told, so that
    it is migrated when opened (:func:`ioa_synth.runs.folder_kinds.folder_manifest`); and the
    only way of telling a kind that by design has no manifest (an export's dataset folder,
    published as it is).

    Attributes:
        marker: ``marker(path) -> bool``, files that make one (no catalog opened).
        tables: catalog tables whose rows make one.
        commands: the commands whose ``runs`` rows make one.
        other_commands: runs of commands that no kind claims make one too.
    """

    marker: Callable[[Path], bool] | None = None
    tables: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    other_commands: bool = False


@dataclass(frozen=True)
class FolderKind:
    """A registered kind of folder.

    Attributes:
        kind: its name (``"evaluate"``); a manifest's ``kind``.
        title: what it is, with its article, in messages (``"an 'ioa-synth evaluate'
            results folder"``).
        commands: the commands that write it (the first names it in messages; an older
            manifest without ``kind`` of one of these is of this kind).
        settings: the model of its manifest's ``settings`` (a :class:`Settings` subclass).
        layout: how such a folder written without a manifest is told (``None``: it is not).
        manifest: whether its folders carry a ``run.json`` (``False``: told by ``layout`` alone).
        hint: what to do with such a folder where another kind is wanted (``"read it
            with ..."``).
    """

    kind: str
    title: str
    commands: tuple[str, ...] = ()
    settings: type[Settings] = Settings
    layout: FolderLayout | None = None
    manifest: bool = True
    hint: str = "use a folder of its own"


_KINDS: dict[str, FolderKind] = {}


def register_folder_kind(kind: str, title: str, *, commands: tuple[str, ...] = (), settings: type[Settings] = Settings,
                         layout: FolderLayout | None = None, manifest: bool = True,
                         hint: str = "use a folder of its own") -> FolderKind:
    """Register (or replace) the folder kind ``kind``; see :class:`FolderKind`."""
    entry = FolderKind(kind, title, tuple(commands), settings, layout, manifest, hint)
    _KINDS[kind] = entry
    return entry


def registered() -> dict[str, FolderKind]:
    """The registered kinds by name, in registration order."""
    return dict(_KINDS)


def settings_model(kind: str | None) -> type[Settings]:
    """The settings model ``kind`` registered (:class:`Settings` for an unregistered kind)."""
    entry = _KINDS.get(kind or "")
    return entry.settings if entry else Settings


def kind_of_command(command: str) -> str:
    """The kind whose runs ``command`` makes; for an unclaimed command its first word
    (``"belief run"`` -> ``"belief"``)."""
    for entry in _KINDS.values():
        if command in entry.commands:
            return entry.kind
    return command.split(" ", 1)[0] if command else command


def title(kind: str) -> str:
    """The registered title of ``kind``; for an unregistered kind ``"a '<kind>' results folder"``."""
    entry = _KINDS.get(kind)
    return entry.title if entry else f"a '{kind}' results folder"


def short_title(kind: str) -> str:
    """``"a '<command>' results folder"`` after the command that writes ``kind``'s manifest
    (``"a 'belief run' results folder"``, ``"an 'evaluate' results folder"``)."""
    entry = _KINDS.get(kind)
    name = entry.commands[0] if entry and entry.commands else kind
    return f"{'an' if name[:1] in 'aeiou' else 'a'} '{name}' results folder"


def hint(kind: str) -> str:
    """What to do with a folder of ``kind`` where another kind is wanted."""
    entry = _KINDS.get(kind)
    return entry.hint if entry else "use a folder of its own"
