"""Prompt templates: packaged jinja2 files, one per role, in a folder each capability
registers for itself (:func:`register_templates`, called when the capability's package is
imported, e.g. ``register_templates("evaluate", Path(__file__).parent / "templates")``).

A template is named ``<capability>/<file>`` (e.g. ``evaluate/simulator.jinja2``) and
defines two blocks, ``system`` and ``user``; rendering gives the chat messages of one
request. Template sha256s go into ``llm_calls`` and the setup fingerprint.

One jinja2 environment serves every capability (compiled templates are kept): a folder
registered after the first render is added to it in place, so registration works before
or after first use.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

#: capability -> its templates folder (:func:`register_templates`)
_FOLDERS: dict[str, Path] = {}
#: the PrefixLoader's own mapping: a registration adds a loader here, seen by the cached environment
_LOADERS: dict[str, jinja2.BaseLoader] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Prompt:
    """Rendered chat messages plus the sha256 of the template that produced them."""

    messages: list[dict[str, str]]
    template_sha256: str


def register_templates(capability: str, folder: Path) -> None:
    """Make the ``*.jinja2`` files of ``folder`` the templates ``<capability>/<file>``.

    Registering the same folder again does nothing (a module imported twice).

    Raises:
        ValueError: ``capability`` is already registered with another folder, or its
            name holds a ``/``.
        FileNotFoundError: ``folder`` is not a directory.
    """
    folder = Path(folder).resolve()
    if "/" in capability or not capability:
        raise ValueError(f"template capability name {capability!r}: a non-empty name without '/'")
    with _LOCK:
        known = _FOLDERS.get(capability)
        if known == folder:
            return
        if known is not None:
            raise ValueError(f"templates of {capability!r} are already registered from {known} (not {folder})")
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no templates folder")
        _FOLDERS[capability] = folder
        _LOADERS[capability] = jinja2.FileSystemLoader(str(folder))


def registered_capabilities() -> tuple[str, ...]:
    """The capabilities that registered templates, sorted."""
    return tuple(sorted(_FOLDERS))


def template_dir(capability: str) -> Path:
    """The templates folder ``capability`` registered.

    Raises:
        KeyError: no folder registered for ``capability`` (its package was not imported).
    """
    try:
        return _FOLDERS[capability]
    except KeyError:
        raise KeyError(f"no templates registered for {capability!r} (registered: "
                       f"{', '.join(registered_capabilities()) or 'none'})") from None


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
    folder = _FOLDERS.get(capability)
    if folder is None:
        raise FileNotFoundError(f"no template {name!r}: no templates registered for {capability!r}")
    return folder / file


@lru_cache(maxsize=None)
def template_sha256(name: str) -> str:
    """sha256 (hex) of the template file ``name`` (``<capability>/<file>``).

    Raises:
        FileNotFoundError: no such template.
    """
    return hashlib.sha256(_file(name).read_bytes()).hexdigest()


def all_template_hashes(capability: str) -> dict[str, str]:
    """Template name -> sha256 for every template of ``capability``, for the fingerprint.

    Raises:
        KeyError: ``capability`` registered no templates.
    """
    folder = template_dir(capability)
    return {f"{capability}/{p.name}": template_sha256(f"{capability}/{p.name}")
            for p in sorted(folder.glob("*.jinja2"))}


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
    """
    tmpl = environment().get_template(name)
    ctx = tmpl.new_context(context)
    system = "".join(tmpl.blocks["system"](ctx)).strip()
    user = "".join(tmpl.blocks["user"](ctx)).strip()
    return Prompt(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                  template_sha256=template_sha256(name))


@lru_cache(maxsize=None)
def template_prose(name: str) -> tuple[str, ...]:
    """The literal text of template ``name`` (``<capability>/<file>``), split at every jinja
    tag: the instructions themselves, which a model may copy into its answer (the content
    gates compare generated text with them).

    Raises:
        FileNotFoundError: no such template.
    """
    source = _file(name).read_text(encoding="utf-8")
    return tuple(part for part in re.split(r"\{[{%#].*?[}%#]\}", source, flags=re.S) if part.strip())
