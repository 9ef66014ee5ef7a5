"""The one text normaliser: each difference between its uses is a parameter."""

from __future__ import annotations

import threading

from ioa_synth.evaluate.text import content_tokens
from ioa_synth.protocol.gates_text import content_words, stems, words
from ioa_synth.seeds.ids import normalize_title
from ioa_synth.text.normalise import ALNUM, FUNCTION_WORDS, NONSPACE, WORD, Normaliser, stem_words


def test_each_difference_is_a_parameter():
    text = "Déjà-vu: the Straße_MA1 paper's 3 s,  done."
    assert Normaliser(WORD, casefold=False).tokens(text) == ["déjà", "vu", "the", "straße_ma1", "paper", "s", "3", "s",
                                                            "done"]
    assert Normaliser(ALNUM).tokens(text) == ["déjà", "vu", "the", "strasse", "ma1", "paper", "s", "3", "s", "done"]
    assert Normaliser(ALNUM, fold_accents=True).text(text) == "deja vu the strasse ma1 paper s 3 s done"
    assert Normaliser(NONSPACE).text(text) == "déjà-vu: the strasse_ma1 paper's 3 s, done."
    dropped = Normaliser(ALNUM, stop_words=FUNCTION_WORDS, drop_single_letters=True)
    assert dropped.tokens(text) == ["déjà", "vu", "strasse", "ma1", "paper", "3", "done"]
    assert Normaliser(ALNUM, stem="english").tokens("running studies") == ["run", "studi"]
    assert Normaliser(ALNUM, stop_words=lambda: frozenset({"vu"})).tokens("déjà vu") == ["déjà"]
    assert Normaliser().text(None) == "" and Normaliser().token_set("") == frozenset()
    assert Normaliser(WORD).variant(stem="english").tokens("Gates") == ["gate"]


def test_the_uses_keep_their_rules():
    assert words("The MA_1 paper's") == ["the", "ma_1", "paper", "s"]
    assert content_words("The MA_1 paper's 3") == ["ma_1", "paper", "3"]
    assert stems("The studies were running", content=False) == ["the", "studi", "were", "run"]
    assert normalize_title("Déjà vu: A  Study") == "deja vu a study" and normalize_title(None) == ""
    assert content_tokens("Let's learn Torch first.") == {"learn", "torch", "first"}


def test_stem_cache_is_per_thread_and_exact():
    text = "the careful participants clarified the validation splits and the reproducibility budget " * 20
    want = stems(text)
    errors: list[str] = []

    def work() -> None:
        for _ in range(30):
            if stems(text) != want or stem_words(["clarified"]) != ["clarifi"]:
                errors.append("wrong stems")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
