"""``ioa-synth evaluate --mode direct|ambiguity`` black-box against three
scripted servers: categories and P/R/F1 as hand-computed, the ambiguity expressions'
overlap with MA surface forms, re-requested unusable expressions, the direct prober's
information access, and ``compare``/``report`` reading a direct run next to an mcq run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from .eval_helpers import STUDY_1, Q, Study, released_case, user_text, write_case
from .test_access import FILTER_SEES, MA_TOKENS, PROBER_SEES, planted_case, seen
from ioa_helpers import one_line_error
from ioa_synth.testing.scripted_server import Reply, chat_reply


@dataclass
class Item:
    """A scripted direct-mode item and the filter's verdict on it."""

    text: str
    meaningful: bool = True
    implicit: bool = True
    redundant_with: int | None = None
    hit: str | None = None


#: A(MA1), A(MA3), B, C not_meaningful, C redundant, C not_implicit over 4 MAs:
#: P = 2/5 = .4, R = 2/4 = .5, F1 = 2(.4)(.5)/.9 = .4444.
ITEMS = [Item("They read the first item differently", hit="MA1"), Item("Second suspected gap", hit="MA3"),
         Item("Third suspected gap"), Item("Fourth suspected gap", meaningful=False, hit="MA2"),
         Item("Fifth suspected gap, same as the first", redundant_with=1, hit="MA1"),
         Item("Sixth suspected gap", implicit=False, hit="MA4")]

#: Ambiguity MCQs: A(MA1), C not_diverging, A(MA2), B over 4 MAs: P = 2/3, R = .5, F1 = .5714.
#: Question i names expression i (EXPRESSIONS), as the ambiguity prober must.
AMB_QUESTIONS = [Q("What does 'learn Torch' commit us to?", "A", "B", hit="MA1"),
                 Q("Who runs the nightly build?", "A", "A"), Q("What is the budget?", "B", "C", hit="MA2"),
                 Q("What exactly stays?", "A", "C")]

#: The four expressions picked and the MAs whose surface form each overlaps (see ambiguous_case).
EXPRESSIONS = [("learn Torch", 1, {"MA1": 1.0}), ("nightly build", 1, {}), ("the budget", 2, {"MA2": 1.0}),
               ("stays", 2, {})]


def ambiguous_case() -> dict[str, Any]:
    case = released_case(tag=" AMBIG")
    forms = ["learn Torch first", "the budget is flexible", "a quick review", "ship it on Friday"]
    for ma, form in zip(case["profiles"]["misalignment_points"], forms):
        ma["surface_form"] = form
    turns = case["dialogue"]["turns"]
    turns[0]["utterance"] = "We should learn Torch first and keep the nightly build."
    turns[1]["utterance"] = "Agreed, the nightly build stays and the Budget is flexible."
    return case


