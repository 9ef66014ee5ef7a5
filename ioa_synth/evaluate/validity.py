"""The validity filter (paper §4.2): judges only the divergent questions,
with both participants' answers, against the ground truth; in the ``direct`` mode
it judges every free-text item instead."""

from __future__ import annotations

from typing import Any

from ioa_synth.evaluate.access import filter_context
from ioa_synth.evaluate.multiparty import TEMPLATES as MULTI, diverges, is_multi, multi_filter_context
from ioa_synth.evaluate.replies import FilterReply, Judgement, parse_judgements
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.replies import Question
from ioa_synth.llm.client import LLMClient
from ioa_synth.core.templates import render_template
from ioa_synth.protocol.schemas import request_schema_copy

TEMPLATE = "evaluate/validity_filter.jinja2"


def judgement_schema(numbers: list[int]) -> dict[str, Any]:
    """The :class:`FilterReply` JSON schema narrowed to the ``numbers`` shown: exactly
    ``len(numbers)`` judgements whose ``question`` is one of them, so that constrained
    decoding cannot judge an unshown question (the reply is still checked by
    :func:`parse_judgements`)."""
    schema = request_schema_copy(FilterReply)
    judgements = schema["properties"]["judgements"]
    judgements["minItems"] = judgements["maxItems"] = len(numbers)
    judgements["items"]["properties"]["question"]["enum"] = list(numbers)
    return schema


def judge_divergent(case: EvalCase, questions: list[Question], chosen: dict[str, dict[int, str]],
                    client: LLMClient, calls: CaseCalls) -> dict[int, Judgement]:
    """``{original question number: Judgement}`` for the questions where M1's and M2's
    (modal) options differ (in a multi-party case: where not every participant chose the
    same option), in one call; no call when none differs.

    Raises:
        ioa_synth.llm.client.LLMCallError: no usable filter reply (an unknown MA id, a
            missing or extra judgement, a bad ``redundant_with`` are unusable replies).
    """
    divergent = [n for n in range(1, len(questions) + 1) if diverges({p: chosen[p][n] for p in chosen})]
    if not divergent:
        return {}
    if is_multi(case):  # every participant's answer, one by one, and each point's sides
        shown = [{"number": n, "question": questions[n - 1].question, "options": questions[n - 1].options,
                  "answers": {p: chosen[p][n] for p in chosen}} for n in divergent]
        prompt = render_template(MULTI["filter"], **multi_filter_context(case), questions=shown)
    else:
        shown = [{"number": n, "question": questions[n - 1].question, "options": questions[n - 1].options,
                  "m1": chosen["M1"][n], "m2": chosen["M2"][n]} for n in divergent]
        prompt = render_template(TEMPLATE, **filter_context(case), questions=shown)
    ma_ids = case.ma_ids
    return calls.call(client, "validity_filter", None, 1, prompt, judgement_schema(divergent),
                      lambda d: parse_judgements(d, divergent, ma_ids))


ITEMS_TEMPLATE = "evaluate/validity_filter_items.jinja2"


def judge_items(case: EvalCase, items: list[Question], client: LLMClient, calls: CaseCalls) -> dict[int, Judgement]:
    """``{item number: Judgement}`` for every free-text item of the ``direct`` mode,
    in one call (attempt 1), with the same reply shape and checks as for questions; no
    call when there is no item. Nothing diverges mechanically here: the filter alone
    decides whether an item is attributed to an MA (``hits_ground_truth``) or rejected.

    Raises:
        ioa_synth.llm.client.LLMCallError: no usable filter reply.
    """
    if not items:
        return {}
    numbers = list(range(1, len(items) + 1))
    shown = [{"number": n, "description": items[n - 1].question} for n in numbers]
    prompt = (render_template(MULTI["items"], **multi_filter_context(case), items=shown) if is_multi(case)
              else render_template(ITEMS_TEMPLATE, **filter_context(case), items=shown))
    ma_ids = case.ma_ids
    return calls.call(client, "validity_filter", None, 1, prompt, judgement_schema(numbers),
                      lambda d: parse_judgements(d, numbers, ma_ids))
