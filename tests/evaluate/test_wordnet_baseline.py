"""The lexical baseline of the IoA paper (§5.1, Table 11): ``evaluate --mode wordnet`` picks
the four words of the dialogue with the most WordNet senses, writes one MCQ around each, and
records each word's lexical overlap with the MAs' surface forms, a WordNet synonym counting as
a match. Black-box against the scripted servers, on a six-turn dialogue whose WordNet 3.0
facts are written out in tests/probing/test_wordnet.py (Debian's ``wordnet-base``, read
through nltk), which tests the ranking and the overlap themselves."""

from __future__ import annotations

import json

from .eval_helpers import Q, released_case, user_text, write_case
from .test_modes import ModeStudy, evaluate
from ioa_helpers import one_line_error
from probing.test_wordnet import EXPECTED, TURNS, lexicon  # noqa: F401 - the dialogue, its WordNet picks, WordNet


FORMS = ["the automobile", "bank approval", "a cheap lease", "on Friday"]


def wordnet_case():
    case = released_case(tag=" WN")
    for ma, form in zip(case["profiles"]["misalignment_points"], FORMS):
        ma["surface_form"] = form
    for turn, text in zip(case["dialogue"]["turns"], TURNS):
        turn["utterance"] = text
    return case


#: One MCQ per word, in order: A(MA1), C not_diverging, A(MA2), B over 4 MAs: P = 2/3, R = 2/4, F1 = .5714.
QUESTIONS = [Q("Which bank approves it?", "A", "B", hit="MA1"), Q("Who pays the rent?", "A", "A"),
             Q("How long is the lease?", "B", "C", hit="MA2"), Q("Which car do we mean?", "A", "C")]


def test_wordnet_mode_end_to_end(cli, trio, tmp_path, lexicon):
    data = tmp_path / "data"
    write_case(data, "business/planning_000.json", wordnet_case())
    t = trio(ModeStudy(QUESTIONS))
    out = tmp_path / "wn"
    res = evaluate(cli, data, out, "--mode", "wordnet")
    assert res.exit_code == 0, res.output
    assert t.counts() == (1, 2, 1)  # no selection call: one MCQ call, two simulator calls, one filter call
    prompt = user_text(t.prober.requests[0]["body"])
    assert 'Expression 1 (turn 2): "bank"' in prompt and 'Expression 4 (turn 1): "car"' in prompt
    rec = json.loads((out / "records/business/planning_000.json").read_text())
    assert rec["status"] == "scored" and rec["mode"] == "wordnet"
    assert [(e["expression"], e["turn"], e["overlaps_ma"], e["overlaps"]) for e in rec["expressions"]] == [
        (e, t, hits, True) for e, t, hits in EXPECTED]
    assert rec["metrics"] == {"precision": 0.6667, "recall": 0.5, "f1": 0.5714, "k": 4, "a": 2, "b": 1, "c": 1,
                              "mas_hit": ["MA1", "MA2"], "num_mas": 4}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "wordnet"
    assert summary["expressions"] == {"selected": 4, "overlapping_ma": 4, "share": 1.0}


def test_wordnet_mode_without_the_data_is_one_error_line(cli, trio, tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_case(data, "business/planning_000.json", wordnet_case())
    monkeypatch.setenv("IOA_WORDNET_DIR", str(tmp_path / "no-wordnet"))
    t = trio(ModeStudy(QUESTIONS))
    out = tmp_path / "wn"
    one_line_error(evaluate(cli, data, out, "--mode", "wordnet"), "--mode wordnet", "wordnet-base")
    assert t.counts() == (0, 0, 0) and not out.exists()