class ModeStudy(Study):
    """:class:`Study` plus the direct prober and item filter, and the ambiguity prober's two calls."""

    def __init__(self, questions: list[Q], items: list[Item] | None = None,
                 expressions: list[list[tuple[str, int]]] | None = None) -> None:
        super().__init__(questions)
        self.items = items or []
        self.expression_replies = list(expressions or [])

    def prober(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        text = user_text(body)
        if '"items"' in text:
            return chat_reply(json.dumps({"items": [{"description": i.text} for i in self.items]}))
        if '"expressions"' in text:
            picked = (self.expression_replies.pop(0) if len(self.expression_replies) > 1
                      else self.expression_replies[0])
            return chat_reply(json.dumps({"expressions": [{"expression": e, "turn": t} for e, t in picked]}))
        return super().prober(body, headers)

    def filter(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        text = user_text(body)
        shown = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^Item (\d+): (.+)$", text, re.M)]
        if not shown:
            return super().filter(body, headers)
        by_text = {i.text: i for i in self.items}
        return chat_reply(json.dumps({"judgements": [
            {"question": n, "is_meaningful": by_text[d].meaningful, "is_implicit": by_text[d].implicit,
             "redundant_with": by_text[d].redundant_with, "hits_ground_truth": by_text[d].hit} for n, d in shown]}))


def evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "1", *extra)


def test_direct_mode_categories_metrics_and_record_shape(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "business/troubleshooting_010.json", released_case())
    t = trio(ModeStudy([], items=ITEMS))
    out = tmp_path / "direct"
    res = evaluate(cli, data, out, "--mode", "direct")
    assert res.exit_code == 0, res.output
    assert t.counts() == (1, 0, 1)  # no simulator step
    assert "Item 6: Sixth suspected gap" in user_text(t.validity_filter.requests[0]["body"])
    fmt = t.validity_filter.requests[0]["body"]["response_format"]
    judgements = (fmt.get("json_schema") or {}).get("schema", fmt.get("schema"))["properties"]["judgements"]
    assert (judgements["minItems"], judgements["maxItems"]) == (6, 6)  # constrained to the items shown
    assert judgements["items"]["properties"]["question"]["enum"] == [1, 2, 3, 4, 5, 6]
    rec = json.loads((out / "records/business/troubleshooting_010.json").read_text())
    assert rec["status"] == "scored" and rec["mode"] == "direct"
    assert [(q["category"], q["reason"], q["ma_id"]) for q in rec["questions"]] == [
        ("A", None, "MA1"), ("A", None, "MA3"), ("B", None, None), ("C", "not_meaningful", None),
        ("C", "redundant", None), ("C", "not_implicit", None)]
    assert rec["metrics"] == {"precision": 0.4, "recall": 0.5, "f1": 0.4444, "k": 6, "a": 2, "b": 1, "c": 3,
                              "mas_hit": ["MA1", "MA3"], "num_mas": 4}
    assert rec["c_breakdown"] == {"not_diverging": 0, "not_meaningful": 1, "not_implicit": 1, "redundant": 1}
    first = rec["questions"][0]
    assert first["kind"] == "item" and first["question"] == ITEMS[0].text
    assert first["options"] is None and first["answers"] is None and first["divergent"] is None
    assert [c["component"] for c in rec["calls"]] == ["prober", "validity_filter"]
    run = json.loads((out / "run.json").read_text())
    assert set(run["components"]) == {"prober", "validity_filter"} and run["fingerprint_parts"]["mode"] == "direct"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["precision"], summary["recall"], summary["f1"], summary["mode"]) == (0.4, 0.5, 0.4444, "direct")

    # a changed mode on a results folder with results is refused, before any call
    before = t.counts()
    one_line_error(evaluate(cli, data, out, "--mode", "mcq"), "mode", "use a new --out")
    assert t.counts() == before
    # options that need a simulator do not apply to direct
    one_line_error(evaluate(cli, data, tmp_path / "x", "--mode", "direct", "--rollouts", "3"), "--rollouts")
    one_line_error(evaluate(cli, data, tmp_path / "x", "--mode", "nope"), "--mode must be one of")


