"""The build's prompt templates (``ioa_synth/build/templates/``, App. B): registered with
:mod:`ioa_synth.core.templates` under ``build/`` when the build package is imported, and
their instructions registered with the content gates, which compare generated text with
what the generator prompts say (:func:`ioa_synth.protocol.gates_text.register_instructions`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ioa_synth.core.templates import Prompt, register_templates, render_template, template_prose, with_note
from ioa_synth.protocol.gates_text import register_instructions
from ioa_synth.text.languages import language

#: The capability name of the build's templates (``build/<file>``).
CAPABILITY = "build"

#: (stage, role) -> template name of the build loop.
TEMPLATE_FILES: dict[tuple[int, str], str] = {
    (1, "generator"): "build/stage1_generator.jinja2",
    (1, "judge"): "build/stage1_judge.jinja2",
    (2, "generator"): "build/stage2_generator.jinja2",
    (2, "judge"): "build/stage2_judge.jinja2",
}


#: Templates of the scaffold plan's two-pass stage 2 (:mod:`ioa_synth.build.passes`).
SCAFFOLD_TEMPLATE_FILES = ("build/stage2_lines_scaffold.jinja2", "build/stage2_thoughts_scaffold.jinja2")


def generator_instructions() -> Iterator[str]:
    """The literal text of the generator templates (what the gates' copy check compares with)."""
    for (_, role), name in TEMPLATE_FILES.items():
        if role == "generator":
            yield from template_prose(name)
    for name in SCAFFOLD_TEMPLATE_FILES:
        yield from template_prose(name)


def render(stage: int, role: str, **context: Any) -> Prompt:
    """Render the build template of (``stage``, ``role``) with ``context``.

    Raises:
        KeyError: no template for that stage and role.
        jinja2.UndefinedError: the context lacks a variable the template uses.
    """
    return render_template(TEMPLATE_FILES[(stage, role)], **context)


#: The note a build in another language than English adds to each of its prompts (``build --language``).
LANGUAGE_NOTE = "build/language_note.jinja2"


def with_language(prompt: Prompt, tag: str | None, role: str) -> Prompt:
    """``prompt`` with the :data:`LANGUAGE_NOTE` for ``role`` (``generator`` or a judge)
    appended to its system and user messages: the language to write (or read) and its
    conventions of indirect disagreement (:mod:`ioa_synth.text.languages`). English (or
    ``None``): ``prompt`` itself, byte for byte. The prompt keeps its template's sha256
    (the note's is in the fingerprint of a build in another language).

    Raises:
        UnknownLanguage: a tag the registry does not serve."""
    lang = language(tag)
    if lang.english:
        return prompt
    return with_note(prompt, render_template(LANGUAGE_NOTE, language=lang,
                                             role="generator" if role == "generator" else "judge"))


register_templates(CAPABILITY, Path(__file__).resolve().parent / "templates",
                   renders={"stage1_generator.jinja2": "generator", "stage2_generator.jinja2": "generator",
                            "stage1_judge.jinja2": "judge, audit_judge", "stage2_judge.jinja2": "judge, audit_judge",
                            "stage2_lines_scaffold.jinja2": "generator (scaffold plan)",
                            "stage2_thoughts_scaffold.jinja2": "generator (scaffold plan)",
                            "language_note.jinja2": "generator, judge, audit_judge (--language other than en)"})
register_instructions("build generator templates", generator_instructions)

#: The capability name of the multi-party templates (``build --participants 3..6``,
#: :mod:`ioa_synth.build.stages_multi`): a capability of their own, so that a two-person
#: build's fingerprint, which lists the ``build/`` templates, stays as it was.
MULTI_CAPABILITY = "build_multi"

#: (stage, role) -> template name of a multi-party build.
MULTI_TEMPLATE_FILES: dict[tuple[int, str], str] = {
    (1, "generator"): "build_multi/stage1_generator.jinja2",
    (1, "judge"): "build_multi/stage1_judge.jinja2",
    (2, "generator"): "build_multi/stage2_generator.jinja2",
    (2, "judge"): "build_multi/stage2_judge.jinja2",
}

register_templates(MULTI_CAPABILITY, Path(__file__).resolve().parent / "templates_multi",
                   renders={"stage1_generator.jinja2": "generator (--participants 3-6)",
                            "stage2_generator.jinja2": "generator (--participants 3-6)",
                            "stage1_judge.jinja2": "judge, audit_judge (--participants 3-6)",
                            "stage2_judge.jinja2": "judge, audit_judge (--participants 3-6)"})

#: The capability name of a series' note (``build --meetings 2..5``,
#: :mod:`ioa_synth.build.stages_series`): a capability of its own, so that a one-meeting
#: build's fingerprint, which lists the ``build/`` templates, stays as it was.
SERIES_CAPABILITY = "build_series"

#: The note every prompt of a series adds to its stage's template (the plan, a meeting, the judges).
SERIES_NOTE = "build_series/series_note.jinja2"

register_templates(SERIES_CAPABILITY, Path(__file__).resolve().parent / "templates_series",
                   renders={"series_note.jinja2": "generator, judge, audit_judge (--meetings 2-5)"})
