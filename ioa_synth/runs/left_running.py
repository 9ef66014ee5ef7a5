"""What a batch-mode run (:mod:`ioa_synth.runs.waves`) leaves outside its process when it
stops, said in words: the batches still running at a provider, and the ``--batch-dir``
input files waiting for their output.

Both read rows of the catalog's ``batches`` table that are not finished (``batch_id,
endpoint, component, wave, status, input_file_id, n_requests``; a ``--batch-dir`` batch has
the endpoint ``file:<folder>`` and its wave's name as ``batch_id``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ioa_synth.llm.batch_api import BatchState, FileBatches
from ioa_synth.llm.client import LLMClient
from ioa_synth.runs.catalog import Catalog
from ioa_synth.text.plural import plural

#: ``batches.endpoint`` of a ``--batch-dir`` batch: this prefix and the folder.
FILE_PREFIX = "file:"


def in_flight(rows: list[dict[str, Any]], states: Mapping[str, BatchState], unused: int = 0) -> str | None:
    """One clause for a stopped run's last line (``None`` when there is nothing to say): per
    provider endpoint, the batches still running there (by id, with wave, components,
    requests and, from ``states`` (the last poll by batch id), their progress), which the
    provider bills whether or not a run collects them and which the next run collects
    rather than submitting again; input files uploaded whose batch may have been created
    (the next run adopts or creates it); ``--batch-dir`` input files waiting for their output;
    and the ``unused`` answers of finished batches that are stored but no call has used yet.
    """
    parts: list[str] = []
    if unused:
        parts.append(f"{plural(unused, 'batch answer')} {'is' if unused == 1 else 'are'} stored and not used yet: "
                     "the next run uses them rather than sending their requests again")
    provider = [r for r in rows if not r["endpoint"].startswith(FILE_PREFIX)]
    for endpoint in dict.fromkeys(r["endpoint"] for r in provider):
        running = [r for r in provider if r["endpoint"] == endpoint and r["status"] != "uploaded"]
        if running:
            one = len(running) == 1
            it, its, are = ("it", "its", "is") if one else ("them", "their", "are")
            parts.append(f"{'batch' if one else 'batches'} " + ", ".join(_described(r, states) for r in running)
                         + f" {are} still running at the provider ({endpoint}) and {are} billed: the next run "
                         f"collects {its} answers rather than submitting {it} again (cancelling {it} there stops "
                         "the bill; the next run then sends the unanswered requests again)")
        for r in (r for r in provider if r["endpoint"] == endpoint and r["status"] == "uploaded"):
            parts.append(f"wave {r['wave']}'s input file {r['input_file_id']} ({plural(r['n_requests'], 'request')}) "
                         f"is uploaded to {endpoint} and its batch may be running there (billed): the next run "
                         "collects that batch, or creates it if it was never created, rather than submitting twice")
    for r in (r for r in rows if r["endpoint"].startswith(FILE_PREFIX)):
        files = FileBatches(Path(r["endpoint"][len(FILE_PREFIX):]))
        parts.append(f"{files.input_path(r['batch_id'])} ({plural(r['n_requests'], 'request')}) is written and waits "
                     f"for its output {files.output_path(r['batch_id'])}: the next run reads that output rather "
                     "than writing the wave again")
    return "; ".join(parts) or None


def unused_answers(catalog: Catalog) -> int:
    """Answers of finished batches (HTTP 200) stored in ``batch_results`` that no call has
    used yet (no ``batch_marks`` row): a run stopped between reading them and driving its units."""
    rows = catalog.execute(
        "SELECT count(DISTINCT r.custom_id) FROM batch_results r JOIN batch_lines l USING (custom_id) "
        "WHERE r.status_code = 200 AND NOT EXISTS (SELECT 1 FROM batch_marks m WHERE m.custom_id = r.custom_id)")
    return int(rows[0][0]) if rows else 0


def _described(row: dict[str, Any], states: Mapping[str, BatchState]) -> str:
    state = states.get(row["batch_id"])
    progress = (f", {state.status} {state.completed + state.failed}/{state.total or row['n_requests']}"
                if state is not None else "")
    return f"{row['batch_id']} (wave {row['wave']}, {row['component']}, {plural(row['n_requests'], 'request')}{progress})"


def waiting_line(rows: list[dict[str, Any]], clients: Mapping[str, LLMClient]) -> str:
    """The line a ``--batch-dir`` run stops with (exit 75): which input files to process
    (with a ``vllm run-batch`` command naming each component's model from ``clients``) and
    where their outputs go."""
    parts = []
    for row in rows:
        files = FileBatches(Path(row["endpoint"][len(FILE_PREFIX):]))
        model = next((c.endpoint.model for c in clients.values()
                      if c.endpoint.component in row["component"].split("+")), "MODEL")
        parts.append(f"{files.input_path(row['batch_id'])} ({plural(row['n_requests'], 'request')}, "
                     f"e.g. vllm run-batch -i {files.input_path(row['batch_id'])} "
                     f"-o {files.output_path(row['batch_id'])} --model {model})")
    return ("batch: process " + " and ".join(parts) + ", writing each output next to its input as "
            "<wave>.output.jsonl, then run the same command again")
