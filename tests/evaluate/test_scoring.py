"""Scoring and reply-shape units: the paper's case studies (App. E.1), the C-reason
order, and replies that must be refused rather than guessed."""

from __future__ import annotations

import pytest

from ioa_synth.evaluate.replies import parse_answers, parse_judgements
from ioa_synth.probing.replies import parse_questions
from ioa_synth.evaluate.scoring import c_breakdown, categorize, dialogue_metrics, summarize
from ioa_synth.evaluate.simulator import modal

MAS = ["MA1", "MA2", "MA3", "MA4"]


def test_case_study_aaaac():
    m = dialogue_metrics([("A", "MA1"), ("A", "MA2"), ("A", "MA3"), ("A", "MA4"), ("C", None)], MAS)
    assert (m["precision"], m["recall"], m["f1"]) == (0.8, 1.0, 0.8889)
    assert (m["k"], m["a"], m["b"], m["c"], m["mas_hit"]) == (5, 4, 0, 1, MAS)


def test_case_study_two_mas_hit_with_b_excluded():
    m = dialogue_metrics([("A", "MA2"), ("A", "MA3"), ("B", None), ("C", None), ("C", None)], MAS)
    assert (m["precision"], m["recall"], m["f1"], m["b"]) == (0.5, 0.5, 0.5, 1)


def test_twelve_questions_none_a_and_no_questions_give_zero():
    m = dialogue_metrics([("C", None)] * 10 + [("B", None)] * 2, MAS)
    assert (m["precision"], m["recall"], m["f1"], m["k"]) == (0, 0, 0, 12)
    m = dialogue_metrics([], MAS)
    assert (m["precision"], m["recall"], m["f1"], m["k"]) == (0, 0, 0, 0)
    m = dialogue_metrics([("B", None)], MAS)  # only B: P's denominator is zero
    assert m["precision"] == 0


def test_two_a_on_one_ma_count_once_in_recall():
    m = dialogue_metrics([("A", "MA1"), ("A", "MA1")], MAS)
    assert (m["precision"], m["recall"], m["mas_hit"]) == (1.0, 0.25, ["MA1"])


def test_c_reasons_are_checked_in_order():
    j = {"is_meaningful": False, "is_implicit": False, "redundant_with": 1, "hits_ground_truth": "MA1"}
    assert categorize(False, j) == ("C", "not_diverging", None)
    assert categorize(True, j) == ("C", "not_meaningful", None)
    assert categorize(True, j | {"is_meaningful": True}) == ("C", "not_implicit", None)
    assert categorize(True, j | {"is_meaningful": True, "is_implicit": True}) == ("C", "redundant", None)
    ok = {"is_meaningful": True, "is_implicit": True, "redundant_with": None}
    assert categorize(True, ok | {"hits_ground_truth": "MA2"}) == ("A", None, "MA2")
    assert categorize(True, ok | {"hits_ground_truth": None}) == ("B", None, None)
    with pytest.raises(ValueError):
        categorize(True, None)
    assert c_breakdown(["redundant", None, "redundant"]) == {"not_diverging": 0, "not_meaningful": 0,
                                                             "not_implicit": 0, "redundant": 2}


def test_summary_means_over_scored_dialogues_and_type_recall():
    def rec(domain, p, r, f1, hit, types):
        return {"status": "scored", "domain": domain, "task_type": "planning",
                "case_id": f"test/{domain}/planning_{len(hit)}",
                "metrics": {"precision": p, "recall": r, "f1": f1, "k": 5, "a": len(hit), "b": 1, "c": 1, "mas_hit": hit,
                            "num_mas": len(types)},
                "misalignment_points": [{"id": f"MA{i + 1}", "type": t} for i, t in enumerate(types)],
                "c_breakdown": {"not_diverging": 1, "not_meaningful": 0, "not_implicit": 0, "redundant": 0}}

    records = [rec("law", 0.8, 1.0, 0.8889, ["MA1", "MA2"], ["definitional", "scopal"]),
               rec("law", 0.5, 0.5, 0.5, ["MA1"], ["definitional", None]),
               {"status": "failed", "domain": "law", "task_type": "planning"}]
    s = summarize(records, requested=4, setup={"mode": "mcq", "access": "public", "rollouts": 1, "permute_seed": None})
    assert s["complete"] is False and s["cases"] == {"requested": 4, "scored": 2, "failed": 1}
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((0.65, 0.75, 0.6944), abs=1e-4)
    assert s["type_recall"] == {"definitional": {"hit": 2, "total": 2, "recall": 1.0},
                                "scopal": {"hit": 1, "total": 1, "recall": 1.0},
                                "untyped": {"hit": 0, "total": 1, "recall": 0.0}}  # as report --by type counts it
    assert s["by_domain"]["law"] == {"cases": 2, "precision": 0.65, "recall": 0.75, "f1": s["f1"]}
    assert s["c_breakdown"]["not_diverging"] == 2 and s["mean_b"] == 1.0


