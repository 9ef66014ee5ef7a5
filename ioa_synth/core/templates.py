"""Prompt templates: packaged jinja2 files, one per role, in a folder each capability
registers for itself (:func:`register_templates`, called when the capability's package is
imported, e.g. ``register_templates("evaluate", Path(__file__).parent / "templates")``).

A template is named ``<capability>/<file>`` (e.g. ``evaluate/simulator.jinja2``) and
defines two blocks, ``system`` and ``user``; rendering gives the chat messages of one
request. Template sha256s go into ``llm_calls`` and the setup fingerprint.

One jinja2 environment serves every capability (compiled templates are kept): a folder
registered after the first render is added to it in place, so registration works before
or after first use.

A capability's names may come from several packages' folders, each registered ``shared``
(``evaluate/``: the probers' templates in :mod:`ioa_synth.probing`, which collab and
meetings import without evaluate, and the simulator's and filter's in
:mod:`ioa_synth.evaluate`); the names, sha256s and overrides are those of one folder.

Any template can be replaced by name for the rest of the process (``--prompts DIR``,
:func:`install_overrides`; :mod:`ioa_synth.core.prompt_overrides` reads and checks a
folder): renders, sha256s (and so ``llm_calls`` and every fingerprint listing the template)
and prose then come from the override; names it does not replace keep the packaged file.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jinja2

from ioa_synth.core.errors import StopRun

#: capability -> its templates folder(s) (:func:`register_templates`; several only when registered ``shared``)
_FOLDERS: dict[str, tuple[Path, ...]] = {}
#: the capabilities registered ``shared`` (whose folders may be several)
_SHARED: set[str] = set()
#: the PrefixLoader's own mapping: a registration adds a loader here, seen by the cached environment
_LOADERS: dict[str, jinja2.BaseLoader] = {}
#: template name -> the component(s) that render it, as the capability registered them
_RENDERS: dict[str, str] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Override:
    """The text that replaces template ``name`` (read from ``path``) and its sha256 (hex)."""

    name: str
    path: Path
    source: str
    sha256: str


#: template name -> its override (:func:`install_overrides`), seen by every capability's loader
_OVERRIDES: dict[str, Override] = {}
#: what to call when the overrides change: caches of what was derived from a template's text
_ON_CHANGE: list[Callable[[], None]] = []


class _Overridable(jinja2.BaseLoader):
    """A capability's templates folder(s), where an installed override wins over the file."""

    def __init__(self, capability: str, folders: tuple[Path, ...]) -> None:
        self.capability = capability
        self.files = jinja2.FileSystemLoader([str(f) for f in folders])

    def get_source(self, environment: jinja2.Environment, template: str):  # type: ignore[override]
        over = _OVERRIDES.get(f"{self.capability}/{template}")
        if over is not None:  # its path names the file in error messages and tracebacks
            return over.source, str(over.path), lambda: True
        return self.files.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return self.files.list_templates()


@dataclass(frozen=True)
class Prompt:
    """Rendered chat messages plus the sha256 of the template that produced them."""

    messages: list[dict[str, str]]
    template_sha256: str


def register_templates(capability: str, folder: Path, renders: dict[str, str] | None = None, *,
                       shared: bool = False) -> None:
    """Make the ``*.jinja2`` files of ``folder`` the templates ``<capability>/<file>``;
    ``renders`` (file -> component(s)) says which component renders each (``ioa-synth
    prompts list``). ``shared``: the capability's templates come from several packages'
    folders, each registered ``shared`` (a package that is imported without the others
    registers its own part); no file name may be in two of them.

    Registering the same folder again does nothing (a module imported twice).

    Raises:
        ValueError: ``capability`` is already registered with another folder and this or
            that registration is not ``shared``, a file of ``folder`` is already one of the
            capability's other folders, or its name holds a ``/``.
        FileNotFoundError: ``folder`` is not a directory.
    """
    folder = Path(folder).resolve()
    if "/" in capability or not capability:
        raise ValueError(f"template capability name {capability!r}: a non-empty name without '/'")
    with _LOCK:
        known = _FOLDERS.get(capability, ())
        if folder in known:
            return
        if known and not (shared and capability in _SHARED):
            raise ValueError(f"templates of {capability!r} are already registered from {known[0]} (not {folder})")
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no templates folder")
        twice = sorted({p.name for p in folder.glob("*.jinja2")} & {p.name for f in known for p in f.glob("*.jinja2")})
        if twice:
            raise ValueError(f"{folder}: {capability}/{twice[0]} is already a template of another folder")
        if shared:
            _SHARED.add(capability)
        _FOLDERS[capability] = known + (folder,)
        _LOADERS[capability] = _Overridable(capability, _FOLDERS[capability])
        _RENDERS.update({f"{capability}/{file}": who for file, who in (renders or {}).items()})


