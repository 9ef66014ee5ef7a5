"""WordNet for the lexical baseline of the IoA paper (§5.1, Table 11): a lexical overlap
that counts a WordNet synonym as a match, and the dialogue's words ranked by their senses
(Debian's ``wordnet-base``, read through nltk; ``evaluate --mode wordnet`` end to end:
tests/evaluate/test_wordnet_baseline.py, on the same dialogue).

WordNet facts used (synsets over all parts of speech): bank 18, rent 9, lease 7, car 5,
cheap 4, thanks 3, approves 2 ("approve"), friday 1, yes 1; car.n.01 = {car, auto,
automobile, machine, motorcar}; rent.v.01 = {rent, lease}."""

from __future__ import annotations

import os

import pytest

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

#: Most senses first: bank 18 (turn 2), rent 9 (turn 1), lease 7 (turn 3), car 5 (turn 1); cheap 4 is fifth.
#: Overlap with the MAs' surface forms (FORMS of tests/evaluate/test_wordnet_baseline.py): bank = MA2's "bank" (exact), rent ~ MA3's "lease" (synonyms,
#: rent.v.01), lease = MA3's "lease" (exact), car ~ MA1's "automobile" (synonyms, car.n.01); none touches
#: MA4 ("on Friday"). So 4 of 4 overlap an MA; by exact tokens alone it would be 2 of 4.
EXPECTED = [("bank", 2, {"MA2": 1.0}), ("rent", 1, {"MA3": 1.0}), ("lease", 3, {"MA3": 1.0}), ("car", 1, {"MA1": 1.0})]


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
