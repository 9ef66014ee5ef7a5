"""``ioa-synth show``'s rich rendering of a :func:`ioa_synth.build.show.case_view`."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ioa_synth.build.show_series import meeting_label
from ioa_synth.build.stages import stage_spec
from ioa_synth.protocol.rubric import load_rubric


def render_case(view: dict[str, Any], console: Console) -> None:
    """Print :func:`case_view` data with rich: header, scenario, members, misalignment
    points, outline, dialogue with inner thoughts, judge scores, gate failures."""
    colour = {"accepted": "green", "discarded": "red", "failed": "red"}.get(view["status"], "yellow")
    head = Text.assemble((view["case_id"], "bold"), "  ", (view["status"], f"bold {colour}"))
    lines: list[Any] = [head]
    if view["seed"]:
        lines.append(Text(f"seed: {view['seed'].get('title', '')} ({view['seed'].get('seed_id', '')})"))
    if view.get("imported"):
        lines.append(Text(f"imported from {view['imported']['source']} (ioa-synth build import): not generated or "
                          "judged by this build"))
    for key in ("discard_reason", "error"):
        if view[key]:
            lines.append(Text(f"{key.replace('_', ' ')}: {view[key]}", style=colour))
    console.print(Panel(Group(*lines), title="ioa-synth show"))
    s1, s2 = view["stage1"], view["stage2"]
    if s1:
        _render_stage_head(console, 1, s1)
        if s1["output"]:
            _render_profiles(console, s1["output"])
    if s2:
        _render_stage_head(console, 2, s2)
        if s2["output"]:
            _render_dialogue(console, s2["output"], s2.get("thoughts_pending", False))
    for stage, s in ((1, s1), (2, s2)):
        if s:
            _render_checks(console, stage, s)


def _render_stage_head(console: Console, stage: int, s: dict[str, Any]) -> None:
    name = stage_spec(stage).name
    if not s["attempts"]:
        console.rule(f"stage {stage} ({name}), imported")
        return
    source = f", written from profiles attempt {s['profiles_attempt']}" if s.get("profiles_attempt") else ""
    console.rule(f"stage {stage} ({name}), attempt {s['attempt']} (attempts: {', '.join(map(str, s['attempts']))})"
                 f"{source}")


def _render_profiles(console: Console, p: dict[str, Any]) -> None:
    console.print(Panel(p["meeting_scenario"], title="meeting scenario"))
    members = Table(title="members", show_lines=True)
    for col in ("id", "name / role", "expertise / background", "private state", "hidden assumptions"):
        members.add_column(col)
    for m in p["members"]:
        members.add_row(m["id"], f"{m['name']}\n{m['role']}", f"{m['expertise']}\n{m['background']}",
                        m["private_state"], "\n".join(f"- {a}" for a in m["hidden_assumptions"]))
    console.print(members)
    points = Table(title="misalignment points", show_lines=True)
    multi = any("between" in m for m in p["misalignment_points"])  # build --participants N > 2: sides by member
    readers = ("side a understands", "side b understands") if multi else ("M1 understands", "M2 understands")
    for col in ("id", "type / topic", "surface form", *readers, "why undetected"):
        points.add_column(col)
    meetings = max((t.get("meeting", 1) for t in p["conversation_outline"]), default=1)
    for m in p["misalignment_points"]:
        ma, a, b = m["id"], m["member_a_understanding"], m["member_b_understanding"]
        if m.get("planted_in") is not None:  # build --meetings K: when it enters and comes to light
            ma += f"\n{meeting_label(m, meetings)}"
        if "between" in m:
            if m.get("neutral"):
                ma += f"\nneutral: {', '.join(m['neutral'])}"
            a, b = (f"({', '.join(m['between'][s])}) {text}" for s, text in (("a", a), ("b", b)))
        points.add_row(ma, f"{m['type']}\n{m['topic']}", m["surface_form"], a, b, m["why_undetected"])
    console.print(points)
    if not p["conversation_outline"]:
        return
    series = any("meeting" in t for t in p["conversation_outline"])
    outline = Table(title="conversation outline")
    for col in ("meeting",) * series + ("turn", "speaker", "description", "MAs"):
        outline.add_column(col)
    for i, t in enumerate(p["conversation_outline"]):
        new = series and (i == 0 or p["conversation_outline"][i - 1]["meeting"] != t["meeting"])
        outline.add_row(*(str(t["meeting"]) if new else "",) * series, str(t["turn"]), t["speaker"], t["description"],
                        ", ".join(t["ma_ids"]), end_section=series and i + 1 < len(p["conversation_outline"])
                        and p["conversation_outline"][i + 1]["meeting"] != t["meeting"])
    console.print(outline)


def _render_dialogue(console: Console, d: dict[str, Any], thoughts_pending: bool = False) -> None:
    if thoughts_pending:
        console.print(Text("the lines are written; the inner thoughts are not yet (the build writes them in a "
                           "second call), and the gates and the judge come after them", style="yellow"))
    meeting = None
    for t in d["turns"]:
        if t.get("meeting") is not None and t["meeting"] != meeting:  # build --meetings K: a rule between meetings
            meeting = t["meeting"]
            console.rule(f"meeting {meeting}", style="dim")
        console.print(Text.assemble((f"[{t['turn_idx']}] {t['speaker_name']} ({t['speaker_id']})", "bold")))
        thought = t["inner_thought"] or ("(not written yet)" if thoughts_pending else "")
        console.print(Text(f"    thinks: {thought}", style="italic dim"))
        console.print(Text(f"    says:   {t['utterance']}"))


def _render_checks(console: Console, stage: int, s: dict[str, Any]) -> None:
    if s["problems"] or s["gate_failures"]:
        body = "\n".join(f"- {p}" for p in s["problems"] + s["gate_failures"])
        console.print(Panel(body, title=f"stage {stage}, attempt {s['attempt']}: rule and gate failures "
                                        "(the judge was not called)", style="red"))
    if not s["verdicts"]:
        return
    rubric = load_rubric()
    dims = {d.name: d.max for d in rubric.stage(stage).dimensions}
    need = rubric.threshold(stage)
    table = Table(title=f"stage {stage}, attempt {s['attempt']}: judge scores (of the maximum; red: below θ{stage})",
                  show_lines=True)
    for col in ("judge", "item", *dims, "feedback"):
        table.add_column(col)
    for v in s["verdicts"]:
        fb = v["feedback"] + (f"\n[red]judge inconsistency: {v['inconsistency']}[/red]" if v["inconsistency"] else "")
        table.add_row(f"{v['judge_role']}\n{v['judge_model']}", v["item"],
                      *(_score(v["scores"].get(d), top, need.get(d)) for d, top in dims.items()), fb)
    console.print(table)


def _score(score: int | None, top: int, need: int | None) -> Text:
    """A judge's score as ``2/3``, red when below the stage's θ (``need``)."""
    if score is None:
        return Text("")
    return Text(f"{score}/{top}", style="red" if need is not None and score < need else "")
