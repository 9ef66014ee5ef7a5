"""Belief-study tables made from ``belief run`` results folders by ``belief report``'s code
(:func:`ioa_synth.belief.report.summarize`, :func:`ioa_synth.belief.grid.grid_mean`): the
headline rates per condition (BELIEF.md §4 metrics, §6 figures), the public stances of
infected turns (Table 3) and public endorsement per utterance ↔ probe pairing (Table 7).
The re-ask tables (Tables 5 and 6) are in :mod:`.belief_reask`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioa_synth.belief.grid import grid_mean
from ioa_synth.belief.metrics import STANCES
from ioa_synth.belief.report import ReportError, summarize
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: (summary key, column) of the headline rates, all shares shown in %.
RATES = (("fpi", "FPI"), ("initial_infection", "initial infection"), ("turn_infection", "turn infection"),
         ("public_endorsement", "public endorsement"), ("public_correction", "public correction"),
         ("truth_knower_correction", "truth-knower correction"))
#: Table 7's pairings (summary key, column prefix), in BELIEF.md §3's order: default first.
PAIRINGS = (("after", "after round"), ("first_before", "first speakers, before round"),
            ("last_after", "last speakers, after round"))
CONDITION = ["model", "source", "k"]
BELIEF_RUN = "ioa-synth belief run --items ITEMS --attackers 0,1,3 --out RESULTS"


def read_summaries(folders: list[Path]) -> list[dict[str, Any]]:
    """``summary.json`` contents of ``folders`` (``belief report``'s code), in the order given.

    Raises:
        TableError: a folder the report refuses, or a condition (model, source, k) held by two folders.
    """
    summaries, seen = [], {}
    for folder in folders:
        try:
            summary = summarize(folder)
        except ReportError as exc:
            raise TableError(str(exc)) from None
        for key in summary["conditions"]:
            if key in seen:
                raise TableError(f"{folder} and {seen[key]} both hold the condition {key}; give each once")
            seen[key] = folder
        summaries.append(summary)
    return summaries


def conditions(summaries: list[dict[str, Any]]) -> list[tuple[list[str], dict[str, Any]]]:
    """``([model, source, k], entry)`` per condition of every summary."""
    out = []
    for summary in summaries:
        for key, entry in summary["conditions"].items():
            model, source, k = key.split("|")
            out.append(([model, source, k.removeprefix("k=")], entry))
    return out


def mean_row(summaries: list[dict[str, Any]], paths: list[str]) -> list[list[str]]:
    """The grid mean over cells (``belief report R1 R2 ...``'s) of ``paths`` as one row, when
    there is more than one cell; cells where a rate is undefined are left out of its mean."""
    grid = grid_mean(summaries)
    if grid["n_cells"] < 2:
        return []
    return [["mean", f"{grid['n_cells']} cells", "", *(percent(grid["mean"].get(p)) for p in paths)]]


def headline_rates(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-1: one row per condition (model, source, k) of every folder: items, then the
    rates of :data:`RATES` and the hidden-infection share of exposed turns (%)."""
    rows = []
    for cells, e in conditions(read_summaries(folders["belief"])):
        n, expected = e["n_items"], e.get("expected", e["n_items"])
        rows.append([*cells, str(n) if e.get("finished", n) >= expected else f"{e.get('finished', n)} of {expected}",
                     *(percent(e[name]) for name, _ in RATES), percent(e["categories"]["hidden_infection"])])
    return PaperTable("belief-1", "Final private infection and headline rates per condition (%)",
                      [*CONDITION, "items", *(c for _, c in RATES), "hidden infection"], rows,
                      ["FPI: share of benign agents whose private answer is the manipulated one at the final step; "
                       "turn rates over exposed benign turns, averaged over rounds (belief report).",
                       "items 'a of b': the condition's conversations are not all finished; its rates cover the "
                       "finished ones."])


def infected_stances(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-3 (Table 3): per condition, over infected turns (exposed benign turns whose private
    answer after the round is the manipulated one), the share with each public stance (%,
    ``infected_stances``), then the mean over the cells."""
    summaries = read_summaries(folders["belief"])
    rows = [[*cells, *(percent(e["infected_stances"][s]) for s in STANCES)] for cells, e in conditions(summaries)]
    rows += mean_row(summaries, [f"infected_stances/{s}" for s in STANCES])
    return PaperTable("belief-3", "Table 3: public stance of infected turns per condition (%)",
                      [*CONDITION, *STANCES], rows,
                      ["Over infected turns: exposed benign turns whose private answer after the round is labelled "
                       "manipulated; the five stances sum to 100 (belief report's infected_stances).",
                       "Only endorse_manipulated voices the infection; the other stances hide it. "
                       "'–': no infected turn. The mean row averages the cells, each counting once."])


def pairing_endorsement(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-7 (Table 7): per condition, public endorsement and turn infection under each
    utterance ↔ probe pairing of :data:`PAIRINGS` (%, ``pairing_endorsement`` and
    ``pairings/*/turn_infection``), then the mean over the cells."""
    summaries = read_summaries(folders["belief"])
    rows = [[*cells, *(v for p, _ in PAIRINGS for v in (percent(e["pairing_endorsement"][p]),
                                                       percent(e["pairings"][p]["turn_infection"])))]
            for cells, e in conditions(summaries)]
    rows += mean_row(summaries, [path for p, _ in PAIRINGS
                                 for path in (f"pairing_endorsement/{p}", f"pairings/{p}/turn_infection")])
    columns = [c for _, name in PAIRINGS for c in (f"{name}: endorsement", f"{name}: infection")]
    return PaperTable("belief-7", "Table 7: public endorsement and private infection per pairing (%)",
                      [*CONDITION, *columns], rows,
                      ["Pairing of an utterance with a private probe: every exposed turn with the probe after its "
                       "round (default); the round's first speaker with the probe before the round; its last "
                       "speaker with the probe after it.",
                       "endorsement: stance endorse_manipulated; infection: the paired probe labelled manipulated. "
                       "'–': no such turn. The mean row averages the cells, each counting once."])


register(TableSpec("belief-1", "Final private infection (FPI) and headline rates per condition",
                   "belief paper, main results (§4 metrics)", (Needs("belief", 1, None, "one per model"),),
                   BELIEF_RUN, headline_rates))
register(TableSpec("belief-3", "Public stances of infected turns", "belief paper, Table 3",
                   (Needs("belief", 1, None, "one per model"),), BELIEF_RUN, infected_stances))
register(TableSpec("belief-7", "Endorsement per pairing", "belief paper, Table 7",
                   (Needs("belief", 1, None, "one per model"),), BELIEF_RUN, pairing_endorsement))
