"""A case in another language than English (a record of ``build --language``, its
``language`` field): every prompt about it (the prober's, the simulator's, the validity
filter's) says the language and its conventions of indirect disagreement
(:mod:`ioa_synth.text.languages`), so that the questions are asked, and answered, in the
dialogue's language. English cases (no ``language``) get their prompts as before.

The note is the template ``evaluate_language/language_note.jinja2`` (its own namespace, so
that the ``evaluate`` templates, whose hashes every evaluate setup holds, stay as they were);
a ``--prompts`` folder may replace it by that name.
"""

from __future__ import annotations

from pathlib import Path

from ioa_synth.core.templates import Prompt, register_templates, render_template, with_note
from ioa_synth.text.languages import language

#: The namespace of the note's template.
CAPABILITY = "evaluate_language"
#: The note's template.
LANGUAGE_NOTE = f"{CAPABILITY}/language_note.jinja2"


def in_case_language(prompt: Prompt, tag: str | None, component: str) -> Prompt:
    """``prompt`` of ``component`` (``prober``, ``simulator``, ``validity_filter``) about a case
    in ``tag`` (BCP-47): English or ``None`` gives ``prompt`` itself, another language the
    prompt with the note appended (:func:`~ioa_synth.core.templates.with_note`).

    Raises:
        UnknownLanguage: a tag the registry does not serve."""
    lang = language(tag)
    if lang.english:
        return prompt
    return with_note(prompt, render_template(LANGUAGE_NOTE, language=lang, component=component))


register_templates(CAPABILITY, Path(__file__).resolve().parent / "language_templates",
                   renders={"language_note.jinja2": "prober, simulator, validity_filter (a case in another language)"})