def registered_capabilities() -> tuple[str, ...]:
    """The capabilities that registered templates, sorted."""
    return tuple(sorted(_FOLDERS))


def _folders(capability: str) -> tuple[Path, ...]:
    try:
        return _FOLDERS[capability]
    except KeyError:
        raise KeyError(f"no templates registered for {capability!r} (registered: "
                       f"{', '.join(registered_capabilities()) or 'none'})") from None


def template_dir(capability: str) -> Path:
    """The templates folder ``capability`` registered.

    Raises:
        KeyError: no folder registered for ``capability`` (its package was not imported).
        ValueError: ``capability`` is registered from several folders (``shared``).
    """
    folders = _folders(capability)
    if len(folders) > 1:
        raise ValueError(f"templates of {capability!r} come from {len(folders)} folders, not one")
    return folders[0]


def _files(capability: str) -> list[Path]:
    """The template files of ``capability``'s folder(s), sorted by file name."""
    return sorted((p for folder in _FOLDERS.get(capability, ()) for p in folder.glob("*.jinja2")), key=lambda p: p.name)


def template_names() -> tuple[str, ...]:
    """Every registered template name (``<capability>/<file>.jinja2``), sorted."""
    return tuple(sorted(f"{c}/{p.name}" for c in _FOLDERS for p in _files(c)))


def template_renders(name: str) -> str:
    """The component(s) that render template ``name``, as its capability registered them
    (``""`` when it said nothing)."""
    return _RENDERS.get(name, "")


def project_source(name: str) -> str:
    """The packaged text of template ``name``, whatever overrides are installed.

    Raises:
        FileNotFoundError: no such template.
    """
    return _file(name).read_text(encoding="utf-8")


def install_overrides(overrides: dict[str, Override]) -> None:
    """Replace the templates named in ``overrides`` for the rest of the process (or until
    the next call; ``{}`` brings back the packaged text). Call it before a run's first
    render: the compiled templates, sha256s and prose are recomputed from then on."""
    with _LOCK:
        _OVERRIDES.clear()
        _OVERRIDES.update(overrides)
        environment().cache.clear()  # type: ignore[union-attr]  # compiled from the old text
        template_sha256.cache_clear()
        template_prose.cache_clear()
        for clear in _ON_CHANGE:
            clear()


def on_overrides_changed(clear: Callable[[], None]) -> None:
    """Call ``clear`` whenever :func:`install_overrides` runs (a cache of something derived
    from a template's text, e.g. ``functools.lru_cache``'s ``cache_clear``)."""
    _ON_CHANGE.append(clear)


def active_overrides() -> dict[str, Override]:
    """The installed overrides, by template name (empty: the packaged text everywhere)."""
    return dict(_OVERRIDES)


def overrides_record() -> dict[str, dict[str, str]]:
    """``{name: {"file", "sha256"}}`` of the installed overrides, as a run records them
    (``run.json``'s and the ``runs`` row's ``prompts``); empty without overrides."""
    return {name: {"file": str(o.path), "sha256": o.sha256} for name, o in sorted(_OVERRIDES.items())}


class TemplateOverrideError(StopRun, ValueError):
    """A replaced template (:func:`install_overrides`) failed to render (an attribute the
    context lacks, a filter's error): every render of it would fail alike, so the run stops
    with one line naming its file and line instead of failing each unit."""


