"""What evaluate (and the training reward, which calls through the same
:class:`~ioa_synth.probing.calls.CaseCalls`) keeps in its catalog besides the runs
layer's tables: the tags of its calls and the view ``evaluate_calls``.

A call's key is ``(case_id, step, role, attempt)``: step 0 prober, 1 simulator, 2 validity
filter; role the component, ``simulator:<participant>`` for the simulator; attempt the
simulator's rollout (1 elsewhere). Its tags are ``{"component", "participant"}``
(participant ``null`` but for the simulator). Version 2 added the tags; its migration
fills them on the calls of an earlier release from the role.
"""

from __future__ import annotations

from ioa_synth.runs.schema import Migration, TableSet

#: ``evaluate_calls``: ``llm_calls`` with the component, participant and rollout as columns.
EVALUATE_VIEW = """CREATE OR REPLACE VIEW evaluate_calls AS SELECT
    tags->>'component' AS component, tags->>'participant' AS participant,
    CASE WHEN tags->>'component' = 'simulator' THEN attempt END AS rollout, * FROM llm_calls"""

#: The tags of an earlier release's evaluate calls, from their role (``simulator:M1``).
TAGS_FROM_ROLE = """UPDATE llm_calls SET tags = json_object(
    'component', split_part(role, ':', 1), 'participant', NULLIF(split_part(role, ':', 2), ''))
    WHERE tags IS NULL AND (role IN ('prober', 'validity_filter') OR role LIKE 'simulator:%')"""

EVALUATE_TABLES = TableSet(part="evaluate", version=2, views=(EVALUATE_VIEW,),
                           migrations=(Migration(2, (TAGS_FROM_ROLE,)),))
