"""Stage-2 gates on how the lines and inner thoughts are written (the rest of the gates:
:mod:`ioa_synth.protocol.gates`): a surface form pasted onto a line instead of said in a
sentence, the prompt's outline marker copied into the text, an utterance repeating an
earlier one, an inner thought repeating a spoken line. Each returns its failure sentences
(empty when the dialogue passes)."""

from __future__ import annotations

import re

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates_text import current_language, stems
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.text.languages import language
from ioa_synth.text.normalise import jaccard

__all__ = ["pasted_surface_forms", "prompt_markers", "repeats", "thoughts_repeating_lines", "turns_label"]


def turns_label(idx: list[int]) -> str:
    return f"turn{'s' if len(idx) > 1 else ''} {', '.join(map(str, idx))}"


#: A lone letter other than "a" and "I" at the end of the text before a surface form.
_LONE_LETTER = re.compile(r"(?:^|[\s,;:(])[B-HJ-Zb-z]$")

#: An article or possessive that cannot stand right before a phrase that opens with one
#: of :data:`_PHRASE_DETERMINERS` ("I can give you a the PyTorch autograd library").
#: Case as written: "table A" is a label, not an article.
_DETERMINER_BEFORE = re.compile(r"(?:^|\W)(?:a|an|An|[Tt]he|[Oo]ur|[Yy]our|[Tt]heir|[Ii]ts|[Mm]y|[Tt]hese|[Tt]hose)$")
_PHRASE_DETERMINERS = frozenset({"a", "an", "the", "our", "your", "their", "its", "this", "that", "these", "those"})


def pasted_surface_forms(dialogue: Stage2Output, profiles: Stage1Output) -> list[str]:
    """Turns whose utterance has a surface form pasted on rather than said in a sentence: the
    phrase, as written in the profiles, opens a sentence in lower case ("Let's explore this idea.
    our feature extraction pipeline"), is glued to the word before it ("Havethe performance
    metrics?"), starts with a capital the phrase lacks inside a sentence ("the pre A
    collection of ..."), follows a lone letter ("so L our benchmark includes ...") or an
    article when it opens with one ("give you a the PyTorch autograd library"), or closes
    the utterance with no sentence end after it ("... Our model predicts ESG ratings
    accurately"). The 1.5B demo model appended the stage-2 prompt's ``[say "..."]``
    cue to its lines this way, which the coverage check alone counts as said; a writer who
    works the phrase into a sentence capitalises and punctuates it."""
    pasted: list[str] = []
    cjk = language(current_language()).cjk
    for t in dialogue.turns:
        text = t.utterance
        for p in profiles.misalignment_points:
            phrase = p.surface_form.strip()
            for m in re.finditer(re.escape(phrase), text, re.IGNORECASE) if phrase else ():
                before, after = text[:m.start()].rstrip(), text[m.end():]
                opens_lower = (not before or before[-1] in ".!?") and text[m.start()].islower()
                # glued to the word before it ("Havethe performance metrics?"), ending at a word's end
                glued = (m.start() > 0 and text[m.start() - 1].isalnum() and not (after[:1].isalnum())
                         and not cjk)  # Chinese and Japanese write no space before a word
                # a capital the profiles' phrase lacks, inside a sentence ("fine-tune the pre A
                # collection of training data"): the phrase was dropped in, not written
                capital_inside = (bool(before) and (before[-1].isalnum() or before[-1] in ",;")
                                  and text[m.start()].isupper() and phrase[0].islower())
                # a lone letter before it ("so L our benchmark includes ..."): a capital the
                # grammar kept out of the phrase, written as a word of its own
                stray_letter = bool(_LONE_LETTER.search(before))
                # two determiners ("a the PyTorch autograd library", recorded from the demo,
                # 2026-12-07): the phrase was dropped in after an article the line had begun
                doubled = (phrase.split()[0].lower() in _PHRASE_DETERMINERS
                           and bool(_DETERMINER_BEFORE.search(before)))
                if opens_lower or glued or capital_inside or stray_letter or doubled or not after.strip():
                    pasted.append(f"turn {t.turn_idx}")
                    break
    if not pasted:
        return []
    return [f"{', '.join(dict.fromkeys(pasted))}: a surface form is pasted onto the utterance (opening a sentence in "
            "lower case, glued to the word before it, capitalised inside a sentence, after another article, or ending "
            "the utterance without a full stop) instead of said "
            "inside a sentence; work the phrase into what the speaker says"]


#: The scaffold stage-2 prompt's own outline marker (``[say "..." inside a sentence]``; the
#: ``[MA1: ...]`` one is the vocabulary gate's) copied into a line or thought: the 1.5B demo model pasted ``[say 'the aim of the benchmark']
#: inside a sentence`` onto its lines, which no other gate caught (2026-12-06).
_MARKER = re.compile(r"\[\s*say\b|\binside a sentence\b", re.IGNORECASE)


def prompt_markers(dialogue: Stage2Output) -> list[str]:
    marked = [t.turn_idx for t in dialogue.turns if _MARKER.search(t.utterance) or _MARKER.search(t.inner_thought)]
    if not marked:
        return []
    return [f"{turns_label(marked)}: the prompt's outline marker ([say ...], inside a sentence) is copied into the text; "
            "say the phrase in the speaker's own sentence instead"]


def repeats(dialogue: Stage2Output, gates: GateThresholds) -> list[str]:
    seen: list[tuple[int, set[str]]] = []
    repeated: list[str] = []
    for t in dialogue.turns:
        toks = set(stems(t.utterance))
        if len(toks) >= 4:
            idx = _repeated_in(toks, seen, gates)
            if idx is not None:
                repeated.append(f"turn {t.turn_idx} (repeats turn {idx})")
            seen.append((t.turn_idx, toks))
    if not repeated:
        return []
    return [f"utterances repeat earlier ones: {', '.join(repeated)}; every turn must add something new"]


def thoughts_repeating_lines(dialogue: Stage2Output, gates: GateThresholds) -> list[str]:
    """Inner thoughts that repeat an utterance of the dialogue, their own turn's or another's
    (content stems overlapping at :attr:`GateThresholds.repeated_utterance_overlap`, at least
    4 of them): a thought says what the speaker keeps to themselves, not a line. The demo
    model, asked for thoughts beside a finished transcript, wrote each turn's thought as the
    next turn's line."""
    said = [(t.turn_idx, line) for t in dialogue.turns if (line := set(stems(t.utterance)))]
    found: list[str] = []
    for t in dialogue.turns:
        toks = set(stems(t.inner_thought))
        idx = _repeated_in(toks, said, gates) if len(toks) >= 4 else None
        if idx is not None:
            found.append(f"turn {t.turn_idx} (repeats the line of turn {idx})")
    if not found:
        return []
    return [f"inner thoughts repeat a spoken line: {', '.join(found)}; a thought says what its speaker keeps "
            "to themselves at that line"]


def _repeated_in(toks: set[str], texts: list[tuple[int, set[str]]], gates: GateThresholds) -> int | None:
    """The turn of the first of ``texts`` (``(turn, content stems)``) that ``toks`` repeats:
    Jaccard overlap at least :attr:`GateThresholds.repeated_utterance_overlap`; ``None``."""
    return next((idx for idx, other in texts if jaccard(toks, other) >= gates.repeated_utterance_overlap), None)