def test_modal_answer_and_consistency():
    assert modal(["A", "B", "A"]) == ("A", 0.6667)
    assert modal(["B", "A"]) == ("B", 0.5)  # a tie goes to the first rollout's answer


@pytest.mark.parametrize("reply, needle", [
    ({"questions": [{"question": "q", "options": {"A": "x"}}]}, "2-5"),
    ({"questions": [{"question": "q", "options": {"A": "x", "C": "y"}}]}, "lettered"),
    ({"questions": [{"question": " ", "options": {"A": "x", "B": "y"}}]}, "blank"),
    # the reply shape copied by a small model is not a question
    ({"questions": [{"question": "<stem>", "options": {"A": "<text>", "B": "<text>"}}]}, "placeholder"),
    ({"questions": [{"question": "Which release?", "options": {"A": "1.2", "B": "..."}}]}, "placeholder"),
    ({"question": []}, "questions"),
])
def test_prober_replies_that_break_the_shape(reply, needle):
    with pytest.raises(ValueError, match=needle):
        parse_questions(reply)


def test_prober_may_ask_nothing():
    assert parse_questions({"questions": []}) == []


@pytest.mark.parametrize("answers, needle", [
    ([{"question": 1, "option": "A"}], "not answered"),
    ([{"question": 1, "option": "A"}, {"question": 1, "option": "B"}], "twice"),
    ([{"question": 1, "option": "A"}, {"question": 2, "option": "C"}], "no option"),
    ([{"question": 1, "option": "A"}, {"question": 3, "option": "A"}], "unknown question"),
])
def test_simulator_must_answer_every_question_once_with_an_offered_letter(answers, needle):
    with pytest.raises(ValueError, match=needle):
        parse_answers({"answers": answers}, ["ABC", "AB"])
    assert parse_answers({"answers": [{"question": 2, "option": "B"}, {"question": 1, "option": "C"}]},
                         ["ABC", "AB"]) == {1: "C", 2: "B"}


def _j(n, **kw):
    return {"question": n, "is_meaningful": True, "is_implicit": True, "redundant_with": None,
            "hits_ground_truth": None} | kw


@pytest.mark.parametrize("judgements, needle", [
    ([_j(2, hits_ground_truth="MA7"), _j(5)], "not one of"),
    ([_j(2)], "not judged"),
    ([_j(2), _j(5), _j(3)], "not shown"),
    ([_j(2), _j(5, redundant_with=3)], "earlier shown"),
    ([_j(2, redundant_with=5), _j(5)], "earlier shown"),
])
def test_filter_replies_that_are_unusable(judgements, needle):
    with pytest.raises(ValueError, match=needle):
        parse_judgements({"judgements": judgements}, [2, 5], ["MA1", "MA2"])
    ok = parse_judgements({"judgements": [_j(2, hits_ground_truth="MA1"), _j(5, redundant_with=2)]}, [2, 5], ["MA1"])
    assert ok[2].hits_ground_truth == "MA1" and ok[5].redundant_with == 2


def test_fingerprint_parts_keep_no_credentials_and_cover_the_setup():
    from pathlib import Path

    from ioa_synth.evaluate.case import EvalSettings
    from ioa_synth.evaluate.inputs import load_cases
    from ioa_synth.evaluate.run import EvalJob, component_settings, fingerprint_parts
    from ioa_synth.llm.client import Endpoint
    from ioa_synth.llm.config import ComponentConfig

    sample = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"
    cases = load_cases(sample)
    ep = Endpoint.from_config("prober", ComponentConfig(), "https://user:s3cret-token@llm.example.org:8443/v1?key=abc",
                              "m", "sk-secret-key", embedded=False)
    job = EvalJob(cases=cases, all_cases=cases, settings=EvalSettings(access="thoughts", rollouts=3, permute_seed=5))
    parts = fingerprint_parts({"prober": ep}, job)
    text = str(parts) + str(component_settings(ep))
    assert "s3cret" not in text and "sk-secret" not in text and "key=abc" not in text
    assert "base_url" not in parts["components"]["prober"]  # another host or port resumes
    assert parts["components"]["prober"]["model"] == "m"
    assert (parts["access"], parts["rollouts"], parts["permute_seed"], parts["mode"]) == ("thoughts", 3, 5, "mcq")
    assert parts["inputs"] == {"software_engineering/troubleshooting_001.json": cases[0].sha256}
    assert component_settings(ep)["base_url_kind"] == "remote" and component_settings(ep)["temperature"] == 0.7
