"""The manifest of a results folder, ``RESULTS/run.json``: what ran there, with which
settings and components, and when; one typed model, written by
:func:`ioa_synth.runs.context.open_run` (``kind=...``; ``in_kind=...`` only when the folder
has none), by :func:`ensure_manifest` for a command without a run (``seeds import``,
``meeting import``), and read by :func:`read_manifest`, the one reader of that file.

On disk (keys in this order; a capability may add its own, e.g. belief's
``probe_temperature``)::

    {"kind": "evaluate",                   # the folder kind (ioa_synth.runs.folder_kinds)
     "command": "evaluate",                # the command that wrote it ("belief run", ...)
     "argv": [...], "args": {...},         # the command line and its parsed arguments
     "settings": {...},                    # the capability's protocol settings
     "components": {"prober": {"model", "temperature", "structured_output",
                               "request_options", "base_url_kind"}},   # no key, no URL
     "fingerprint": "16 hex", "fingerprint_parts": {...},              # the setup description
     "versions": {"toolkit": "0.x", "setup": 2},
     "started_at": "2025-01-01T00:00:00Z", "finished_at": null,
     "prompts": {"build/stage1_generator.jinja2": {"file": "/abs/DIR/build/stage1_generator.jinja2",
                                                   "sha256": "64 hex"}},   # only with --prompts
     "migrated_from": "no run.json"}       # only for a folder written without a manifest

``started_at`` is when the job started: a run resuming an unfinished job of the same
fingerprint (after Ctrl-C, a kill, or each ``--batch-dir`` wave) keeps it and adds
``resumed_at``, when this invocation started.

``settings`` is typed per kind: :class:`Manifest` is generic over the settings model the
kind registered (:mod:`ioa_synth.runs.kind_registry`), so ``read_manifest(folder, "evaluate")``
is a ``Manifest[EvaluateSettings]`` and ``manifest.settings.mode`` a checked field. On disk
``settings`` keeps exactly the keys written (no default is added).

Manifests written before ``kind`` and ``versions`` read as well: their kind comes from
``command`` (the kind that registered it, else its first word: ``belief run`` -> ``belief``),
their settings from the kind's :meth:`~ioa_synth.runs.kind_registry.Settings.migrate`
(evaluate's came from ``args``). Folders written with no manifest at all are migrated by
:func:`ioa_synth.runs.folder_kinds.folder_manifest`. Modelled on the run logs of inspect_ai
(one typed header per eval log).
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.core.jsonl import read_json
from ioa_synth.core.templates import overrides_record
from ioa_synth.llm.client import Endpoint
from ioa_synth.runs import kind_registry as folder_kinds
from ioa_synth.runs.kind_registry import Settings
from ioa_synth.core.validation import first_problem, more_problems

#: The manifest's file name inside a results folder.
MANIFEST_FILE = "run.json"


class ManifestError(ValueError):
    """A ``run.json`` that cannot be used: missing, unreadable, not UTF-8 or JSON, not the
    manifest of a results folder, or (when a kind is asked for) of another kind. The
    message is one line naming the file or folder."""


class Versions(BaseModel):
    """``versions``: the toolkit's version and the capability's setup version (the version
    of the setup description it fingerprints; ``None`` when it has none)."""

    model_config = ConfigDict(extra="allow")

    toolkit: str | None = None
    setup: int | str | None = None


S = TypeVar("S", bound=Settings)


class Manifest(BaseModel, Generic[S]):
    """A results folder's ``run.json`` (see the module docstring for the shape), generic over
    its kind's settings model (``Manifest[EvaluateSettings]``; unparametrised, the settings
    are a plain :class:`~ioa_synth.runs.kind_registry.Settings`). Unknown keys are kept
    (``extra="allow"``), so manifests of other versions read and write back unchanged."""

    model_config = ConfigDict(extra="allow")

    kind: str
    command: str
    argv: list[str] = Field(default_factory=list)
    args: dict[str, Any] = Field(default_factory=dict)
    settings: S
    components: dict[str, Any] = Field(default_factory=dict)
    fingerprint: str | None = None
    fingerprint_parts: dict[str, Any] = Field(default_factory=dict)
    versions: Versions = Field(default_factory=Versions)
    started_at: str | None = None
    finished_at: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """A manifest written before ``kind`` existed: the kind of its command; its settings
        as its kind's model migrates them (``{}`` when it had none)."""
        if not isinstance(data, dict):
            return data
        if "kind" not in data and isinstance(data.get("command"), str):
            data = {"kind": folder_kinds.kind_of_command(data["command"]), **data}
        if not isinstance(data.get("settings"), BaseModel):
            model = folder_kinds.settings_model(data.get("kind") if isinstance(data.get("kind"), str) else None)
            data = {**data, "settings": model.migrate(data)}
        return data

    @field_serializer("settings")
    def _settings_as_stored(self, settings: Settings) -> dict[str, Any]:
        return settings.as_json()

    def to_json(self) -> dict[str, Any]:
        """The ``run.json`` object (fields first, in their order, then the extra keys)."""
        return self.model_dump(mode="json")


