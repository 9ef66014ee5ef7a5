"""IoA paper tables made from ``ioa-synth evaluate`` runs of the baselines and the simulator
checks: the lexical and prompting baselines (Table 11, §5.1: ``--mode wordnet|ambiguity|direct``
next to the MCQ prober) and the simulator's stability over k rollouts (Table 13, App. C.1).

Every number comes from the ``evaluate`` capability's own code: means of per-dialogue values
(:mod:`ioa_synth.evaluate.analysis.tables`, paper §4.2), the selected expressions' overlap with
the MAs' surface forms as each record holds it (:func:`ioa_synth.evaluate.scoring.expression_overlap`,
WordNet synonyms counting in the ``wordnet`` mode) and the rollouts' agreement with the modal
answer (:func:`ioa_synth.evaluate.analysis.consistency.rollout_agreement`, what ``report``
shows as "Simulator stability (Table 13)").
"""

from __future__ import annotations

from pathlib import Path

from ioa_synth.evaluate.analysis.consistency import rollout_agreement
from ioa_synth.evaluate.scoring import expression_overlap
from ioa_synth.tables.ioa_evaluate import (EVALUATE, SCORE_NOTES, counted, coverage_notes, read_all,
                                          score_rows)
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: Row label of each ``--mode`` (paper §5.1's names of the baselines).
BASELINE = {"wordnet": "WordNet (lexical)", "ambiguity": "LLM-ranked expressions", "direct": "direct prompting",
            "mcq": "MCQ prober"}

#: The paper's Table 13 (App. C.1): k = 5 rollouts agreeing with the modal answer, P1 / P2 (0-1).
PAPER_STABILITY = {"M1": 0.977, "M2": 0.968}


def lexical_baselines(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-11: one row per baseline run (folder, in the order given; the first is the marks'
    reference): P / R / F1 (%), K, and for the expression baselines (``wordnet``, ``ambiguity``)
    the selected expressions overlapping some MA's surface form (%, overlapping/selected)."""
    results = read_all(folders["evaluate"])
    names = []
    for res in results:
        base = BASELINE.get(res.run.settings.mode, res.run.settings.mode)
        names.append(base if [r.run.settings.mode for r in results].count(res.run.settings.mode) == 1
                     else f"{base} ({res.path.name})")
    rows = []
    for res, row in zip(results, score_rows(results, names)):
        expr = expression_overlap(list(res.scored.values())).get("expressions")
        rows.append(row + [counted(expr["overlapping_ma"], expr["selected"]) if expr else "–"])
    return PaperTable("ioa-11", "Table 11: lexical and prompting baselines (P / R / F1, %; expression overlap, %)",
                      ["baseline", "dialogues", "P", "R", "F1", "K", "expressions overlapping an MA (%)"], rows,
                      SCORE_NOTES + [
                          "Expressions overlapping an MA: of the four expressions selected per dialogue (wordnet: "
                          "most WordNet senses; ambiguity: chosen by the prober's model), those sharing at least "
                          "half of the shorter side's content words with some MA's surface form; a WordNet "
                          "synonym counts as a match in the wordnet mode only (docs/evaluate.md)."]
                      + coverage_notes(results))


def simulator_stability(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-13: one row per ``--rollouts`` k > 1 run: k, answers, and per participant (P1 =
    ``M1``, P2 = ``M2``, and P3 = ``M3`` ... when a run holds meetings of more than two
    people, ``build --participants N``) the rollout picks equal to the answer's modal
    option (%, agreeing/picks, pooled over picks; "–" for a participant a run's cases lack);
    a last row gives the paper's values (two-person dialogues: P1 and P2 only)."""
    results = read_all(folders["evaluate"])
    per_run = []
    for res in results:
        k = res.run.settings.rollouts
        if k < 2:
            raise TableError(f"{res.path} ran one rollout (no stability to measure); ioa-13 needs runs made with "
                             "'ioa-synth evaluate ... --rollouts K' (K > 1, the paper's 5)")
        per_run.append((res, k, rollout_agreement(res.scored.values())))
    seen = {who for _, _, per in per_run for who in per if who.startswith("M") and who[1:].isdigit()}
    members = [f"M{i}" for i in range(1, max([2, *(int(w[1:]) for w in seen)]) + 1)]
    rows = []
    for res, k, per in per_run:
        cells = [res.path.name, str(len(res.scored)), str(k)]
        for who in members:
            p = per.get(who)
            cells.append(counted(p["agreeing"], p["picks"]) if p else "–")
        rows.append(cells)
    rows.append(["paper (30 test dialogues)", "30", "5", percent(PAPER_STABILITY["M1"]), percent(PAPER_STABILITY["M2"]),
                 *("–" for _ in members[2:])])
    names = ", ".join(f"P{i} = {who}" for i, who in enumerate(members, start=1))
    more = " (the paper's dialogues have two)" if len(members) > 2 else ""
    return PaperTable("ioa-13", "Table 13: simulator stability, rollouts agreeing with the modal answer (%)",
                      ["run", "dialogues", "k", *(f"P{i} (%)" for i in range(1, len(members) + 1))], rows,
                      [f"{names}{more}: over every answer of the scored dialogues, the share of the k rollouts' "
                       "picks equal to the answer's modal option, pooled over picks (agreeing/picks); as "
                       "'ioa-synth report' computes it (App. C.1)."])


register(TableSpec("ioa-11", "Lexical and prompting baselines (WordNet, LLM-ranked, direct)", "IoA paper, Table 11 (§5.1)",
                   (Needs("evaluate", 1, None, "one per baseline (--mode), the first is the marks' reference"),),
                   EVALUATE + " --mode wordnet|ambiguity|direct|mcq (once per baseline)", lexical_baselines))
register(TableSpec("ioa-13", "Simulator stability (P1 / P2)", "IoA paper, Table 13 (App. C.1)",
                   (Needs("evaluate", 1, None, "one per --rollouts K run (K > 1)"),),
                   EVALUATE + " --sample 30 --seed S --rollouts 5", simulator_stability))
