"""Belief-study tables made from ``belief run`` results folders by ``belief report``'s code
(:func:`ioa_synth.belief.report.summarize`): the headline rates per condition (BELIEF.md §4
metrics, §6 figures)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.belief.report import ReportError, summarize
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: (summary key, column) of the headline rates, all shares shown in %.
RATES = (("fpi", "FPI"), ("initial_infection", "initial infection"), ("turn_infection", "turn infection"),
         ("public_endorsement", "public endorsement"), ("public_correction", "public correction"),
         ("truth_knower_correction", "truth-knower correction"))


def headline_rates(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-1: one row per condition (model, source, k) of every folder: items, then the
    rates of :data:`RATES` and the hidden-infection share of exposed turns (%)."""
    rows, seen = [], {}
    for folder in folders["belief"]:
        try:
            summary = summarize(folder)
        except ReportError as exc:
            raise TableError(str(exc)) from None
        for key, e in summary["conditions"].items():
            if key in seen:
                raise TableError(f"{folder} and {seen[key]} both hold the condition {key}; give each once")
            seen[key] = folder
            model, source, k = key.split("|")
            n, expected = e["n_items"], e.get("expected", e["n_items"])
            rows.append([model, source, k.removeprefix("k="), str(n) if e.get("finished", n) >= expected
                         else f"{e.get('finished', n)} of {expected}",
                         *(percent(e[name]) for name, _ in RATES), percent(e["categories"]["hidden_infection"])])
    return PaperTable("belief-1", "Final private infection and headline rates per condition (%)",
                      ["model", "source", "k", "items", *(c for _, c in RATES), "hidden infection"], rows,
                      ["FPI: share of benign agents whose private answer is the manipulated one at the final step; "
                       "turn rates over exposed benign turns, averaged over rounds (belief report).",
                       "items 'a of b': the condition's conversations are not all finished; its rates cover the "
                       "finished ones."])


register(TableSpec("belief-1", "Final private infection (FPI) and headline rates per condition",
                   "belief paper, main results (§4 metrics)", (Needs("belief", 1, None, "one per model"),),
                   "ioa-synth belief run --items ITEMS --attackers 0,1,3 --out RESULTS", headline_rates))
