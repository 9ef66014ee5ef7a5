"""Stage-2 gates on whose mind a line or thought speaks from (paper App. B.4, stage 2: "the
author is omniscient; each character is not"; utterances carry a topic only through the
shared surface phrase, inner thoughts state the speaker's own reading).

- :func:`crossed_thoughts`: a speaker's inner thought that holds the *other* member's
  reading of a point, private state or hidden assumption. A person who thinks the other's
  reading has noticed the gap, so the misalignment is no longer hidden, and the record's
  thoughts contradict its profiles. Seen in a case the 1.5B judge accepted at its maximum
  (a clean-clone demo run, 2026-12-07): M2 thought M1's reading of MA2 word for word, and M1
  thought one of M2's hidden assumptions.
- :func:`defined_aloud`: an utterance that says a surface form and then what it means
  ("the degree of correctness in forecasting refers to how accurate ..."): the phrase is
  accepted without anyone saying what it means (the same case's third line).

Both compare word runs as the utterance leak gate does (:data:`GateThresholds.private_ngram_words`
stemmed content words; runs at least half made of surface-form words are exempt).
"""

from __future__ import annotations

import re
from typing import Any

from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates_text import current_language, ngrams, stems
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

#: What a speaker says right after a surface form to define it (English builds only).
_DEFINES = re.compile(r"[\s,]*(?:here\s+)?(?:refers to|means|stands for|is defined as|is understood as)\b",
                      re.IGNORECASE)


def _grams(text: str, n: int, surface: set[str]) -> set[tuple[str, ...]]:
    return {g for g in ngrams(stems(text), n) if 2 * sum(w in surface for w in g) < n}


def member_private(profiles: Stage1Output, private: list[tuple[str, set]], n: int) -> dict[str, list[tuple[str, set]]]:
    """``{member id: [(field, its word runs of n stems)]}``: each member's readings
    (``member_a`` is the first member's, ``member_b`` the second's) and private state, taken
    from ``private`` (:attr:`ProfileReference.private`, stemmed once), and hidden assumptions.
    Empty unless the profiles are two-person ones."""
    if len(profiles.members) != 2 or not all(hasattr(p, "member_b_understanding")
                                             for p in profiles.misalignment_points):
        return {}
    first, second = (m.id for m in profiles.members)
    owner = {"member_a_understanding": first, "member_b_understanding": second}
    out: dict[str, list[tuple[str, set]]] = {first: [], second: []}
    for field, grams in private:
        who = owner.get(field.split(".", 1)[1]) or field.split(".", 1)[0]
        out[who].append((field, grams))
    for m in profiles.members:
        out[m.id] += [(f"{m.id}.hidden_assumptions[{k}]", ngrams(stems(a), n)) for k, a in enumerate(m.hidden_assumptions)]
    return out


def crossed_thoughts(dialogue: Stage2Output, by_member: dict[str, list[tuple[str, set]]], surface: set[str],
                     public: tuple[str, ...], gates: GateThresholds) -> list[str]:
    """``turn k: the inner thought of M2 holds M1's ...`` for each thought sharing a word run
    with the other member's private fields (``by_member``, :func:`member_private`) that is in
    none of the speaker's own and in no public text (``public``: the scenario, roles, topics,
    surface forms; stemmed only on a hit)."""
    n = gates.private_ngram_words
    out: list[str] = []
    said_in_public: set | None = None
    for t in dialogue.turns:
        if t.speaker_id not in by_member:
            continue
        (other,) = (i for i in by_member if i != t.speaker_id)
        mine = set().union(*(g for _, g in by_member[t.speaker_id]))
        thought = _grams(t.inner_thought, n, surface) - mine
        if thought & set().union(*(g for _, g in by_member[other])):
            said_in_public = said_in_public if said_in_public is not None else \
                {g for x in public for g in ngrams(stems(x), n)}
            thought -= said_in_public
        where = next((field for field, grams in by_member[other] if thought & grams), None)
        if where is not None:
            out.append(f"turn {t.turn_idx}: the inner thought of {t.speaker_id} holds {where}, which is {other}'s; "
                       "a thought holds its speaker's own reading, state and premises")
    return out


def defined_aloud(dialogue: Stage2Output, profiles: Any) -> list[str]:
    """``turn k: MA1's phrase is defined aloud`` for an utterance that says a surface form and
    then "refers to", "means", "stands for", "is defined as" or "is understood as" (English
    builds; other languages' builds: none)."""
    if current_language() != "en":
        return []
    out = []
    for t in dialogue.turns:
        low = t.utterance.lower()
        for p in profiles.misalignment_points:
            form = p.surface_form.lower().strip()
            at = low.find(form) if form else -1
            while at >= 0:
                if _DEFINES.match(t.utterance, at + len(form)):
                    out.append(f"turn {t.turn_idx}: {p.id}'s phrase is defined aloud (followed by what it means); "
                               "both people accept the phrase without saying what it means")
                    break
                at = low.find(form, at + 1)
    return out


__all__ = ["crossed_thoughts", "defined_aloud", "member_private"]
