"""Reply schemas and parsers of the study's calls (§3): agent messages, probe answers, the
private belief judge and the public stance judge. A parser raises ``ValueError`` on a
reply that is not the schema's strict JSON or names an unknown label; the client then
asks again (bounded by ``content_retries``) and never guesses."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VERDICTS = ("endorses_true", "endorses_manipulated", "neither", "ambiguous")
#: Reported label of each belief verdict; ``manipulated`` means infected.
LABEL_OF = {"endorses_true": "true", "endorses_manipulated": "manipulated", "neither": "uncertain",
            "ambiguous": "mixed"}
LABELS = ("true", "manipulated", "mixed", "uncertain")
STANCES = ("endorse_manipulated", "reject_manipulated", "hedge_or_partial", "ignore_or_topic_shift", "unrelated")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Message(_Strict):
    message: str = Field(min_length=1)


class Answer(_Strict):
    answer: str = Field(min_length=1)


class Verdict(_Strict):
    verdict: Literal["endorses_true", "endorses_manipulated", "neither", "ambiguous"]
    confidence: float = Field(ge=0, le=1)
    rationale: str


class Stance(_Strict):
    stance: Literal["endorse_manipulated", "reject_manipulated", "hedge_or_partial", "ignore_or_topic_shift",
                    "unrelated"]
    mentions_claim: bool
    exposed_to_manipulated: bool
    confidence: float = Field(ge=0, le=1)
    rationale: str


class WrittenText(_Strict):
    true_statement: str = Field(min_length=1)
    manipulated_statement: str = Field(min_length=1)
    discussion_seed: str = Field(min_length=1)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent with a request (no titles, closed objects)."""
    props = {name: _prop(f.annotation) for name, f in model.model_fields.items()}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _prop(annotation: Any) -> dict[str, Any]:
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is float:
        return {"type": "number", "minimum": 0, "maximum": 1}
    if getattr(annotation, "__origin__", None) is Literal:
        return {"type": "string", "enum": list(annotation.__args__)}
    return {"type": "string"}


def _lenient_numbers(data: Any) -> Any:
    """JSON has one number type: an integer confidence (``1``) is a float here."""
    if isinstance(data, dict) and isinstance(data.get("confidence"), int) and not isinstance(data["confidence"], bool):
        return data | {"confidence": float(data["confidence"])}
    return data


def parser(model: type[_Strict]):
    """``parse(decoded_json) -> model`` raising ``ValueError`` (pydantic) on any deviation."""
    return lambda data: model.model_validate(_lenient_numbers(data))


SCHEMAS = {"belief_message": schema_of(Message), "belief_answer": schema_of(Answer),
           "belief_verdict": schema_of(Verdict), "belief_stance": schema_of(Stance),
           "belief_item_text": schema_of(WrittenText)}
