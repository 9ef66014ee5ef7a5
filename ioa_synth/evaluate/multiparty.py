"""Evaluation of multi-party cases (meetings of 3..6 participants, built with ``build
--participants N``); a two-person case never takes these paths and is scored exactly as
the paper's §4.1-4.2 protocol says.

What changes for N > 2 (docs/evaluate.md, "Meetings of more than two people"):

- **simulator**: one call per participant per rollout, each with that participant's full
  profile and own inner thoughts and every *other* participant's public profile
  (``evaluate_multi/simulator.jinja2``);
- **divergence**: a question diverges when the participants do not all choose the same
  option (for two people: when they differ, as before);
- **validity filter**: shown every participant's answer, one by one, and each point's sides
  by participant (``evaluate_multi/validity_filter.jinja2``); its reply is unchanged;
- **found rule**: a question *separates* a point when every participant on side a chose one
  option, every participant on side b chose one option, and the two differ (neutral
  participants do not count). A question the filter attributes to a point counts as
  Category A only when it separates that point's sides; otherwise it is a real but
  unplanted difference, Category B (the record keeps the filter's id in ``filter`` and
  lists the points each question separates in ``separates``).

P, R and F1 are then computed as for two people (:func:`~ioa_synth.evaluate.scoring.prf`).
"""

from __future__ import annotations

from typing import Any

from ioa_synth.evaluate.access import filter_context
from ioa_synth.probing.access import FULL_PROFILE_FIELDS, PUBLIC_PROFILE_FIELDS, profile_view, transcript_view
from ioa_synth.probing.cases import EvalCase, EvalProfiles
from ioa_synth.protocol.multiparty import MAX_PARTICIPANTS, MIN_PARTICIPANTS, member_ids, side_problems, sides_of

#: The capability of the multi-party simulator and filter templates (``evaluate_multi/<file>``):
#: a capability of its own, fingerprinted only by runs over multi-party cases, so that a
#: two-person run's setup stays as it was.
MULTI_CAPABILITY = "evaluate_multi"

#: The two-person protocol's participants, in the order their calls are made.
DYAD = ("M1", "M2")

TEMPLATES = {"simulator": "evaluate_multi/simulator.jinja2", "filter": "evaluate_multi/validity_filter.jinja2",
             "items": "evaluate_multi/validity_filter_items.jinja2"}


def is_multi(case: EvalCase) -> bool:
    """True for a case of more than two participants."""
    return len(case.profiles.members) > 2


def multi_party_members(ids: list[str]) -> bool:
    """True when sorted member ``ids`` are M1..MN of a multi-party case (N = 3..6)."""
    return MIN_PARTICIPANTS < len(ids) <= MAX_PARTICIPANTS and sorted(member_ids(len(ids))) == ids


def sides_problem(profiles: EvalProfiles) -> str | None:
    """``"<field>: <problem>"`` of the first point of a multi-party case's ``profiles`` whose
    sides are missing or wrong (``between`` must name two disjoint sides of members, ``neutral``
    the rest: :func:`~ioa_synth.protocol.multiparty.side_problems`); None for two people or
    when every point names its sides."""
    n = len(profiles.members)
    if n <= 2:
        return None
    for i, p in enumerate(profiles.misalignment_points):
        wrong = (["no 'between' (the participants on each side)"] if not p.between
                 else side_problems(p.model_dump(), member_ids(n)))
        if wrong:
            return f"profiles.misalignment_points.{i}.between: {wrong[0]}"
    return None


def participants_of(case: EvalCase) -> tuple[str, ...]:
    """The participants the simulator plays, in call order: ``M1, M2`` for two people,
    ``M1..MN`` for N."""
    return DYAD if not is_multi(case) else tuple(member_ids(len(case.profiles.members)))


def simulator_context(case: EvalCase, participant: str) -> dict[str, Any]:
    """Template context of the multi-party simulator playing ``participant``: own full
    profile and own inner thoughts, every other participant's public profile
    (``other_profiles``), every utterance; never a point or another's private fields."""
    others = [m for m in case.profiles.members if m.id != participant]
    return {"self_profile": profile_view(case.member(participant), FULL_PROFILE_FIELDS),
            "other_profiles": [profile_view(m, PUBLIC_PROFILE_FIELDS) for m in others],
            "transcript": transcript_view(case, frozenset({participant}))}


def multi_filter_context(case: EvalCase) -> dict[str, Any]:
    """The validity filter's context (:func:`~ioa_synth.evaluate.access.filter_context`)
    with each point's ``side_a``, ``side_b`` and ``neutral`` member ids."""
    ctx = filter_context(case)
    sides = {p.id: sides_of(p.model_dump()) for p in case.profiles.misalignment_points}
    ctx["misalignment_points"] = [m | {"side_a": sides[m["id"]]["a"], "side_b": sides[m["id"]]["b"],
                                       "neutral": sides[m["id"]]["neutral"]} for m in ctx["misalignment_points"]]
    return ctx


def case_sides(case: EvalCase) -> dict[str, dict[str, list[str]]]:
    """``{MA id: {"a": [...], "b": [...], "neutral": [...]}}`` of ``case``."""
    return {p.id: sides_of(p.model_dump()) for p in case.profiles.misalignment_points}


def diverges(options: dict[str, Any]) -> bool:
    """True when the participants' ``options`` (``{participant: letter}``) are not all the same."""
    return len(set(options.values())) > 1


def separates(options: dict[str, Any], sides: dict[str, list[str]]) -> bool:
    """True when ``options`` (``{participant: letter}``) agree within side a, agree within
    side b and differ between them; neutral participants' options do not count."""
    picked = [{options.get(m) for m in sides[s]} for s in ("a", "b")]
    return all(len(p) == 1 and None not in p for p in picked) and picked[0] != picked[1]


def separated(options: dict[str, Any], sides: dict[str, dict[str, list[str]]]) -> list[str]:
    """The ids of the points (``sides`` of :func:`case_sides`) whose sides ``options`` separate."""
    return [ma for ma, s in sides.items() if separates(options, s)]


def found(category: str, reason: str | None, ma: str | None, separating: list[str]
          ) -> tuple[str, str | None, str | None]:
    """The found rule: a Category-A question attributed to ``ma`` stays A only when it
    separates that point's sides (``separating``); otherwise it becomes B, unattributed."""
    if category == "A" and ma not in separating:
        return "B", None, None
    return category, reason, ma


__all__ = ["DYAD", "MULTI_CAPABILITY", "TEMPLATES", "case_sides", "diverges", "found", "is_multi",
           "multi_filter_context", "multi_party_members", "participants_of", "separated", "separates", "sides_problem",
           "simulator_context"]
