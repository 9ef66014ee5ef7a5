"""What each prompt of the build loop sees: the jinja2 context of every template
(issue 9.2, after the paper's App. B.4).

| prompt | seed title+abstract | domain, task type | scenario | full profiles | MAs | outline | dialogue |
| --- | --- | --- | --- | --- | --- | --- | --- |
| stage-1 generator (G_participants) | yes | yes | - | - | - | - | - |
| stage-1 judge (J_participants) | yes | yes | yes | yes | yes | - | - |
| stage-2 generator (G_dialogue) | - | - | yes | yes | yes (with topic, why_undetected) | yes | - |
| stage-2 judge (J_dialogue) | yes | yes | yes | yes | yes | yes | yes, with inner thoughts |

The audit judge renders the judge templates with the same contexts. A regeneration
request adds the feedback (what failed) to the generator's context; the templates lead
with it and do not paste the rejected attempt (``previous`` stays in the context for
other templates): the 1.5B demo model copied a pasted attempt almost verbatim (97% the
same text), so the new attempt repeated the failure.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ioa_synth.protocol.cells import MA_TYPES, TASK_TYPES
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple


#: Given and family names the stage-1 generator is asked to use (two per case, see
#: :func:`member_names`): small models otherwise name nearly every pair "John Doe" and
#: "Jane Smith", which the content gates reject as stock placeholders.
GIVEN_NAMES = ("Amara", "Bogdan", "Chiara", "Dmitri", "Esra", "Farid", "Grete", "Hiroshi", "Ines", "Jomo",
               "Kalani", "Leilani", "Mateus", "Nadia", "Oskar", "Priya", "Quentin", "Rania", "Sven", "Tamsin",
               "Ugo", "Valeria", "Wen", "Ximena", "Yusuf", "Zofia", "Anders", "Beatriz", "Cormac", "Dalia")
FAMILY_NAMES = ("Achebe", "Brandt", "Castellanos", "Dvořák", "Eriksen", "Fontaine", "Gupta", "Halvorsen", "Ibarra",
                "Jankowski", "Kowalczyk", "Lindqvist", "Mensah", "Nakamura", "Okafor", "Petrenko", "Quispe",
                "Rahimi", "Sato", "Tiwari", "Ueda", "Varga", "Whitfield", "Xu", "Yilmaz", "Zanetti", "Abara",
                "Bianchi", "Chowdhury", "Delacroix")


def member_names(seed_id: str) -> tuple[str, str]:
    """Two distinct full names for M1 and M2, fixed per seed tuple: picked from
    :data:`GIVEN_NAMES` x :data:`FAMILY_NAMES` by the SHA-256 of ``seed_id``."""
    d = hashlib.sha256(seed_id.encode("utf-8")).digest()
    g1, g2 = d[0] % len(GIVEN_NAMES), d[1] % (len(GIVEN_NAMES) - 1)
    f1, f2 = d[2] % len(FAMILY_NAMES), d[3] % (len(FAMILY_NAMES) - 1)
    g2, f2 = g2 + (g2 >= g1), f2 + (f2 >= f1)
    return f"{GIVEN_NAMES[g1]} {FAMILY_NAMES[f1]}", f"{GIVEN_NAMES[g2]} {FAMILY_NAMES[f2]}"


def _seed(seed: SeedTuple) -> dict[str, Any]:
    return {"seed": seed, "domain": seed.domain, "task_type": seed.task_type,
            "task_description": TASK_TYPES[seed.task_type]}


def generator_context(stage: int, seed: SeedTuple, profiles: Stage1Output | None, previous: str | None,
                      feedback: str | None) -> dict[str, Any]:
    """Context of the stage-``stage`` generator template; ``profiles`` is required for stage 2."""
    ctx: dict[str, Any] = {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS}
    if stage == 1:
        return ctx | _seed(seed) | {"ma_types": MA_TYPES, "names": member_names(seed.seed_id)}
    assert profiles is not None
    return ctx | {"profiles": profiles.model_dump()}


def judge_context(stage: int, seed: SeedTuple, profiles: Stage1Output, dialogue: Stage2Output | None,
                  rubric: Rubric) -> dict[str, Any]:
    """Context of the stage-``stage`` judge template (build and audit judge alike)."""
    ctx = _seed(seed) | {"profiles": profiles.model_dump(), "stage_rubric": rubric.stage(stage),
                         "no_change": rubric.no_change_feedback}
    if stage == 2:
        assert dialogue is not None
        ctx["dialogue"] = dialogue.model_dump()
    return ctx