def manifest_model(kind: str | None) -> type[Manifest]:
    """``Manifest[<the settings model kind registered>]``."""
    return Manifest[folder_kinds.settings_model(kind)]  # type: ignore[misc]


def parse_manifest(data: dict[str, Any]) -> Manifest:
    """``data`` (a ``run.json`` object) as the manifest of its kind (typed settings).

    Raises:
        pydantic.ValidationError: a value of the wrong type.
    """
    kind = data.get("kind")
    if not isinstance(kind, str) and isinstance(data.get("command"), str):
        kind = folder_kinds.kind_of_command(data["command"])
    return manifest_model(kind if isinstance(kind, str) else None).model_validate(data)


def now_iso() -> str:
    """The current UTC time as ``run.json`` stores it: ``2025-01-01T00:00:00Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def component_settings(ep: Endpoint) -> dict[str, Any]:
    """The manifest's view of one component: model, temperature, structured output, request
    options and ``base_url_kind`` (``embedded`` | ``remote``); no key, no URL."""
    return {"model": ep.model, "temperature": ep.temperature, "structured_output": ep.structured_output,
            "request_options": ep.request_options, "base_url_kind": "embedded" if ep.embedded else "remote"}


def new_manifest(kind: str, command: str, endpoints: dict[str, Endpoint], args: dict[str, Any],
                 description: dict[str, Any], fingerprint: str, *, settings: dict[str, Any] | None = None,
                 setup_version: int | str | None = None, toolkit_version: str | None = None,
                 extra: dict[str, Any] | None = None) -> Manifest:
    """The manifest of a run starting now (``argv`` is this process's command line); with
    templates replaced by name (``--prompts``), ``prompts`` lists each with its file and sha256.

    ``extra`` adds keys of the capability's own; its ``components`` entries are merged over
    the endpoints' (e.g. a component answered from stored results instead of a model)."""
    from ioa_synth import __version__

    extra = dict(extra or {})
    if overrides_record():  # --prompts: which templates were replaced, from which file, with which text
        extra.setdefault("prompts", overrides_record())
    components = {name: component_settings(ep) for name, ep in endpoints.items()} | extra.pop("components", {})
    return manifest_model(kind)(kind=kind, command=command, argv=sys.argv[1:], args=args, settings=settings or {},
                    components=components, fingerprint=fingerprint, fingerprint_parts=description,
                    versions=Versions(toolkit=toolkit_version or __version__, setup=setup_version),
                    started_at=now_iso(), finished_at=None, **extra)


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    """Write ``folder/run.json`` atomically; return its path."""
    return write_json_atomic(Path(folder) / MANIFEST_FILE, manifest.to_json())


def read_manifest(folder: str | Path, kind: str | None = None) -> Manifest:
    """``folder/run.json`` as a :class:`Manifest`; with ``kind``, only a manifest of that kind.

    Raises:
        ManifestError: one line naming the file: missing (asking whether ``folder`` is a
            results folder of ``kind``), unreadable, not UTF-8, not JSON, not an object, a
            value of the wrong type, no ``command``; with ``kind``: written by another
            command (naming it).
    """
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    what = folder_kinds.title(kind) if kind else "a results folder"
    data = read_json(path, ManifestError, missing=f"missing (is this {what}?)")
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: not a JSON object")
    if not isinstance(data.get("command"), str) and not isinstance(data.get("kind"), str):
        if kind:
            raise ManifestError(f"{folder} is not {folder_kinds.short_title(kind)} (its run.json names no command)")
        raise ManifestError(f"{path}: names no command (not the run.json of a results folder)")
    if kind and data.get("kind", folder_kinds.kind_of_command(data.get("command", ""))) != kind:
        command = data.get("command")
        by = f"written by 'ioa-synth {command}'" if isinstance(command, str) else f"of kind {data.get('kind')!r}"
        raise ManifestError(f"{folder} is not {folder_kinds.short_title(kind)} (its run.json was {by})")
    try:
        return parse_manifest(data)
    except ValidationError as exc:
        where, msg = first_problem(exc, top="(top level)")
        raise ManifestError(f"{path}: {where}: {msg}{more_problems(exc)}") from None


def unfinished_start(folder: Path, kind: str, fingerprint: str) -> str | None:
    """``started_at`` of the manifest in ``folder`` when it is of a job of ``kind`` with this
    ``fingerprint`` that has not finished (the run now starting resumes it: a stopped run, a
    ``--batch-dir`` wave), else ``None``."""
    try:
        earlier = read_manifest(folder, kind)
    except ManifestError:
        return None
    if earlier.finished_at is None and earlier.fingerprint == fingerprint:
        return earlier.started_at
    return None


def finish_manifest(folder: Path, manifest: Manifest) -> Manifest:
    """Write ``manifest`` again with ``finished_at`` set to now; return the new one."""
    done = manifest.model_copy(update={"finished_at": now_iso()})
    write_manifest(folder, done)
    return done


#: ``migrated_from`` of a manifest written for a folder that had none (made by a release
#: whose folders of that kind carried no ``run.json``).
NO_MANIFEST = "no run.json"


def folder_manifest_of(kind: str, command: str, *, args: dict[str, Any] | None = None,
                       settings: dict[str, Any] | None = None, argv: list[str] | None = None,
                       migrated_from: str | None = None) -> Manifest:
    """The manifest of a folder of ``kind`` that a command writes without a run of its own
    (``seeds import``, ``meeting import``: no components, no fingerprint), or (``migrated_from``)
    of a folder found without one: ``started_at`` is now, ``finished_at`` is ``None`` (no
    fingerprint: a run of the kind never resumes it). ``argv`` defaults to this process's
    command line (none for a migrated folder); a command whose arguments may name people (a
    meeting transcript's file) passes ``[]``."""
    from ioa_synth import __version__

    extra = {"migrated_from": migrated_from} if migrated_from else {}
    if argv is None:
        argv = [] if migrated_from else sys.argv[1:]
    return manifest_model(kind)(kind=kind, command=command, argv=argv,
                                args=args or {}, settings=settings or {}, versions=Versions(toolkit=__version__),
                                started_at=now_iso(), **extra)


def ensure_manifest(folder: str | Path, kind: str, command: str, *, args: dict[str, Any] | None = None,
                    settings: dict[str, Any] | None = None, argv: list[str] | None = None) -> Manifest:
    """The manifest of ``folder`` (a folder of ``kind`` that ``command`` is about to write),
    written first (atomically) when it has none (:func:`folder_manifest_of`); an existing
    manifest is kept as it is.

    Raises:
        ManifestError: ``run.json`` is unreadable, or of another kind.
    """
    folder = Path(folder)
    if (folder / MANIFEST_FILE).exists():
        return read_manifest(folder, kind)
    manifest = folder_manifest_of(kind, command, args=args, settings=settings, argv=argv)
    folder.mkdir(parents=True, exist_ok=True)
    write_manifest(folder, manifest)
    return manifest
