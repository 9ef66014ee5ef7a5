"""The estimate-beside-spent table says when its completion tokens are each call's cap."""

from __future__ import annotations

from rich.console import Console

from ioa_synth.reports.spend_table import spend_table


def _render(est: dict) -> str:
    console = Console(width=200, record=True)
    console.print(spend_table(est, {"components": {"generator": {"calls": 3}}, "total": {"calls": 3}}, "t"))
    return console.export_text()


def test_a_first_runs_estimate_says_its_completion_tokens_are_an_upper_bound():
    # a new user's demo: 71,311 completion tokens estimated, 14,819 spent, and nothing said why
    est = {"components": {"generator": {"calls": 3, "completion_tokens": 12288}},
           "total": {"calls": 3, "completion_tokens": 12288},
           "assumptions": {"completion_source": {"stage1 generator": "max_tokens 4096", "stage1 judge": "measured"}}}
    text = _render(est)
    assert "stage1 generator: each call at its max_tokens" in text and "upper bound" in text
    assert "stage1 judge" not in text
    est["assumptions"]["completion_source"]["stage1 generator"] = "measured"
    assert "max_tokens" not in _render(est)
