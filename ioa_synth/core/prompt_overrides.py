"""A folder of prompt templates that replace the packaged ones by name (``--prompts DIR``,
docs/prompts.md): read, checked and written here; installed with
:func:`ioa_synth.core.templates.install_overrides`.

Layout: ``DIR/<capability>/<file>.jinja2`` is template ``<capability>/<file>.jinja2``
(``ioa-synth prompts list`` names them; :func:`export_templates` writes the packaged text
as a starting point). A folder may hold a subset; hidden files (``.name``) are skipped.

:func:`load_overrides` refuses, each with one line naming the file (and line): a folder
that does not exist or holds no file; a file whose name is no template (with the closest
name); text that is not UTF-8 or not jinja2 (the parser's message and line); a template
missing a block or macro the packaged one defines (the ``system`` and ``user`` blocks are
a request's messages; other templates import the macros), importing a template that does
not exist, or using a variable the packaged template is not rendered with (the
environment's ``StrictUndefined`` would fail at the first render, after requests went
out). An attribute the context lacks (``case.no_such_field``) is found only when the
template is rendered: :class:`~ioa_synth.core.templates.TemplateOverrideError` then stops
the run.
"""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path
from typing import Iterable

from jinja2 import TemplateSyntaxError, meta, nodes

from ioa_synth.core.atomic import write_text_atomic
from ioa_synth.core.templates import Override, environment, project_source, template_names


class PromptsError(ValueError):
    """An unusable prompts folder or name; the message is one line naming the file."""


def _guess(name: str, names: Iterable[str]) -> str:
    """`` (did you mean "x"?)`` for the closest of ``names``, by whole name or by file name."""
    names = list(names)
    by_file = [n for n in names if n.rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]]
    close = by_file or difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def check_names(names: Iterable[str]) -> list[str]:
    """``names`` as given when each is a registered template name.

    Raises:
        PromptsError: the first that is not, with the closest name.
    """
    known = template_names()
    for name in names:
        if name not in known:
            raise PromptsError(f"{name}: no such template{_guess(name, known)}; 'ioa-synth prompts list' names them")
    return list(names)


def _line(tree: nodes.Template, variable: str) -> int:
    return min((n.lineno for n in tree.find_all(nodes.Name) if n.name == variable), default=1)


def _defined(tree: nodes.Template, kind: type) -> set[str]:
    return {n.name for n in tree.find_all(kind)}


def template_variables(name: str) -> list[str]:
    """The variables the packaged template ``name`` is rendered with (those an override may use), sorted."""
    return sorted(meta.find_undeclared_variables(environment().parse(project_source(name))))


def check_template(name: str, path: Path, source: str) -> None:
    """Check ``source`` (read from ``path``) as a replacement of template ``name``.

    Raises:
        PromptsError: ``path:line: ...`` for a syntax error, a missing block or macro,
            an unknown imported template or a variable the packaged template lacks.
    """
    env = environment()
    try:
        tree = env.parse(source, name, str(path))
    except TemplateSyntaxError as exc:
        raise PromptsError(f"{path}:{exc.lineno}: {exc.message}") from exc
    packaged = env.parse(project_source(name))
    for kind, what in ((nodes.Block, "block"), (nodes.Macro, "macro")):
        missing = sorted(_defined(packaged, kind) - _defined(tree, kind))
        if missing:
            tag = f"{{% {what} {missing[0]} %}}"
            raise PromptsError(f"{path}: no {tag}: the packaged {name} defines {what}s "
                               f"{', '.join(sorted(_defined(packaged, kind)))} and a run uses each")
    for ref in meta.find_referenced_templates(tree):
        if ref is not None and ref not in template_names():
            raise PromptsError(f"{path}: imports {ref!r}, which is no template{_guess(ref, template_names())}")
    allowed = meta.find_undeclared_variables(packaged) | set(env.globals)
    unknown = sorted(meta.find_undeclared_variables(tree) - allowed, key=lambda v: (_line(tree, v), v))
    if unknown:
        var = unknown[0]
        raise PromptsError(f"{path}:{_line(tree, var)}: {var!r} is undefined{_guess(var, allowed)}; {name} is "
                           f"rendered with {', '.join(sorted(meta.find_undeclared_variables(packaged)))}")


def load_overrides(folder: Path) -> dict[str, Override]:
    """The templates of ``folder`` (see the module docstring), each checked, by name.

    Raises:
        PromptsError: one line naming the folder or file (and line) of the first problem.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise PromptsError(f"prompts folder {folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not files:
        raise PromptsError(f"prompts folder {folder} holds no template; 'ioa-synth prompts export {folder}' "
                           "writes the current ones to start from")
    known = template_names()
    overrides: dict[str, Override] = {}
    for path in files:
        name = path.relative_to(folder).as_posix()
        if name not in known:
            raise PromptsError(f"{path}: {name!r} is not a template name{_guess(name, known)}; "
                               "'ioa-synth prompts list' names them")
        data = path.read_bytes()
        try:
            source = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PromptsError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        check_template(name, path, source)
        overrides[name] = Override(name, path.resolve(), source, hashlib.sha256(data).hexdigest())
    return overrides


def export_templates(folder: Path, names: Iterable[str] | None = None) -> list[Path]:
    """Write the packaged text of ``names`` (default: every template) to
    ``folder/<capability>/<file>``; returns the paths written.

    Raises:
        PromptsError: an unknown name, or a file that already exists (nothing is written).
    """
    chosen = check_names(names) if names else list(template_names())
    targets = [(name, Path(folder) / name) for name in chosen]
    existing = [str(p) for _, p in targets if p.exists()]
    if existing:
        raise PromptsError(f"{existing[0]} exists{f' (and {len(existing) - 1} more)' if len(existing) > 1 else ''}: "
                           "export does not overwrite; choose an empty folder or move them")
    for name, path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, project_source(name))
    return [p for _, p in targets]
