"""SFT warm-start data from a teacher prober's ``evaluate`` run (paper §6.1, App. D.1, D.6).

One row per scored dialogue: the prober messages the teacher run sent, rebuilt from the
stored request in the results folder's catalog (``llm_calls``, not re-rendered, so a later
template change cannot alter them), and, as the assistant turn, the teacher's question set in
the prober reply shape ``{"questions": [{"question", "options"}]}`` with every Category-C
question removed ("filterC"). A dialogue left with no question is dropped and counted;
``keep_c`` keeps the C questions (the "w/o filterC" ablation, App. D.6). Rows are in TRL's
conversational formats: ``{"messages": [system, user, assistant]}`` or ``{"prompt": [system,
user], "completion": [assistant]}``, plus ``case_id``, ``split``, ``n_removed_c`` and
``teacher`` (the prober model).

``sample`` (``train sft --sample N --seed S``) keeps a random N of the teacher's scored
dialogues stratified by cell (domain x task type; :mod:`ioa_synth.protocol.sample`): the
paper's warm-start uses 300 training dialogues (§6.1, Table 17), the "w/o RL, SFT on the full
train set" ablation all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ioa_synth.evaluate.record_model import RecordError, RecordQuestion
from ioa_synth.evaluate.records import read_eval_record
from ioa_synth.protocol.sample import SampleError, stratified_sample
from ioa_synth.runs.manifest import Manifest, ManifestError, read_manifest
from ioa_synth.runs.catalog import CATALOG_FILE, Catalog
from ioa_synth.train.files import FORMATS_SFT, ExportError, split_of, write_jsonl_atomic

#: Prober mode whose question sets make SFT data (the other modes' replies have another shape).
TEACHER_MODE = "mcq"


@dataclass
class SftExport:
    """The rows to write and what was left out: ``dropped_empty`` (no question left after
    filterC), ``not_scored`` (failed records), ``removed_c`` (C questions removed in all)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    dropped_empty: list[str] = field(default_factory=list)
    not_scored: list[str] = field(default_factory=list)
    removed_c: int = 0
    teacher: str | None = None
    splits: set[str] = field(default_factory=set)


def teacher_run(results: Path) -> Manifest:
    """The manifest (``run.json``) of a teacher run usable for SFT.

    Raises:
        ExportError: not an ``evaluate`` results folder, a ``direct``/``ambiguity`` run, or a
            ``--questions-from`` run (no prober call was made).
    """
    if not results.is_dir():
        raise ExportError(f"--results {results} is not a folder")
    try:
        run = read_manifest(results, "evaluate")
    except ManifestError as exc:
        raise ExportError(f"--results {exc}") from None  # names run.json or the folder, and the kind it wants
    args = run.args
    mode = run.settings.mode
    if mode != TEACHER_MODE:
        raise ExportError(f"--results {results} is a --mode {mode} run; SFT data comes from a --mode mcq "
                          "teacher run (its replies are question sets)")
    if args.get("questions_from"):
        raise ExportError(f"--results {results} reused the questions of {args['questions_from']} "
                          "(--questions-from): no prober call is stored here; export the teacher run itself")
    if not (results / CATALOG_FILE).is_file():
        raise ExportError(f"--results {results} has no {CATALOG_FILE} (the teacher's calls are stored there)")
    return run


def _prober_requests(catalog: Catalog) -> dict[str, tuple[list[dict[str, str]], str]]:
    """``{case_id: (messages, model)}`` of each case's latest successful prober request."""
    rows = catalog.execute(
        "SELECT case_id, last(request_json ORDER BY created_at), last(model ORDER BY created_at) FROM llm_calls "
        "WHERE role = 'prober' AND error IS NULL GROUP BY case_id")
    return {cid: (json.loads(req)["messages"], model) for cid, req, model in rows}


def _reply(questions: list[RecordQuestion]) -> str:
    return json.dumps({"questions": [{"question": q.question, "options": q.options} for q in questions]},
                      ensure_ascii=False)


def build_sft(results: Path, keep_c: bool = False, fmt: str = "messages", allow_split: bool = False,
              sample: int | None = None, seed: int = 0) -> SftExport:
    """The SFT rows of the teacher run in ``results`` (checked before anything is written);
    with ``sample``, of a random ``sample`` of its scored dialogues stratified by cell, drawn
    with ``seed`` (failed records are then left out before the draw).

    Raises:
        ExportError: see :func:`teacher_run`; a case from a split other than ``train``
            without ``allow_split``; a scored record without its stored prober request; an
            unreadable record; ``sample`` above the number of scored dialogues.
    """
    if fmt not in FORMATS_SFT:
        raise ExportError(f"--format must be one of {', '.join(FORMATS_SFT)} (got {fmt!r})")
    run = teacher_run(results)
    data_dir = Path(run.args.get("data") or "")
    with Catalog(results, read_only=True) as catalog:
        requests = _prober_requests(catalog)
    prober = run.components.get("prober")
    out = SftExport(teacher=prober.get("model") if isinstance(prober, dict) else None)
    records = []
    for path in sorted((results / "records").rglob("*.json"), key=lambda p: p.as_posix()):
        try:
            records.append(read_eval_record(path))
        except RecordError as exc:
            raise ExportError(str(exc)) from None
    if sample is not None:
        try:
            records = stratified_sample([r for r in records if r.status == "scored"],
                                        lambda r: (r.domain, r.task_type), sample, seed, "scored dialogues")
        except SampleError as exc:
            raise ExportError(f"--results {results}: {exc}") from None
    for rec in records:
        case_id = rec.case_id
        split = split_of(data_dir, case_id)
        if split != "train" and not allow_split:
            raise ExportError(f"--results {results}: case {case_id} comes from the {split!r} split of {data_dir}; "
                              "SFT data comes from the train split (--allow-split to export it anyway)")
        out.splits.add(split)
        if rec.status != "scored":
            out.not_scored.append(case_id)
            continue
        if case_id not in requests:
            raise ExportError(f"--results {results}: no stored prober request of {case_id} in {CATALOG_FILE}")
        messages, model = requests[case_id]
        questions = rec.questions
        kept = questions if keep_c else [q for q in questions if q.category != "C"]
        removed = len(questions) - len(kept)
        out.removed_c += removed
        if not kept:
            out.dropped_empty.append(case_id)
            continue
        answer = [{"role": "assistant", "content": _reply(kept)}]
        convo = {"messages": [*messages, *answer]} if fmt == "messages" else {"prompt": messages, "completion": answer}
        out.rows.append({**convo, "case_id": case_id, "split": split, "n_removed_c": removed,
                         "teacher": model or out.teacher})
    return out


def write_sft(export: SftExport, out_dir: Path) -> Path:
    """Write ``out_dir/sft.jsonl`` (atomically) and return its path."""
    return write_jsonl_atomic(out_dir / "sft.jsonl", export.rows)
