"""What a team run keeps in its catalog besides the runs layer's tables: the tags of its
calls and the view ``collab_calls``.

A team call's key is ``(<task_id>__<config>, step, "<component>|<kind>:<agent>", 0)``
(steps: :mod:`ioa_synth.collab.team`); its tags are ``{"task_id", "config", "component",
"kind", "agent"}`` (``agent`` null for a detector's call).
"""

from __future__ import annotations

from ioa_synth.runs.schema import TableSet

#: ``collab_calls``: ``llm_calls`` with the team's columns read from the tags.
COLLAB_VIEW = """CREATE OR REPLACE VIEW collab_calls AS SELECT
    tags->>'task_id' AS task_id, tags->>'config' AS config, stage AS step, tags->>'component' AS component,
    tags->>'kind' AS kind, tags->>'agent' AS agent, * FROM llm_calls"""

COLLAB_TABLES = TableSet(part="collab", version=1, views=(COLLAB_VIEW,))
