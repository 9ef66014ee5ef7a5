"""A prompt rendered once but for one list, whose items are filled in per call.

The stage-2 judge prompt (App. B, J_dialogue) is mostly the seed, the accepted profiles
and the rubric, which are known before the dialogue is; only its ``dialogue.turns`` loop
depends on the output being judged. :func:`prepare_loop` renders everything else ahead
(:mod:`ioa_synth.llm.ahead`) and keeps the loop's body as literal text and item fields;
:meth:`LoopPrompt.fill` then writes the items in, which gives the very bytes
:func:`~ioa_synth.core.templates.render_template` gives.

That holds only for a loop whose body prints fields as they are, so the template is read
first (its jinja2 syntax tree): the list must be used in exactly one ``for`` loop, without
a filter, condition, ``else`` or recursion, whose body holds only literal text and
``{{ item.field }}`` outputs. For any other template :func:`prepare_loop` returns ``None``
and the caller renders as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jinja2 import nodes

from ioa_synth.core.templates import Prompt, on_overrides_changed, template_sha256
from ioa_synth.core.templates import environment as _env

#: A piece of the loop body: literal text, or ``(field,)`` for ``{{ item.field }}``.
Piece = str | tuple[str]


@dataclass(frozen=True)
class LoopPrompt:
    """The chat messages of a template rendered but for one loop (see the module docstring)."""

    system: str
    before: str  # the user block up to where the loop's output goes (not stripped)
    after: str  # the rest of the user block
    body: tuple[Piece, ...]  # one item's output
    template_sha256: str

    def fill(self, items: list[dict[str, Any]]) -> Prompt:
        """The prompt with ``items`` (one dict per loop item) written into the loop."""
        loop = "".join(piece if isinstance(piece, str) else str(item[piece[0]])
                       for item in items for piece in self.body)
        user = (self.before + loop + self.after).strip()
        return Prompt(messages=[{"role": "system", "content": self.system}, {"role": "user", "content": user}],
                      template_sha256=self.template_sha256)


@lru_cache(maxsize=None)
def loop_body(name: str, variable: str, attribute: str) -> tuple[Piece, ...] | None:
    """The body of the one ``for`` loop over ``variable.attribute`` in template ``name``,
    or ``None`` when the template uses ``variable`` otherwise or the loop is not plain."""
    env = _env()
    tree = env.parse(env.loader.get_source(env, name)[0])
    uses = [n for n in tree.find_all(nodes.Name) if n.name == variable]
    loops = [n for n in tree.find_all(nodes.For)
             if isinstance(n.iter, nodes.Getattr) and n.iter.attr == attribute
             and isinstance(n.iter.node, nodes.Name) and n.iter.node.name == variable]
    if len(uses) != 1 or len(loops) != 1:
        return None
    loop = loops[0]
    if loop.else_ or loop.test is not None or loop.recursive or not isinstance(loop.target, nodes.Name):
        return None
    body: list[Piece] = []
    for output in loop.body:
        if not isinstance(output, nodes.Output):
            return None
        for node in output.nodes:
            if isinstance(node, nodes.TemplateData):
                body.append(node.data)
            elif (isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name)
                  and node.node.name == loop.target.name and not hasattr(dict, node.attr)):
                body.append((node.attr,))
            else:
                return None
    return tuple(body)


on_overrides_changed(loop_body.cache_clear)  # the body is read from the template's text


def prepare_loop(name: str, variable: str, attribute: str, context: dict[str, Any]) -> LoopPrompt | None:
    """Template ``name`` rendered with ``context`` but for its loop over
    ``variable.attribute`` (``context`` lacks ``variable``), or ``None`` when that loop
    cannot be filled in later (:func:`loop_body`).

    Raises:
        jinja2.UndefinedError: ``context`` lacks another variable the template uses.
    """
    body = loop_body(name, variable, attribute)
    if body is None:
        return None
    fields = {piece[0] for piece in body if not isinstance(piece, str)}
    marker = {field: f"\x00{field}\x00" for field in fields}  # no template text holds NUL
    tmpl = _env().get_template(name)
    ctx = tmpl.new_context({**context, variable: {attribute: [marker]}})
    system = "".join(tmpl.blocks["system"](ctx)).strip()
    user = "".join(tmpl.blocks["user"](ctx))
    one = "".join(piece if isinstance(piece, str) else marker[piece[0]] for piece in body)
    if user.count(one) != 1 or "\x00" in user.replace(one, ""):
        return None
    before, after = user.split(one)
    return LoopPrompt(system, before, after, body, template_sha256(name))
