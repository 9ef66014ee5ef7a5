"""What a series of K = 2..5 meetings (``estimate build --meetings K``,
:mod:`ioa_synth.build.stages_series`) adds to a build's estimate
(:mod:`ioa_synth.build.estimate`): stage 2 is one generator call per meeting, each prompt
showing the earlier meetings' lines, and the stage-2 judge reads the whole series.

The prompts are counted as one meeting's (the series note, about 900 characters, is not
counted), and each meeting is taken to write about one meeting's completion ``e2`` (measured
per call on a series' stored calls, else ``max_tokens``), so:

- stage-2 generator and regeneration calls: K times as many; meeting k's prompt adds the
  lines of the k-1 meetings before it, :data:`LINES_SHARE` of their completions, so one call
  adds ``LINES_SHARE * e2 * (K - 1) / 2`` on average;
- the stage-2 judge: as many calls, its prompt adding the K-1 further meetings' output
  (``judge_share * e2 * (K - 1)``, the share a judge prompt carries of a shown output).
"""

from __future__ import annotations

from dataclasses import replace

from ioa_synth.runs.spend import CallKind

#: Share of a meeting's completion tokens (thoughts and lines) that its lines make up, as a
#: later meeting's prompt shows them (speaker name and utterance only).
LINES_SHARE = 0.5

#: The stage-2 generator call kinds a series writes once per meeting.
PER_MEETING = ("stage 2 generator", "stage 2 regeneration")


def series_kinds(kinds: list[CallKind], meetings: int, e2: float, judge_share: float) -> list[CallKind]:
    """``kinds`` of a one-meeting build as a series of ``meetings`` prices them: stage-2
    generator calls (``calls`` per case) times ``meetings`` with the earlier meetings' lines
    in their prompts (tokens), the stage-2 judge's prompt with the whole series (``e2``: the
    completion tokens of one meeting's call; ``judge_share``: the share of a shown output a
    judge prompt carries)."""
    if meetings == 1:
        return kinds
    out = []
    for kind in kinds:
        if kind.label in PER_MEETING:
            out.append(replace(kind, label=f"{kind.label} ({meetings} meetings)", calls=kind.calls * meetings,
                               prompt=kind.prompt + LINES_SHARE * e2 * (meetings - 1) / 2))
        elif kind.label == "stage 2 judge":
            out.append(replace(kind, prompt=kind.prompt + judge_share * e2 * (meetings - 1)))
        else:
            out.append(kind)
    return out


__all__ = ["LINES_SHARE", "series_kinds"]