def test_ambiguity_mode_metrics_overlap_and_re_requested_expression(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", ambiguous_case())
    good = [(e, t) for e, t, _ in EXPRESSIONS]
    not_said = [("learn Torch", 1), ("a quick review", 3), ("the budget", 2), ("stays", 2)]  # MA3's form, never said
    t = trio(ModeStudy(AMB_QUESTIONS, expressions=[not_said, good]))
    out = tmp_path / "amb"
    res = evaluate(cli, data, out, "--mode", "ambiguity")
    assert res.exit_code == 0, res.output
    # the unusable selection is asked again; then one MCQ call; two simulator calls; one filter call
    assert t.counts() == (3, 2, 1)
    mcq_prompt = user_text(t.prober.requests[2]["body"])
    assert 'Expression 1 (turn 1): "learn Torch"' in mcq_prompt and 'Expression 4 (turn 2): "stays"' in mcq_prompt
    rec = json.loads((out / "records/ml_research/planning_000.json").read_text())
    assert rec["status"] == "scored" and rec["mode"] == "ambiguity"
    assert [(e["expression"], e["turn"], e["overlaps_ma"], e["overlaps"]) for e in rec["expressions"]] == [
        (e, t, hits, bool(hits)) for e, t, hits in EXPRESSIONS]
    tries = [(c["component"], c["try_index"], c["error"] is not None) for c in rec["calls"]]
    assert tries[:3] == [("prober", 0, True), ("prober", 1, False), ("prober", 0, False)]
    assert "does not occur verbatim in turn 3" in rec["calls"][0]["error"]
    assert [q["category"] for q in rec["questions"]] == ["A", "C", "A", "B"]
    assert all(q["kind"] == "question" for q in rec["questions"])
    assert rec["metrics"] == {"precision": 0.6667, "recall": 0.5, "f1": 0.5714, "k": 4, "a": 2, "b": 1, "c": 1,
                              "mas_hit": ["MA1", "MA2"], "num_mas": 4}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["expressions"] == {"selected": 4, "overlapping_ma": 2, "share": 0.5}


def test_ambiguity_reply_with_three_questions_fails_the_case_after_retries(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "ml_research/planning_000.json", ambiguous_case())
    t = trio(ModeStudy(AMB_QUESTIONS[:3], expressions=[[(e, t) for e, t, _ in EXPRESSIONS]]))
    out = tmp_path / "amb"
    assert evaluate(cli, data, out, "--mode", "ambiguity").exit_code == 1  # a failed case exits 1
    rec = json.loads((out / "records/ml_research/planning_000.json").read_text())
    assert rec["status"] == "failed" and "one question per expression" in rec["error"]
    assert t.counts()[1:] == (0, 0)


@pytest.mark.parametrize("mode", ["direct", "ambiguity"])
@pytest.mark.parametrize("access", ["public", "private+thoughts"])
def test_prober_information_access_in_other_modes(mode, access, cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "law/planning_001.json", planted_case())
    picked = [("<<TURN_1_UTTERANCE>>", 1), ("<<TURN_2_UTTERANCE>>", 2), ("<<TURN_3_UTTERANCE>>", 3),
              ("<<TURN_4_UTTERANCE>>", 4)]
    # question i names expression i in words, without its <<...>> marks (so no planted token leaks)
    about = [Q(f"What is meant by turn {i} utterance?", q.m1, q.m2, hit=q.hit) for i, q in enumerate(AMB_QUESTIONS, 1)]
    t = trio(ModeStudy(about, items=ITEMS[:2], expressions=[picked]))
    res = evaluate(cli, data, tmp_path / "out", "--mode", mode, "--access", access)
    assert res.exit_code == 0, res.output
    assert len(t.prober.requests) == (1 if mode == "direct" else 2)
    for r in t.prober.requests:
        assert seen(r) == PROBER_SEES[access] and not seen(r) & MA_TOKENS
    assert len(t.simulator.requests) == (0 if mode == "direct" else 2)
    assert [seen(r) for r in t.validity_filter.requests] == [FILTER_SEES]


def test_compare_and_report_read_a_direct_run_next_to_an_mcq_run(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "business/troubleshooting_010.json", released_case())
    write_case(data, "law/planning_003.json", released_case(tag=" TWO"))
    trio(ModeStudy(STUDY_1, items=ITEMS))
    mcq, direct = tmp_path / "mcq", tmp_path / "direct"
    assert evaluate(cli, data, mcq).exit_code == 0
    assert evaluate(cli, data, direct, "--mode", "direct").exit_code == 0
    res = cli("compare", mcq, direct, "--json", "--resamples", "200", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    assert (result["a"]["mode"], result["b"]["mode"]) == ("mcq", "direct")
    f1 = result["bootstrap"]["metrics"]["f1"]  # mcq .8889 and direct .4444 on both dialogues
    assert (f1["mean_a"], f1["mean_b"]) == pytest.approx((0.8889, 0.4444))
    assert f1["diff"] == pytest.approx(0.4444 - 0.8889)
    assert result["c_breakdown"]["b"]["redundant"]["count"] == 2
    assert result["rerun"]["kind"] is None and result["consistency"] is None
    rep = cli("report", direct, "--json")
    assert rep.exit_code == 0, rep.output
    report = json.loads(rep.stdout)
    assert report["results"]["mode"] == "direct"
    assert report["overall"]["f1"] == pytest.approx(0.4444) and report["overall"]["mean_k"] == 6
    assert report["c_breakdown"]["not_diverging"]["count"] == 0


def test_questions_from_a_direct_run_is_refused_before_any_call_or_write(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "business/troubleshooting_010.json", released_case())
    t = trio(ModeStudy(STUDY_1, items=ITEMS))
    direct = tmp_path / "direct"
    assert evaluate(cli, data, direct, "--mode", "direct").exit_code == 0
    before = t.counts()
    out = tmp_path / "reuse"
    one_line_error(evaluate(cli, data, out, "--questions-from", direct), f"--questions-from {direct}",
                   "--mode direct results folder", "--mode mcq or ambiguity")
    assert t.counts() == before and not out.exists()  # nothing asked, nothing written: --out stays free
    one_line_error(evaluate(cli, data, tmp_path / "y", "--mode", "ambiguity", "--questions-from", direct),
                   "--questions-from", "--mode mcq")


def test_expression_overlap_normaliser():
    from ioa_synth.probing.text import content_tokens, overlapping_mas, token_overlap

    assert content_tokens("Let's learn  Torch first!") == {"learn", "torch", "first"}
    assert content_tokens("Déjà-vu of the Budget") == {"deja", "vu", "budget"}
    assert token_overlap("the budget", "The BUDGET is flexible") == 1.0  # {budget} vs {budget, flexible}
    assert token_overlap("nightly build", "learn Torch first") == 0.0
    assert token_overlap("the", "the plan") == 0.0  # function words alone never overlap
    assert overlapping_mas("quick review of the plan", {"MA1": "a quick review", "MA2": "plan B later",
                                                        "MA3": "review the budget"}) == {"MA1": 1.0, "MA3": 0.5}
