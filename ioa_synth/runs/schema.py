"""The catalog's tables and how its JSON columns are encoded.

Tables (columns beyond these may be added by later modules with
:meth:`~ioa_synth.runs.catalog.Catalog.ensure_table`):

- ``cases``: one row per case (seed tuple in a split); ``status`` in
  ``pending | accepted | discarded | failed``.
- ``llm_calls``: every request sent to an endpoint, with its reply or error;
  ``reply_field`` is the message field the reply was read from (``content``, or
  ``reasoning_content``/``reasoning`` when ``content`` was empty).
- ``scores``: every rubric score given by a judge (build or audit).
- ``seeds``: the seed tuples a build used, as given.
- ``runs``: one row per command run, with the setup fingerprint.
- ``batches``: one row per batch of a ``--batch`` run (provider or ``--batch-dir`` file),
  ``batch_lines`` the call each of its lines asks for, ``batch_results`` the answers as
  they came back, ``batch_marks`` which answers a run has stored as calls (``stored``)
  and which calls gave up (``closed``); see :mod:`ioa_synth.runs.batch`.
"""

from __future__ import annotations

import json
from typing import Any

SCHEMA: dict[str, str] = {
    "cases": """
        case_id VARCHAR PRIMARY KEY, split VARCHAR, domain VARCHAR, task_type VARCHAR,
        seed_id VARCHAR, case_index INTEGER, status VARCHAR,
        stage1_attempts INTEGER DEFAULT 0, stage2_attempts INTEGER DEFAULT 0,
        path VARCHAR, discard_reason VARCHAR, error VARCHAR, updated_at TIMESTAMP
    """,
    "llm_calls": """
        call_id VARCHAR, case_id VARCHAR, stage INTEGER, role VARCHAR, attempt INTEGER,
        try_index INTEGER, model VARCHAR, base_url VARCHAR, temperature DOUBLE,
        template_sha256 VARCHAR, request_json VARCHAR, response_text VARCHAR,
        finish_reason VARCHAR, prompt_tokens INTEGER, completion_tokens INTEGER,
        latency_ms DOUBLE, error VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
        reply_field VARCHAR, via VARCHAR DEFAULT 'live'
    """,
    "scores": """
        case_id VARCHAR, stage INTEGER, attempt INTEGER, judge_role VARCHAR, judge_model VARCHAR,
        item VARCHAR, dimension VARCHAR, score INTEGER, feedback VARCHAR, created_at TIMESTAMP,
        call_id VARCHAR
    """,
    "seeds": """
        seed_id VARCHAR, split VARCHAR, source VARCHAR, domain VARCHAR, task_type VARCHAR,
        title VARCHAR, abstract VARCHAR, seed_json VARCHAR, PRIMARY KEY (seed_id, split)
    """,
    "runs": """
        run_id VARCHAR PRIMARY KEY, command VARCHAR, args_json VARCHAR, fingerprint VARCHAR,
        fingerprint_json VARCHAR, toolkit_version VARCHAR, started_at TIMESTAMP,
        finished_at TIMESTAMP, summary_json VARCHAR
    """,
    "batches": """
        batch_id VARCHAR, endpoint VARCHAR, component VARCHAR, wave INTEGER, status VARCHAR,
        input_file_id VARCHAR, output_file_id VARCHAR, error_file_id VARCHAR, n_requests INTEGER,
        submitted_at TIMESTAMP, finished_at TIMESTAMP
    """,
    "batch_lines": """
        custom_id VARCHAR, endpoint VARCHAR, batch_id VARCHAR, wave INTEGER, case_id VARCHAR, stage INTEGER,
        role VARCHAR, attempt INTEGER, try_index INTEGER, send INTEGER, failed_before INTEGER, created_at TIMESTAMP
    """,
    "batch_results": """
        custom_id VARCHAR, batch_id VARCHAR, status_code INTEGER, response_json VARCHAR, error VARCHAR,
        error_json VARCHAR, received_at TIMESTAMP
    """,
    "batch_marks": """
        custom_id VARCHAR, case_id VARCHAR, stage INTEGER, role VARCHAR, attempt INTEGER, mark VARCHAR,
        created_at TIMESTAMP
    """,
}

#: Columns added after a table was first released: ``(table, "name TYPE")``.
ADDED_COLUMNS: tuple[tuple[str, str], ...] = (("llm_calls", "reply_field VARCHAR"),
                                              ("llm_calls", "via VARCHAR DEFAULT 'live'"))


def dumps(obj: Any) -> str:
    """Compact, key-sorted JSON used for every JSON column of the catalog."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
