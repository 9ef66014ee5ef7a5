"""What a live-meeting session keeps in its catalog besides the runs layer's tables: the tags
of its calls and the view ``meeting_calls``.

- ``meeting probe``: a detector's calls go through evaluate's prober
  (:class:`~ioa_synth.probing.calls.CaseCalls`) with the detector's name as the unit;
  tags ``{"component": "prober", "detector", "participant": null}``.
- ``meeting report``: the merge judge's call, unit ``merge:<rule>``; tags
  ``{"component": "merge_judge", "rule"}``.

Version 2 added the tags; its migration fills them on an earlier release's calls.
"""

from __future__ import annotations

from ioa_synth.runs.schema import Migration, TableSet

#: ``meeting_calls``: ``llm_calls`` with the component, detector and merge rule as columns.
MEETING_VIEW = """CREATE OR REPLACE VIEW meeting_calls AS SELECT
    tags->>'component' AS component, tags->>'detector' AS detector, tags->>'rule' AS rule, * FROM llm_calls"""

TAGS_FROM_KEY = (
    """UPDATE llm_calls SET tags = json_object('component', 'prober', 'detector', case_id, 'participant', NULL)
       WHERE tags IS NULL AND role = 'prober'""",
    """UPDATE llm_calls SET tags = json_object('component', 'merge_judge', 'rule', substr(case_id, 7))
       WHERE tags IS NULL AND role = 'merge_judge' AND starts_with(case_id, 'merge:')""",
)

MEETING_TABLES = TableSet(part="meetings", version=2, views=(MEETING_VIEW,),
                          migrations=(Migration(2, TAGS_FROM_KEY),))
