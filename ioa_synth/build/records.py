"""What a case stores as it runs through the two-stage loop (:mod:`ioa_synth.build.pipeline`):
the ``scores`` rows of a judge's verdict, the accepted case's record file (the released
IoA-Suite layout) and the case's status row, the last two written on the catalog's writer
thread (:meth:`~ioa_synth.runs.catalog.Catalog.record_later`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from pydantic_core import to_json

from ioa_synth.protocol.judgement import Judgement
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.core.atomic import write_bytes_atomic
from ioa_synth.runs.recorder import now_utc
from ioa_synth.runs.catalog import Catalog
from ioa_synth.text.languages import DEFAULT_LANGUAGE, language_tag

if TYPE_CHECKING:
    from ioa_synth.build.pipeline import Case, Outcome

#: ``scores.dimension`` of the row flagging an inconsistent verdict (score NULL).
JUDGE_INCONSISTENCY = "judge_inconsistency"


def store_outcome(catalog: Catalog, case: Case, out: Outcome, first_attempt: int,
                  record: Callable[[], bytes] | None = None) -> None:
    """Store the case's outcome: its record file (when accepted) and then its status row,
    both on the catalog's writer thread, in that order, while this worker goes on
    (:meth:`~ioa_synth.runs.catalog.Catalog.record_later`). The record is written
    without fsync; the writer fsyncs it before the status commits."""
    reached = [first_attempt - 1 + n if n else 0 for n in (out.stage1_attempts, out.stage2_attempts)]
    status = (out.status, str(case.path) if out.status == "accepted" else None,
              out.reason if out.status == "discarded" else None, out.reason if out.status == "failed" else None)

    def store() -> list:
        if record is not None:
            write_bytes_atomic(case.path, record(), sync=False)
        return [(None, (
            "UPDATE cases SET status = ?, stage1_attempts = GREATEST(stage1_attempts, ?), "
            "stage2_attempts = GREATEST(stage2_attempts, ?), "
            "path = ?, discard_reason = ?, error = ?, updated_at = ? WHERE case_id = ?",
            [status[0], *reached, *status[1:], now_utc(), case.case_id]))]

    catalog.record_later(store, sync=[case.path] if record is not None else [])


def record_bytes(case: Case, profiles: Stage1Output, dialogue: Stage2Output, quality: dict,
                 language: str | None = None) -> bytes:
    """The accepted case's record file (the released IoA-Suite layout), indented JSON; a case
    of a build in another ``language`` than English ends with ``"language": TAG`` (absent:
    English, so an English record keeps the released layout byte for byte)."""
    turns = [t.model_dump() for t in dialogue.turns]
    record = {
        "case_id": case.case_id,
        "profiles": profiles.model_dump(),
        "dialogue": {"num_turns": len(turns), "turns": turns},
        "seed": case.seed.as_record(),
        "quality": quality,
    }
    tag = language_tag(language)
    if tag != DEFAULT_LANGUAGE:
        record["language"] = tag
    # pydantic-core's encoder: the indented output of json.dumps(indent=2, ensure_ascii=False)
    # from Rust instead of the json module's pure-Python indenting encoder (a tenth of the CPU)
    return to_json(record, indent=2, inf_nan_mode="constants") + b"\n"


def verdict_rows(call_id: str, case_id: str, stage: int, attempt: int, role: str, model: str,
                 j: Judgement) -> list[dict[str, Any]]:
    """The ``scores`` rows of verdict ``j``: one per item and dimension, one per inconsistent
    item (:data:`JUDGE_INCONSISTENCY`) and one for the overall feedback."""
    now = now_utc()
    rows = [{"case_id": case_id, "stage": stage, "attempt": attempt, "judge_role": role, "judge_model": model,
             "item": item, "dimension": dim, "score": score, "feedback": j.feedback.get(item, ""), "created_at": now, "call_id": call_id}
            for item, dims in j.items.items() for dim, score in dims.items()]
    for item in j.inconsistent:
        below_max = ", ".join(f"{d} {s}" for d, s in j.items[item].items())
        rows.append({"case_id": case_id, "stage": stage, "attempt": attempt, "judge_role": role, "judge_model": model,
                     "item": item, "dimension": JUDGE_INCONSISTENCY, "score": None,
                     "feedback": f"feedback claims no change while scores are {below_max}: {j.feedback.get(item, '')}",
                     "created_at": now, "call_id": call_id})
    if j.overall_feedback:
        rows.append({"case_id": case_id, "stage": stage, "attempt": attempt, "judge_role": role, "judge_model": model,
                     "item": "overall", "dimension": "overall_feedback", "score": None,
                     "feedback": j.overall_feedback, "created_at": now, "call_id": call_id})
    return rows

