"""What the reward reads from a completion (paper App. D.1): its text (a string or TRL's
conversational messages), the key its calls are stored under, and the result of scoring it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ioa_synth.evaluate.case import EvalSettings
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.replies import Question


@dataclass(frozen=True)
class RewardResult:
    """The reward of one completion: ``f1`` (0.0 when the reply does not parse, ``None``
    when a simulator/filter call failed after its retries), ``precision``/``recall``
    (unrounded), ``k`` questions and |A|/|B|/|C| (``None`` unless scored), ``error`` (why
    the reply did not parse or the call failed) and ``paid`` (fresh calls made for it)."""

    case_id: str
    f1: float | None
    precision: float | None = None
    recall: float | None = None
    k: int | None = None
    a: int | None = None
    b: int | None = None
    c: int | None = None
    error: str | None = None
    paid: int = 0


def completion_text(completion: Any) -> str:
    """The text of a completion: a string (standard format) or TRL's conversational list of
    messages (the assistant messages' contents, text parts joined)."""
    if isinstance(completion, str):
        return completion
    messages = [completion] if isinstance(completion, dict) else completion
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"a completion is a string or a list of messages, not {type(completion).__name__}")
    out = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role", "assistant") != "assistant":
            continue
        content = m.get("content") or ""
        out.append(content if isinstance(content, str) else
                   "".join(p.get("text", "") for p in content if isinstance(p, dict)))
    return "".join(out)


def completion_key(case: EvalCase, questions: list[Question], settings: EvalSettings) -> str:
    """``<case_id>#<16 hex>``: what the calls of a completion are stored under (the case
    file's sha256, the simulator settings and the question set, hashed)."""
    blob = json.dumps([case.sha256, settings.rollouts, settings.permute_seed,
                       [[q.question, q.options] for q in questions]], ensure_ascii=False)
    return f"{case.case_id}#{hashlib.sha256(blob.encode()).hexdigest()[:16]}"
