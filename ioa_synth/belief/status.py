"""Where a ``belief run`` results folder stands (``ioa-synth status --out RESULTS``): per
condition (source and attacker count k), the conversations finished out of those the run
set out to make (:func:`ioa_synth.belief.report.expected_conversations`), read from the
conversation records, which a running study writes as each conversation ends."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.belief.report import RECORD_KEYS, ReportError, belief_manifest, expected_conversations
from ioa_synth.core.jsonl import read_json_records
from ioa_synth.runs.folder_status import Group, Progress


def belief_progress(out: Path) -> Progress:
    """One group per condition ``<source> k=<k>``: ``done`` finished conversations of
    ``total`` expected, statuses ``finished`` and ``to do``.

    Raises:
        ReportError: no readable ``run.json`` of a belief run, or an unreadable record.
    """
    manifest = belief_manifest(out)
    convs = read_json_records(sorted((out / "conversations").glob("*.json")), RECORD_KEYS, "conversation record",
                              ReportError)
    expected = expected_conversations(manifest, convs)
    finished: dict[tuple[str, int], int] = {}
    for conv in convs:
        key = (conv["item"]["source"], int(conv["k"]))
        finished[key] = finished.get(key, 0) + 1
    groups = [Group(name=f"{source} k={k}", done=finished.get((source, k), 0), total=n,
                    statuses={"finished": finished.get((source, k), 0), "to do": n - finished.get((source, k), 0)})
              for (source, k), n in sorted(expected.items())]
    return Progress(unit="conversation", groups=groups,
                    notes=["rates: ioa-synth belief report (reports the finished conversations of a partial run)"])
