"""Prompt templates (jinja2 files under ``templates/``), one per role and stage.

Each template defines two blocks, ``system`` and ``user``; rendering gives the chat
messages of one request. Template sha256s go into ``llm_calls`` and the fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2

from .resources import resource_dir, sha256_file

#: (stage, role) -> template file name.
TEMPLATE_FILES: dict[tuple[int, str], str] = {
    (1, "generator"): "stage1_generator.jinja2",
    (1, "judge"): "stage1_judge.jinja2",
    (2, "generator"): "stage2_generator.jinja2",
    (2, "judge"): "stage2_judge.jinja2",
}


@dataclass(frozen=True)
class Prompt:
    """Rendered chat messages plus the sha256 of the template that produced them."""

    messages: list[dict[str, str]]
    template_sha256: str


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


@lru_cache(maxsize=None)
def template_sha256(name: str) -> str:
    """sha256 of template file ``name``."""
    return sha256_file(resource_dir("templates") / name)


def all_template_hashes() -> dict[str, str]:
    """File name -> sha256 for every template, for the fingerprint."""
    return {name: template_sha256(name) for name in sorted(TEMPLATE_FILES.values())}


def render(stage: int, role: str, **context: Any) -> Prompt:
    """Render the template of (``stage``, ``role``) with ``context``.

    Raises:
        KeyError: no template for that stage and role.
        jinja2.UndefinedError: the context lacks a variable the template uses.
    """
    name = TEMPLATE_FILES[(stage, role)]
    tmpl = _env().get_template(name)
    ctx = tmpl.new_context(context)
    system = "".join(tmpl.blocks["system"](ctx)).strip()
    user = "".join(tmpl.blocks["user"](ctx)).strip()
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        template_sha256=template_sha256(name),
    )
