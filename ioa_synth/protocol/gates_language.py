"""The language gate of a build in another language (``build --language``): a case whose
text is not written in the requested language fails, like any content gate (its one
regeneration, then the discard reason). English builds never run it (the paper's gates are
unchanged).

A text is judged when it is long enough (:data:`ioa_synth.text.detect.MIN_LETTERS`);
names and ids are never judged. The detector is :func:`ioa_synth.text.detect.detector`.
"""

from __future__ import annotations

from typing import Iterable

from ioa_synth.protocol.gates_text import current_language
from ioa_synth.text.detect import detected_language
from ioa_synth.text.languages import DEFAULT_LANGUAGE, language

#: Fields whose text is a name (never judged: a German colleague may be called "Emma Walsh").
_NAMES = ("name", "speaker_name")


def language_failures(fields: Iterable[tuple[str, str]]) -> list[str]:
    """One failure listing every field of ``fields`` (``(where, text)`` pairs) written in
    another language than :func:`~ioa_synth.protocol.gates_text.current_language`, with the
    language it reads as; ``[]`` for English builds and when every text is in the language."""
    tag = current_language()
    if tag == DEFAULT_LANGUAGE:
        return []
    wrong = []
    for where, text in fields:
        if where.rsplit(".", 1)[-1] in _NAMES:
            continue
        found = detected_language(text, tag)
        if found is not None and found != tag:
            wrong.append(f"{where} ({language(found).name})")
    if not wrong:
        return []
    name = language(tag).name
    return [f"text not written in {name} in {', '.join(wrong)}; write every field in {name}"]
