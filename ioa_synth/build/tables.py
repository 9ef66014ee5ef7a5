"""The build's catalog tables (:class:`~ioa_synth.runs.schema.TableSet` ``"build"``), passed
by every command that opens a build directory's catalog (build, regenerate, audit,
annotate, status, show, check, export).

- ``cases``: one row per case (seed tuple in a split); ``status`` in
  ``pending | accepted | discarded | failed``.
- ``scores``: every rubric score given by a judge (build or audit).
- ``seeds``: the seed tuples a build used, as given.

The build's calls are in the runs layer's ``llm_calls`` with the key ``(case_id, stage,
role, attempt)`` and no tags: unit = case, step = stage (1 or 2), role = the component
(``generator``, ``judge``, ``audit_judge``), attempt = the regeneration attempt.
"""

from __future__ import annotations

from ioa_synth.runs.schema import TableSet

BUILD_TABLES = TableSet(part="build", version=1, tables={
    "cases": """
        case_id VARCHAR PRIMARY KEY, split VARCHAR, domain VARCHAR, task_type VARCHAR,
        seed_id VARCHAR, case_index INTEGER, status VARCHAR,
        stage1_attempts INTEGER DEFAULT 0, stage2_attempts INTEGER DEFAULT 0,
        path VARCHAR, discard_reason VARCHAR, error VARCHAR, updated_at TIMESTAMP
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
})