def _override_line(exc: BaseException) -> str | None:
    """``file:line`` of the innermost traceback frame inside an installed override, if any."""
    files = {str(o.path): name for name, o in _OVERRIDES.items()}
    tb, found = exc.__traceback__, None
    while tb is not None:
        name = files.get(tb.tb_frame.f_code.co_filename)
        if name is not None:  # the frame's line is of the compiled code: the template's own line from its debug info
            found = f"{tb.tb_frame.f_code.co_filename}:{environment().get_template(name).get_corresponding_lineno(tb.tb_lineno)}"
        tb = tb.tb_next
    return found


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one jinja2 environment of every registered template (a ``PrefixLoader`` over
    the registered folders; later registrations are seen)."""
    # auto_reload off: templates are packaged files, and the per-render mtime check costs a stat per call
    return jinja2.Environment(loader=jinja2.PrefixLoader(_LOADERS), undefined=jinja2.StrictUndefined,
                              auto_reload=False, keep_trailing_newline=False, autoescape=False)


def _file(name: str) -> Path:
    """The file of template ``name``; raises FileNotFoundError for an unknown capability."""
    capability, _, file = name.partition("/")
    folders = _FOLDERS.get(capability)
    if not folders:
        raise FileNotFoundError(f"no template {name!r}: no templates registered for {capability!r}")
    return next((f / file for f in folders if (f / file).is_file()), folders[0] / file)


@lru_cache(maxsize=None)
def template_sha256(name: str) -> str:
    """sha256 (hex) of the template file ``name`` (``<capability>/<file>``).

    Raises:
        FileNotFoundError: no such template.
    """
    over = _OVERRIDES.get(name)
    return over.sha256 if over is not None else hashlib.sha256(_file(name).read_bytes()).hexdigest()


def all_template_hashes(capability: str) -> dict[str, str]:
    """Template name -> sha256 for every template of ``capability``, for the fingerprint.

    Raises:
        KeyError: ``capability`` registered no templates.
    """
    _folders(capability)
    return {f"{capability}/{p.name}": template_sha256(f"{capability}/{p.name}") for p in _files(capability)}


def compile_templates(capability: str) -> None:
    """Compile every template of ``capability`` now (jinja2 keeps them): a first render
    compiles its template (~15 ms of CPU), and the workers of a run starting together
    would each compile the same ones inside their first calls."""
    for name in all_template_hashes(capability):
        environment().get_template(name)


def render_template(name: str, **context: Any) -> Prompt:
    """Render template ``name`` (``<capability>/<file>``) with ``context``.

    Raises:
        jinja2.TemplateNotFound: no such template.
        jinja2.UndefinedError: the context lacks a variable the template uses.
        TemplateOverrideError: the error arose in an installed override (it stops the run).
    """
    tmpl = environment().get_template(name)
    ctx = tmpl.new_context(context)
    try:
        system = "".join(tmpl.blocks["system"](ctx)).strip()
        user = "".join(tmpl.blocks["user"](ctx)).strip()
    except jinja2.TemplateError as exc:
        where = _override_line(exc)
        if where is None:
            raise
        raise TemplateOverrideError(f"{where}: {exc.message or exc} (a replaced template: fix it and run the same "
                                    "command again)") from exc
    return Prompt(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                  template_sha256=template_sha256(name))


def with_note(prompt: Prompt, note: Prompt) -> Prompt:
    """``prompt`` with ``note``'s system and user messages appended (after a blank line) to
    its own: an addition some runs make (a case's language) while the prompt's template,
    and its sha256, stay those of ``prompt``."""
    messages = [dict(m) for m in prompt.messages]
    for message, extra in zip(messages, note.messages):
        if extra["content"]:
            message["content"] = f"{message['content']}\n\n{extra['content']}"
    return Prompt(messages=messages, template_sha256=prompt.template_sha256)


@lru_cache(maxsize=None)
def template_prose(name: str) -> tuple[str, ...]:
    """The literal text of template ``name`` (``<capability>/<file>``), split at every jinja
    tag: the instructions themselves, which a model may copy into its answer (the content
    gates compare generated text with them).

    Raises:
        FileNotFoundError: no such template.
    """
    over = _OVERRIDES.get(name)
    source = over.source if over is not None else _file(name).read_text(encoding="utf-8")
    return tuple(part for part in re.split(r"\{[{%#].*?[}%#]\}", source, flags=re.S) if part.strip())
