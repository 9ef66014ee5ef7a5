"""The lexical baseline of the IoA paper (§5.1, Table 11): ``evaluate --mode wordnet`` picks
the four words of the dialogue with the most WordNet senses, writes one MCQ around each, and
records each word's lexical overlap with the MAs' surface forms, a WordNet synonym counting as
a match. Black-box against the scripted servers, on a six-turn dialogue whose WordNet 3.0
facts are written out below (Debian's ``wordnet-base``, read through nltk).

WordNet facts used (synsets over all parts of speech): bank 18, rent 9, lease 7, car 5,
cheap 4, thanks 3, approves 2 ("approve"), friday 1, yes 1; car.n.01 = {car, auto,
automobile, machine, motorcar}; rent.v.01 = {rent, lease}."""

from __future__ import annotations

import json
import os

import pytest

from .eval_helpers import Q, released_case, user_text, write_case
from .test_modes import ModeStudy, evaluate
from ioa_helpers import one_line_error
from ioa_synth.probing.wordnet import WordNetMissing, lexical_overlap, load_wordnet, polysemous_expressions


@pytest.fixture(scope="module")
def lexicon():
    try:
        return load_wordnet()
    except WordNetMissing as exc:
        if os.environ.get("CI"):  # CI installs it (scripts/setup.sh): missing there is a failure
            raise
        pytest.skip(f"WordNet not installed: {exc}")


TURNS = ["We should rent a car.", "The bank approves.", "A lease is cheap.", "Friday then.", "Yes.", "Thanks."]
FORMS = ["the automobile", "bank approval", "a cheap lease", "on Friday"]


def wordnet_case():
    case = released_case(tag=" WN")
    for ma, form in zip(case["profiles"]["misalignment_points"], FORMS):
        ma["surface_form"] = form
    for turn, text in zip(case["dialogue"]["turns"], TURNS):
        turn["utterance"] = text
    return case


#: Most senses first: bank 18 (turn 2), rent 9 (turn 1), lease 7 (turn 3), car 5 (turn 1); cheap 4 is fifth.
#: Overlap with the MAs' surface forms: bank = MA2's "bank" (exact), rent ~ MA3's "lease" (synonyms,
#: rent.v.01), lease = MA3's "lease" (exact), car ~ MA1's "automobile" (synonyms, car.n.01); none touches
#: MA4 ("on Friday"). So 4 of 4 overlap an MA; by exact tokens alone it would be 2 of 4.
EXPECTED = [("bank", 2, {"MA2": 1.0}), ("rent", 1, {"MA3": 1.0}), ("lease", 3, {"MA3": 1.0}), ("car", 1, {"MA1": 1.0})]

#: One MCQ per word, in order: A(MA1), C not_diverging, A(MA2), B over 4 MAs: P = 2/3, R = 2/4, F1 = .5714.
QUESTIONS = [Q("Which bank approves it?", "A", "B", hit="MA1"), Q("Who pays the rent?", "A", "A"),
             Q("How long is the lease?", "B", "C", hit="MA2"), Q("Which car do we mean?", "A", "C")]


def test_lexical_overlap_counts_wordnet_synonyms(lexicon):
    # {car, budget} vs {automobile, costs}: car ~ automobile, budget matches nothing -> 1/2
    assert lexical_overlap("the car budget", "automobile costs", lexicon) == 0.5
    assert lexical_overlap("the car budget", "automobile costs") == 0.0  # exact tokens only
    # {bank} vs {bank, loan}: the smaller side is fully found -> 1.0; a function word alone -> 0
    assert lexical_overlap("the bank", "bank loan", lexicon) == 1.0
    assert lexical_overlap("the", "bank loan", lexicon) == 0.0
    # {car, rental, fee} vs {automobile}: the smaller side {automobile} is found (~ car) -> 1/1
    assert lexical_overlap("car rental fee", "an automobile", lexicon) == 1.0


def test_polysemous_expressions_rank_by_senses_then_first_occurrence(lexicon):
    picked = polysemous_expressions(list(enumerate(TURNS, 1)), lexicon, 4)
    assert picked == [{"expression": e, "turn": t} for e, t, _ in EXPECTED]
    # "Friday" and "Yes" (1 sense each): the earlier one first; an unknown word is never picked
    assert polysemous_expressions([(1, "Zyxqv Friday"), (2, "Yes")], lexicon, 4) == [
        {"expression": "Friday", "turn": 1}, {"expression": "Yes", "turn": 2}]


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
