"""``ioa-synth label-types``: the ``type_judge`` component reads the type (App. B.5
taxonomy) of every disagreement of its inputs, one call per case, and the labels go to
the results folder ``--out`` (never into the inputs).

The judge's prompt gives each type's one-line reading (the same
:data:`~ioa_synth.protocol.planting.TYPE_DEFINITIONS` the generator and the stage-1 judge
of a build see) and never the planted type; its reply schema is the stage-1 judge's type
field (:func:`~ioa_synth.build.planted.with_type_field`), read by the same parser
(:func:`~ioa_synth.build.planted.judged_types`). Calls are keyed ``(case id, 0,
type_judge, 1)`` in ``OUT/catalog.duckdb`` and replayed on a re-run; a changed model or
template, or other inputs, in the same ``--out`` is refused.

Output: ``OUT/labels.jsonl`` (:mod:`.labels`), ``OUT/summary.json`` (counts, judged mix,
agreement with planted types) and ``OUT/run.json`` (the manifest).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth.build.planted import judged_types, with_type_field
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.core.templates import render_template, template_sha256
from ioa_synth.llm.client import LLMCallError, StopRun
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run
from ioa_synth.runs.recorder import CallKey
from ioa_synth.runs.schema import TableSet
from ioa_synth.runs.setup_check import SetupCheck
from ioa_synth.typelabels.items import Unit
from ioa_synth.typelabels.labels import KIND, LABELS_FILE, SUMMARY_FILE, TypeLabel, write_labels
from ioa_synth.typelabels.tables import agreement, judged_mix

COMMAND = "label-types"
COMPONENT = "type_judge"
TEMPLATE = "typelabels/type_judge.jinja2"
#: The prompt of a case of more than two people (``build --participants N``): its own
#: template, so that the two-person prompt and its sha256 stay as they were.
TEMPLATE_MULTI = "typelabels/type_judge_multi.jinja2"
#: Bumped when the setup description changes shape.
SETUP_VERSION = 1

#: ``type_label_calls``: ``llm_calls`` with the source of the case as a column.
TYPE_TABLES = TableSet(part="typelabels", version=1, views=(
    "CREATE OR REPLACE VIEW type_label_calls AS SELECT tags->>'source' AS source, * FROM llm_calls",))


def reply_schema(ids: list[str]) -> dict[str, Any]:
    """``{"ma_scores": {id: {"type": one of the taxonomy}}}`` for the ids of one case."""
    items = {i: {"type": "object", "properties": {}, "required": [], "additionalProperties": False} for i in ids}
    base = {"type": "object", "additionalProperties": False, "required": ["ma_scores"], "properties": {
        "ma_scores": {"type": "object", "additionalProperties": False, "required": list(ids), "properties": items}}}
    return with_type_field(base, ids)


def parse_reply(data: Any, ids: list[str]) -> dict[str, str]:
    """The judged type per id; raises ``ValueError`` (the reply is asked again, then the
    case fails) when some id has no type of the taxonomy."""
    found = judged_types(data, ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise ValueError(f"the reply gives no type of the taxonomy for {', '.join(missing)}")
    return found


def label_types(units: list[Unit], out: Path, inputs: list[Path], config: ToolkitConfig, *,
                workers: int = 4, local_model: str | None = None, args: dict[str, Any] | None = None,
                console: Console | None = None) -> dict[str, Any]:
    """Label every point of ``units`` into ``out``; return the summary (also written to
    ``summary.json``): ``{"inputs", "cases", "points", "labelled", "failed", "errors",
    "mix" (:func:`~.tables.judged_mix` of the data points), "meeting_mix" (of meeting
    disagreements), "agreement" (:func:`~.tables.agreement`), "model", "tokens"}``.

    Raises:
        FolderKindMismatch: ``out`` is a folder of another kind.
        FingerprintMismatch / SetupChanged: another judge, template or inputs in ``out``.
        EndpointError / LocalModelError / SetupError / RunInterrupted: from the run.
    """
    console = console or Console(stderr=True)
    out.mkdir(parents=True, exist_ok=True)
    replies: dict[str, dict[str, str]] = {}
    errors: list[str] = []
    sources = sorted(str(p.resolve()) for p in inputs)

    used = [TEMPLATE] + ([TEMPLATE_MULTI] if any(_template(u) == TEMPLATE_MULTI for u in units) else [])

    def describe(eps: dict[str, Any]) -> dict[str, Any]:
        return {"components": {n: ep.identity() | {"templates": {t: template_sha256(t) for t in used}}
                               for n, ep in eps.items()}, "inputs": sources}

    check = SetupCheck(commands=(COMMAND,), protocol=lambda d: {"inputs": d.get("inputs")},
                       results_stored=lambda catalog: (catalog.out_dir / LABELS_FILE).exists())
    with Catalog(out, tables=[TYPE_TABLES]) as catalog, \
            open_run(catalog, COMMAND, [COMPONENT], config, local_model, args, kind=KIND, describe=describe,
                     check=check, setup_version=SETUP_VERSION) as run:
        recorder = run.recorder(replay_of=[u.case_id for u in units])
        client = run.clients[COMPONENT]
        progress = BuildProgress(console, total=len(units), label="cases", statuses=("labelled", "failed"))
        run.attach(progress)

        def work(unit: Unit) -> str | None:
            ids = [p.id for p in unit.points]
            prompt = render_template(_template(unit), source=unit.source, points=unit.points,
                                     type_definitions=TYPE_DEFINITIONS, members=unit.context.get("members", ""),
                                     scenario=unit.context.get("scenario", ""), people=unit.context.get("people", 2))
            try:
                found, _ = recorder.call(client, CallKey(unit.case_id, 0, COMPONENT, 1), prompt, reply_schema(ids),
                                         "type_labels", lambda d: parse_reply(d, ids),
                                         tags={"component": COMPONENT, "source": unit.source})
            except StopRun:
                raise
            except LLMCallError as exc:
                return " ".join(str(exc).split())[:300]
            replies[unit.case_id] = found
            return None

        def done(unit: Unit, error: str | None) -> None:
            if error is not None:
                errors.append(f"{unit.case_id}: {error}")
            progress.advance("labelled" if error is None else "failed", unit.case_id)

        with progress:
            run.map(units, work, done, workers=workers, unit="case", name="label-types")
        labels = [TypeLabel(case_id=u.case_id, ma_id=p.id, source=u.source, type=replies.get(u.case_id, {}).get(p.id),
                            planted=p.planted, text=p.short) for u in units for p in u.points]
        summary = summarise(labels, units, errors) | {"inputs": [str(p) for p in inputs],
                                                      "model": run.endpoints[COMPONENT].model}
        run.summary |= {k: summary[k] for k in ("cases", "points", "labelled", "failed")}
        write_labels(out, labels)
    summary["tokens"] = run.summary.get("tokens", 0)
    write_json_atomic(out / SUMMARY_FILE, summary)
    return summary


def _template(unit: Unit) -> str:
    """The judge's template of ``unit``: :data:`TEMPLATE_MULTI` for a case of more than two people."""
    return TEMPLATE_MULTI if unit.context.get("people", 2) > 2 else TEMPLATE


def summarise(labels: list[TypeLabel], units: list[Unit], errors: list[str]) -> dict[str, Any]:
    """Counts, mixes and agreement of ``labels`` (see :func:`label_types`)."""
    data = [lab for lab in labels if lab.source != "meeting"]
    meeting = [lab for lab in labels if lab.source == "meeting"]
    return {"cases": len(units), "points": len(labels), "labelled": sum(lab.type is not None for lab in labels),
            "failed": len(errors), "errors": errors, "mix": judged_mix(data) if data else [],
            "meeting_mix": judged_mix(meeting) if meeting else [], "agreement": agreement(labels)}
