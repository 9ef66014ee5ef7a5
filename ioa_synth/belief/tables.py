"""What the belief study keeps in its catalogs (``belief run`` results folders and the
``.calls`` folders of ``belief items import`` and ``belief screen``) besides the runs layer's
tables: the tags of its calls and the view ``belief_calls``.

A study call's key (:func:`ioa_synth.belief.conversation.study_call`) is ``(item, step,
role, 0)``: step = the round, probe step or screening sample; role =
``<component>:<kind>:k<k>:<agent>`` (unique per call, so replay and the sampling seed need
nothing else; nothing reads fields out of it). Its tags are
``{"agent", "component", "k", "kind"}`` (``null`` where the call has none: screening has no
k, the item writer no agent). Version 2 added the tags; its migration fills them on an
earlier release's calls from the role, which it parses this once.
"""

from __future__ import annotations

from ioa_synth.runs.schema import Migration, TableSet

#: ``belief_calls``: ``llm_calls`` with the study's columns read from the tags.
BELIEF_VIEW = """CREATE OR REPLACE VIEW belief_calls AS SELECT
    tags->>'component' AS component, tags->>'kind' AS kind, case_id AS item,
    TRY_CAST(tags->>'k' AS INTEGER) AS k, stage AS round,
    TRY_CAST(tags->>'agent' AS INTEGER) AS agent, * FROM llm_calls"""

#: The tags of an earlier release's study calls, from their role ``component:kind:k<k>:<agent>``.
TAGS_FROM_ROLE = """UPDATE llm_calls SET tags = json_object(
    'agent', TRY_CAST(NULLIF(split_part(role, ':', 4), '') AS INTEGER),
    'component', split_part(role, ':', 1),
    'k', TRY_CAST(NULLIF(substr(split_part(role, ':', 3), 2), '') AS INTEGER),
    'kind', split_part(role, ':', 2))
    WHERE tags IS NULL AND len(string_split(role, ':')) = 4"""

BELIEF_TABLES = TableSet(part="belief", version=2, views=(BELIEF_VIEW,),
                         migrations=(Migration(2, (TAGS_FROM_ROLE,)),))
