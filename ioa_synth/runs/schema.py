"""The catalog's tables, who owns them, their versions and migrations, and how JSON
columns are encoded.

A catalog holds the tables of the runs layer (:data:`RUNS_TABLES`) and those of the
capabilities that opened it: each capability describes its own in a :class:`TableSet`
(tables, views, a version, the migrations from older versions) and passes it when it
opens its catalog (``Catalog(out_dir, tables=[...])``). The runs layer owns:

- ``llm_calls``: every request sent to an endpoint, with its reply or error. A call's key
  (:class:`ioa_synth.runs.recorder.CallKey`: unit, step, role, attempt) is stored in the
  columns ``case_id``, ``stage``, ``role``, ``attempt`` (the names of the first release,
  kept so that queries written against earlier catalogs and the joins with a build's
  ``cases`` and ``scores`` keep working); ``tags`` is a JSON object the capability fills
  to describe the call (belief: component, kind, k, agent; evaluate: component,
  participant), read by the capability's views; ``reply_field`` is the message field the
  reply was read from (``content``, or ``reasoning_content``/``reasoning`` when
  ``content`` was empty).
- ``runs``: one row per command run, with the setup fingerprint.
- ``batches``: one row per batch of a ``--batch`` run (provider or ``--batch-dir`` file),
  ``batch_lines`` the call each of its lines asks for, ``batch_results`` the answers as
  they came back, ``batch_marks`` which answers a run has stored as calls (``stored``)
  and which calls gave up (``closed``); ``llm_calls.via`` says how a call went (``live``
  or ``batch``); see :mod:`ioa_synth.runs.batch`.
- ``estimates``: the estimate each run of a new plan started from (:mod:`ioa_synth.runs.spend`).
- ``catalog_meta``: the version of each table set in this catalog (``part``, ``version``,
  ``updated_at``). A catalog without it was written before versions were kept: every
  table set in it is at version 1.

Adding a column or a table later: add it to the owner's ``tables`` (new catalogs), bump
the owner's ``version`` and add a :class:`Migration` to that version whose statements
bring an older catalog there (``ALTER TABLE t ADD COLUMN IF NOT EXISTS ...``,
``CREATE TABLE IF NOT EXISTS ...``, an ``UPDATE`` filling the new column). A catalog of a
newer version than this release knows is refused (:class:`~ioa_synth.runs.folder_checks.CatalogUnusable`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Migration:
    """The statements that bring a table set from the version before ``version`` to
    ``version``; each must be safe to run twice (``IF NOT EXISTS``, an ``UPDATE`` limited to
    rows not yet migrated), since a catalog that a newer table set left at an older
    version gets them again."""

    version: int
    statements: tuple[str, ...]


@dataclass(frozen=True)
class TableSet:
    """The tables and views one layer or capability owns in a catalog.

    Args:
        part: the owner's name, its key in ``catalog_meta`` (``"runs"``, ``"build"``, ...).
        version: the version this release writes (1 = the first release, before
            ``catalog_meta`` existed).
        tables: table name -> its columns SQL, created when missing.
        views: ``CREATE OR REPLACE VIEW`` statements, run on every writable open after
            the migrations (so a changed view replaces the stored one).
        migrations: from older versions, in increasing ``version``.
    """

    part: str
    version: int = 1
    tables: Mapping[str, str] = field(default_factory=dict)
    views: tuple[str, ...] = ()
    migrations: tuple[Migration, ...] = ()


#: The version table: one row per table set.
META_TABLE = "catalog_meta"
META_COLUMNS = "part VARCHAR PRIMARY KEY, version INTEGER, updated_at TIMESTAMP"

LLM_CALLS_COLUMNS = """
    call_id VARCHAR, case_id VARCHAR, stage INTEGER, role VARCHAR, attempt INTEGER,
    try_index INTEGER, model VARCHAR, base_url VARCHAR, temperature DOUBLE,
    template_sha256 VARCHAR, request_json VARCHAR, response_text VARCHAR,
    finish_reason VARCHAR, prompt_tokens INTEGER, completion_tokens INTEGER,
    latency_ms DOUBLE, error VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
    reply_field VARCHAR, tags JSON, via VARCHAR DEFAULT 'live'
"""

RUNS_COLUMNS = """
    run_id VARCHAR PRIMARY KEY, command VARCHAR, args_json VARCHAR, fingerprint VARCHAR,
    fingerprint_json VARCHAR, toolkit_version VARCHAR, started_at TIMESTAMP,
    finished_at TIMESTAMP, summary_json VARCHAR
"""

#: Batch mode's tables (:mod:`ioa_synth.runs.batch`, :mod:`ioa_synth.runs.waves`).
BATCH_COLUMNS = {
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

#: The estimate a run started from (:mod:`ioa_synth.runs.spend`).
ESTIMATES_COLUMNS = ("run_id VARCHAR, command VARCHAR, created_at TIMESTAMP, plan_json VARCHAR, "
                     "estimate_json VARCHAR")

#: The runs layer's own tables. Version 2 added ``llm_calls.tags`` (and ``catalog_meta``);
#: ``reply_field`` came in a 1.x release, so a version-1 catalog may lack it too. Version 3
#: added ``llm_calls.via`` (a call made before it was a live one), batch mode's tables and
#: ``estimates`` (tables are created when missing).
RUNS_TABLES = TableSet(
    part="runs", version=3,
    tables={"llm_calls": LLM_CALLS_COLUMNS, "runs": RUNS_COLUMNS, **BATCH_COLUMNS, "estimates": ESTIMATES_COLUMNS},
    migrations=(Migration(2, ("ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS reply_field VARCHAR",
                              "ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS tags JSON")),
                Migration(3, ("ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS via VARCHAR DEFAULT 'live'",))))


def dumps(obj: Any) -> str:
    """Compact, key-sorted JSON used for every JSON column of the catalog."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
