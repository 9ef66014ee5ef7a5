"""The one text normaliser: each difference between its uses is a parameter."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ioa_synth.probing.text import content_tokens
from ioa_synth.protocol.gates_text import content_words, stems, words
from ioa_synth.seeds.ids import normalize_title
from ioa_synth.text.normalise import ALNUM, FUNCTION_WORDS, NONSPACE, WORD, Normaliser, jaccard, stem_words


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


def test_uncached_words_stem_right_in_many_threads_at_once():
    # the cache hides the stemmer after a word's first use: stem new words in every thread
    import snowballstemmer

    reference = snowballstemmer.stemmer("english")
    batches = [[f"{stem}{suffix}{i}ization" for stem in ("general", "regular", "hospital") for suffix in "abc"]
               for i in range(400)]
    want = [reference.stemWords(b) for b in batches]
    results: dict[int, list[list[str]]] = {}

    def work(k: int) -> None:
        results[k] = [stem_words(b) for b in batches]

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    assert all(got == want for got in results.values())


def test_jaccard_is_shared_over_all_and_one_for_two_empty_sets():
    assert jaccard({"held", "out", "set"}, {"held", "out", "split"}) == 2 / 4
    assert jaccard(["a", "a", "b"], ("b",)) == 1 / 2  # sets of tokens: repeats count once
    assert jaccard(set(), {"a"}) == 0.0 and jaccard([], []) == 1.0
