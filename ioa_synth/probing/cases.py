"""The case a prober reads (paper App. B.4): a set of lenient pydantic models of a case
file, in this toolkit's record format or in the released IoA-Suite format. Extra keys are
ignored, ``meeting_scenario`` may be a string or an object, a misalignment point may lack
``type``, and ``seed``/``quality`` may be absent; a field the protocol needs is required
(reading and refusing files: :mod:`ioa_synth.evaluate.inputs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ioa_synth.protocol.cells import MA_TYPES
from ioa_synth.protocol.schemas import scenario_text


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class EvalMember(_Lenient):
    """A participant (the paper's p_i): public profile plus private agenda and tacit assumptions."""

    id: str
    name: str
    role: str
    expertise: str
    background: str
    private_state: str
    hidden_assumptions: list[str]


class EvalMA(_Lenient):
    """A misalignment point; ``type`` is ``None`` in the released data (no taxonomy label)."""

    id: str
    type: str | None = None
    topic: str
    surface_form: str
    member_a_understanding: str
    member_b_understanding: str
    why_undetected: str
    #: multi-party cases only (``build --participants N``): who holds each reading, and who neither
    between: dict[str, list[str]] | None = None
    neutral: list[str] | None = None
    #: series of meetings only (``build --meetings K``): the meeting the point is planted in,
    #: and the one it surfaces in (``None``: latent through the last)
    planted_in: int | None = None
    surfaces_in: int | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, v: Any) -> Any:
        if v is None:
            return None
        v = str(v).strip().lower()
        if v not in MA_TYPES:
            raise ValueError(f"type must be one of {', '.join(MA_TYPES)}")
        return v


class EvalProfiles(_Lenient):
    """``profiles`` of a case; ``conversation_outline`` is not read (no component sees it)."""

    meeting_scenario: str = ""
    members: list[EvalMember]
    misalignment_points: list[EvalMA]

    @field_validator("meeting_scenario", mode="before")
    @classmethod
    def _scenario(cls, v: Any) -> Any:
        return scenario_text(v)


class EvalTurn(_Lenient):
    """One dialogue turn; ``speaker_name`` falls back to the member's name when absent."""

    turn_idx: int
    speaker_id: str
    speaker_name: str | None = None
    inner_thought: str
    utterance: str
    #: the meeting of a series the turn belongs to (``build --meetings K``; ``None``: one meeting)
    meeting: int | None = None


class EvalDialogue(_Lenient):
    """``dialogue`` of a case: its ordered turns (``num_turns`` is not needed)."""

    turns: list[EvalTurn]


class EvalCaseFile(_Lenient):
    """A case file: ``profiles`` + ``dialogue``; ``seed`` optional."""

    profiles: EvalProfiles
    dialogue: EvalDialogue
    seed: dict[str, Any] | None = None
    #: the language of a ``build --language`` record (BCP-47; absent: English)
    language: str | None = None


@dataclass
class EvalCase:
    """One case to evaluate.

    ``case_id``: path relative to ``--data`` without ``.json`` (e.g.
    ``business/troubleshooting_010``); ``domain``/``task_type`` from ``seed``, else from
    the path, else ``"unknown"``; ``sha256`` of the file bytes (fingerprint).
    """

    case_id: str
    source_file: str
    domain: str
    task_type: str
    sha256: str
    profiles: EvalProfiles
    turns: list[EvalTurn]
    #: the case's language (its record's ``language``; ``None``: English, the paper's)
    language: str | None = None
    #: a probe of a series after this meeting (its turns are those of meetings 1..meeting,
    #: its points those live after it; :mod:`ioa_synth.evaluate.series`), or ``None``
    meeting: int | None = None
    #: point id -> meetings since it was planted (a series probe only)
    ages: dict[str, int] | None = None

    def member(self, member_id: str) -> EvalMember:
        """The member with id ``member_id`` (``M1``/``M2``, or up to ``M6`` in a multi-party case)."""
        return next(m for m in self.profiles.members if m.id == member_id)

    @property
    def ma_ids(self) -> list[str]:
        """Ids of the misalignment points, in file order."""
        return [p.id for p in self.profiles.misalignment_points]
