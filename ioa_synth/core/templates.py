"""Prompt templates: packaged jinja2 files, one per role, under each capability's
``templates/`` folder (``ioa_synth/build/templates/``, ``ioa_synth/evaluate/templates/``).

A template is named ``<capability>/<file>`` (e.g. ``build/stage1_judge.jinja2``) and
defines two blocks, ``system`` and ``user``; rendering gives the chat messages of one
request. Template sha256s go into ``llm_calls`` and the setup fingerprint.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

_PKG = Path(__file__).resolve().parent.parent

#: Capabilities whose package folder holds a ``templates/`` directory.
CAPABILITIES: tuple[str, ...] = ("build", "evaluate", "belief", "meetings", "collab")

#: (stage, role) -> template name of the build loop.
TEMPLATE_FILES: dict[tuple[int, str], str] = {
    (1, "generator"): "build/stage1_generator.jinja2",
    (1, "judge"): "build/stage1_judge.jinja2",
    (2, "generator"): "build/stage2_generator.jinja2",
    (2, "judge"): "build/stage2_judge.jinja2",
}


@dataclass(frozen=True)
class Prompt:
    """Rendered chat messages plus the sha256 of the template that produced them."""

    messages: list[dict[str, str]]
    template_sha256: str


def template_dir(capability: str) -> Path:
    """The packaged ``templates/`` folder of ``capability`` (``build`` or ``evaluate``)."""
    return _PKG / capability / "templates"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    loaders = {c: jinja2.FileSystemLoader(str(template_dir(c))) for c in CAPABILITIES if template_dir(c).is_dir()}
    # auto_reload off: templates are packaged files, and the per-render mtime check costs a stat per call
    return jinja2.Environment(loader=jinja2.PrefixLoader(loaders), undefined=jinja2.StrictUndefined, auto_reload=False,
                              keep_trailing_newline=False, autoescape=False)


@lru_cache(maxsize=None)
def template_sha256(name: str) -> str:
    """sha256 (hex) of the template file ``name`` (``<capability>/<file>``).

    Raises:
        FileNotFoundError: no such template.
    """
    capability, _, file = name.partition("/")
    return hashlib.sha256((template_dir(capability) / file).read_bytes()).hexdigest()


def all_template_hashes(capability: str = "build") -> dict[str, str]:
    """Template name -> sha256 for every template of ``capability``, for the fingerprint."""
    folder = template_dir(capability)
    return {f"{capability}/{p.name}": template_sha256(f"{capability}/{p.name}")
            for p in sorted(folder.glob("*.jinja2"))}


def compile_templates(capability: str) -> None:
    """Compile every template of ``capability`` now (jinja2 keeps them): a first render
    compiles its template (~15 ms of CPU), and the workers of a run starting together
    would each compile the same ones inside their first calls."""
    for name in all_template_hashes(capability):
        _env().get_template(name)


def render_template(name: str, **context: Any) -> Prompt:
    """Render template ``name`` (``<capability>/<file>``) with ``context``.

    Raises:
        jinja2.TemplateNotFound: no such template.
        jinja2.UndefinedError: the context lacks a variable the template uses.
    """
    tmpl = _env().get_template(name)
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
    capability, _, file = name.partition("/")
    source = (template_dir(capability) / file).read_text(encoding="utf-8")
    return tuple(part for part in re.split(r"\{[{%#].*?[}%#]\}", source, flags=re.S) if part.strip())


def render(stage: int, role: str, **context: Any) -> Prompt:
    """Render the build template of (``stage``, ``role``) with ``context``.

    Raises:
        KeyError: no template for that stage and role.
        jinja2.UndefinedError: the context lacks a variable the template uses.
    """
    return render_template(TEMPLATE_FILES[(stage, role)], **context)
