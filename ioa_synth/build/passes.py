"""The scaffold plan's two-pass stage 2 as the build loop asks it: the prompts and request
schemas of the lines pass and the thoughts pass (:mod:`ioa_synth.protocol.plan_passes`
holds the reply models, the schemas and why).

Under the protocol plan (the paper's method) stage 2 stays one call of
``build/stage2_generator.jinja2``; these templates are the scaffold's alone, and only a
scaffold generator's fingerprint holds them (:mod:`ioa_synth.build.fingerprint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ioa_synth.build.contexts import dialogue_lines_context, dialogue_thoughts_context
from ioa_synth.core.templates import Prompt, render_template
from ioa_synth.protocol.plan_passes import (THOUGHTS_CALL, THOUGHTS_ROLE, DialogueLines, DialogueThoughts, combined,
                                            lines_schema, thoughts_schema)
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

#: The two templates (``build/<file>``); neither name holds ``generator``, so the protocol
#: plan's fingerprint does not change with them.
LINES_TEMPLATE = "build/stage2_lines_scaffold.jinja2"
THOUGHTS_TEMPLATE = "build/stage2_thoughts_scaffold.jinja2"

#: The word the fingerprint picks them by.
SCAFFOLD_WORD = "scaffold"


@dataclass(frozen=True)
class TwoPasses:
    """Stage 2 as two generator calls under plan mode ``mode`` (``scaffold``)."""

    mode: str = "scaffold"
    thoughts_role: str = THOUGHTS_ROLE
    thoughts_call: str = THOUGHTS_CALL

    def applies(self, plan_mode: str) -> bool:
        """Whether a generator under ``plan_mode`` writes stage 2 in two passes."""
        return plan_mode == self.mode

    def lines_request(self, seed: Any, profiles: Stage1Output, previous: str | None,
                      feedback: str | None) -> tuple[Prompt, dict[str, Any]]:
        """The lines pass's prompt and request schema (its reply: :class:`DialogueLines`)."""
        ctx = dialogue_lines_context(seed, profiles, previous, feedback)
        return render_template(LINES_TEMPLATE, **ctx), lines_schema(profiles)

    def thoughts_request(self, profiles: Stage1Output, lines: DialogueLines,
                         feedback: str | None) -> tuple[Prompt, dict[str, Any]]:
        """The thoughts pass's prompt and request schema, from the lines pass's reply."""
        return (render_template(THOUGHTS_TEMPLATE, **dialogue_thoughts_context(profiles, lines, feedback)),
                thoughts_schema(profiles, lines))

    @staticmethod
    def parse_lines(data: Any) -> DialogueLines:
        """The lines pass's reply (raises ``ValueError`` when it does not parse)."""
        return DialogueLines.model_validate(data)

    @staticmethod
    def parse_thoughts(lines: DialogueLines, data: Any) -> Stage2Output:
        """The dialogue of ``lines`` with the thoughts pass's reply ``data``."""
        return combined(lines, DialogueThoughts.model_validate(data))


__all__ = ["LINES_TEMPLATE", "SCAFFOLD_WORD", "THOUGHTS_TEMPLATE", "TwoPasses"]
