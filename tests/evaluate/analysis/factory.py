"""Writes ``ioa-synth evaluate`` results folders in the agreed format from per-question
categories, so that ``compare``/``report`` can be tested before ``evaluate`` exists.

A question is given as ``"A:MA2"`` (accepted, attributed to MA2), ``"B"`` (accepted,
unattributed) or ``"C:<reason>"`` (reason one of not_diverging, not_meaningful, not_implicit,
redundant). ``C:not_diverging`` questions get the same option from both participants
(``A``/``A``), every other question different options (M1 ``A``, M2 ``B``). The per-dialogue
metrics are derived from the categories by the protocol's formulas (paper §4.2), like
evaluate does; no final number is written by hand.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

REASONS = ("not_diverging", "not_meaningful", "not_implicit", "redundant")


@dataclass
class Case:
    """One case: id ``<domain>/<task_type>_<NNN>``, MAs as ``(id, type)``, question specs.

    ``stems`` overrides question stems (default ``"<case_id> question <i>"``: the i-th spec
    keeps its key across runs); ``reverse`` numbers the questions in reverse order (as a
    permuted run might); ``status="failed"`` writes a failed record."""

    case_id: str
    mas: list[tuple[str, str | None]]
    questions: list[str] = field(default_factory=list)
    status: str = "scored"
    stems: list[str] | None = None
    reverse: bool = False


def question_key(stem: str, options: dict[str, str]) -> str:
    """sha1 of stem + options JSON, 12 hex (the format's stable question identity)."""
    return hashlib.sha1(json.dumps({"question": stem, "options": options}, sort_keys=True).encode()).hexdigest()[:12]


def _question(case: Case, i: int, spec: str) -> dict:
    cat, _, arg = spec.partition(":")
    assert cat in "ABC" and (cat != "C" or arg in REASONS) and (cat != "A" or arg), spec
    stem = case.stems[i] if case.stems else f"{case.case_id} question {i + 1}"
    options = {"A": "reading one", "B": "reading two", "C": "reading three"}
    divergent = spec != "C:not_diverging"
    m2 = "B" if divergent else "A"
    filt = None
    if divergent:
        filt = {"is_meaningful": arg != "not_meaningful", "is_implicit": arg != "not_implicit",
                "redundant_with": 1 if arg == "redundant" else None, "hits_ground_truth": arg if cat == "A" else None}
    n = len(case.questions)
    return {"number": n - i if case.reverse else i + 1, "key": question_key(stem, options), "question": stem,
            "options": options,
            "answers": {"M1": {"option": "A", "rollouts": ["A"], "consistency": 1.0},
                        "M2": {"option": m2, "rollouts": [m2], "consistency": 1.0}},
            "divergent": divergent, "filter": filt, "category": cat, "reason": arg if cat == "C" else None,
            "ma_id": arg if cat == "A" else None}


def _metrics(case: Case, questions: list[dict]) -> tuple[dict, dict]:
    cats = [q["category"] for q in questions]
    a, b, c = cats.count("A"), cats.count("B"), cats.count("C")
    hit = sorted({q["ma_id"] for q in questions if q["category"] == "A"})
    p = a / (a + c) if a + c else 0.0
    r = len(hit) / len(case.mas) if case.mas else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    breakdown = {reason: sum(q["reason"] == reason for q in questions) for reason in REASONS}
    return ({"precision": p, "recall": r, "f1": f1, "k": len(questions), "a": a, "b": b, "c": c, "mas_hit": hit,
             "num_mas": len(case.mas)}, breakdown)


def record(case: Case, mode: str = "mcq", access: str = "public", rollouts: int = 1,
           permute_seed: int | None = None) -> dict:
    """The record of ``case`` in the results format."""
    domain, name = case.case_id.split("/", 1)
    rec = {"case_id": case.case_id, "source_file": f"{case.case_id}.json", "domain": domain,
           "task_type": name.rsplit("_", 1)[0], "status": case.status, "mode": mode, "access": access,
           "rollouts": rollouts, "permute_seed": permute_seed,
           "misalignment_points": [{"id": i, "type": t, "topic": f"topic of {i}", "surface_form": f"the {i} phrase"}
                                   for i, t in case.mas],
           "questions": [], "calls": []}
    if case.status == "failed":
        return rec | {"error": "simulator: retries exhausted (HTTP 500)"}
    questions = [_question(case, i, s) for i, s in enumerate(case.questions)]
    metrics, breakdown = _metrics(case, questions)
    return rec | {"questions": sorted(questions, key=lambda q: q["number"]), "metrics": metrics,
                  "c_breakdown": breakdown}


def write_results(root: Path, cases: list[Case], *, data: str = "data/test", mode: str = "mcq",
                  access: str = "public", rollouts: int = 1, permute_seed: int | None = None,
                  complete: bool = True) -> Path:
    """Write the results folder ``root`` (run.json, summary.json, records/) for ``cases``."""
    records = [record(c, mode, access, rollouts, permute_seed) for c in cases]
    for rec in records:
        path = root / "records" / f"{rec['case_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, indent=2))
    args = {"data": data, "mode": mode, "access": access, "rollouts": rollouts, "permute_seed": permute_seed,
            "limit": None}
    inputs = {f"{c.case_id}.json": hashlib.sha256(f"{data}/{c.case_id}".encode()).hexdigest() for c in cases}
    component = {"model": "scripted", "temperature": 0.2, "structured_output": "json_schema", "request_options": {},
                 "base_url_kind": "remote"}
    run = {"command": "evaluate", "argv": ["evaluate", "--data", data], "args": args,
           "components": {k: component for k in ("prober", "simulator", "validity_filter")},
           "fingerprint": hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()[:16],
           "fingerprint_parts": {"toolkit_version": "0.1.0", "templates": {}, "inputs": inputs},
           "started_at": "2026-12-01T04:00:00Z", "finished_at": "2026-12-01T04:05:00Z"}
    (root / "run.json").write_text(json.dumps(run, indent=2))
    scored = [r["metrics"] for r in records if r["status"] == "scored"]
    summary = {"complete": complete,
               "cases": {"requested": len(records), "scored": len(scored), "failed": len(records) - len(scored)},
               "precision": mean(m["precision"] for m in scored) if scored else 0.0,
               "recall": mean(m["recall"] for m in scored) if scored else 0.0,
               "f1": mean(m["f1"] for m in scored) if scored else 0.0,
               "mode": mode, "access": access, "rollouts": rollouts, "permute_seed": permute_seed}
    (root / "summary.json").write_text(json.dumps(summary, indent=2))
    return root


def markdown_rows(md: str) -> list[list[str]]:
    """Cells of every Markdown table row in ``md`` (``\\|`` unescaped, separator rows dropped)."""
    rows = []
    for line in md.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            cells = line.replace("\\|", "\0").strip().strip("|").split("|")
            rows.append([c.strip().replace("\0", "|") for c in cells])
    return rows


def case_studies() -> list[Case]:
    """The paper's App. E.1 case studies as three cases:

    - ``business/troubleshooting_010``: A,A,A,A,C (one A per MA, 4 MAs);
    - ``business/planning_003``: A(MA2), A(MA3), B, C, C over 4 MAs;
    - ``medicine/design_review_001``: twelve questions, none A (3 B, 9 C), 2 MAs (one untyped).
    """
    return [
        Case("business/troubleshooting_010",
             [("MA1", "definitional"), ("MA2", "referential"), ("MA3", "criterial"), ("MA4", "scopal")],
             ["A:MA1", "A:MA2", "A:MA3", "A:MA4", "C:not_diverging"]),
        Case("business/planning_003",
             [("MA1", "definitional"), ("MA2", "definitional"), ("MA3", "procedural"), ("MA4", "scopal")],
             ["A:MA2", "A:MA3", "B", "C:not_meaningful", "C:redundant"]),
        Case("medicine/design_review_001", [("MA1", "definitional"), ("MA2", None)],
             ["B", "C:not_diverging", "C:not_diverging", "B", "C:not_diverging", "C:not_meaningful",
              "C:not_diverging", "C:not_implicit", "B", "C:not_diverging", "C:not_meaningful", "C:redundant"]),
    ]
