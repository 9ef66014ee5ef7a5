"""Annotation forms generated from the rubric data: a Label Studio project
(tasks JSON + labeling config XML) or a CSV with one row per item.

Nothing here names a dimension: the ratings, their ranges and the level definitions
shown as hints all come from ``ioa_synth/protocol/rubric.json``. The forms are blind to judge
scores: they show the scenario, the members, the misalignment points (both
understandings) and the dialogue turns (utterance and inner thought), never the
``quality`` block.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import polars as pl

from ioa_synth.core.atomic import write_text_atomic
from ioa_synth.build.builddir import AcceptedCase
from ioa_synth.protocol.multiparty import sides_of
from ioa_synth.protocol.rubric import Dimension, load_rubric
from ioa_synth.annotate.sample import DIALOGUE_ITEM, AnnotationError, Manifest, SampledCase, annotation_dir

DIALOGUE_OBJECT = "dialogue"  # name of the Paragraphs object the dialogue ratings point to


def rating_name(item: str, dimension: str) -> str:
    """The Label Studio control name (``from_name``) of one rating, e.g. ``MA1_subtlety``."""
    return f"{item}_{dimension}"


def rating_names(ma_ids: list[str]) -> dict[str, tuple[int, str, str]]:
    """``from_name`` -> (stage, item, dimension) for points ``ma_ids`` and the dialogue."""
    rubric = load_rubric()
    names = {rating_name(m, d.name): (1, m, d.name) for m in ma_ids for d in rubric.stage(1).dimensions}
    names |= {rating_name(DIALOGUE_ITEM, d.name): (2, DIALOGUE_ITEM, d.name) for d in rubric.stage(2).dimensions}
    return names


def point_field(ma_id: str) -> str:
    """Task data key holding the text of point ``ma_id``."""
    return f"point_{ma_id}"


def _hint(d: Dimension) -> str:
    levels = " | ".join(f"{s}: {d.levels[str(s)]}" for s in d.scores)
    return f"{d.name} ({d.min}-{d.max}): {d.question} {levels}"


def labeling_config(ma_ids: list[str], required_points: int) -> str:
    """Label Studio labeling config: the scenario and members, each point with one
    rating per stage-1 dimension, the dialogue as turns with one rating per stage-2
    dimension; every rating preceded by its question and level definitions.
    Ratings of the first ``required_points`` points and of the dialogue are required."""
    rubric = load_rubric()
    root = ET.Element("View")
    ET.SubElement(root, "Header", value="Meeting scenario")
    ET.SubElement(root, "Text", name="scenario", value="$scenario")
    ET.SubElement(root, "Header", value="Participants")
    ET.SubElement(root, "Text", name="members", value="$members")
    for i, ma in enumerate(ma_ids):
        block = ET.SubElement(root, "View", style="border-top: 1px solid #ccc; margin-top: 1em")
        ET.SubElement(block, "Header", value=f"Misalignment point {ma}")
        ET.SubElement(block, "Text", name=f"text_{ma}", value=f"${point_field(ma)}")
        for d in rubric.stage(1).dimensions:
            _rating(block, rating_name(ma, d.name), f"text_{ma}", d, required=i < required_points)
    view = ET.SubElement(root, "View", style="border-top: 1px solid #ccc; margin-top: 1em")
    ET.SubElement(view, "Header", value="Dialogue (utterance, then the speaker's private thought)")
    ET.SubElement(view, "Paragraphs", name=DIALOGUE_OBJECT, value="$turns", layout="dialogue",
                  nameKey="author", textKey="text")
    ET.SubElement(view, "Header", value="Dialogue ratings")
    for d in rubric.stage(2).dimensions:
        _rating(view, rating_name(DIALOGUE_ITEM, d.name), DIALOGUE_OBJECT, d, required=True)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def _rating(parent: ET.Element, name: str, to_name: str, d: Dimension, required: bool) -> None:
    ET.SubElement(parent, "Header", value=_hint(d), size="6")
    ET.SubElement(parent, "Rating", name=name, toName=to_name, maxRating=str(d.max), icon="star", size="medium",
                  required="true" if required else "false")


def _members(c: AcceptedCase) -> str:
    return "\n\n".join(f"{m.id} {m.name}, {m.role}. Expertise: {m.expertise}. Background: {m.background}.\n"
                       f"Private state: {m.private_state}\nHidden assumptions: {'; '.join(m.hidden_assumptions)}"
                       for m in c.profiles.members)


def _scenario(c: AcceptedCase) -> str:
    return c.profiles.meeting_scenario


def _meetings(c: AcceptedCase) -> int:
    """Meetings of the case: 1, the paper's, or K of a series (``build --meetings K``)."""
    return max((getattr(t, "meeting", 1) for t in c.dialogue.turns), default=1)


def _series_line(c: AcceptedCase, p: Any) -> str:
    """A series point's plan, one line: the meeting it is first said in and the one it comes to
    light in (planned: not an implicitness failure), or that it stays hidden; ``""`` for one meeting."""
    if getattr(p, "planted_in", None) is None:
        return ""
    later = (f"comes to light in meeting {p.surfaces_in} (as planned)" if p.surfaces_in
             else f"stays hidden through meeting {_meetings(c)}")
    return f"\nSeries of {_meetings(c)} meetings: first said in meeting {p.planted_in}; {later}"


def _point(c: AcceptedCase, ma_id: str) -> str:
    return _point_text(c, ma_id) + _series_line(c, next(p for p in c.profiles.misalignment_points if p.id == ma_id))


def _point_text(c: AcceptedCase, ma_id: str) -> str:
    names = {m.id: m.name for m in c.profiles.members}
    p = next(p for p in c.profiles.misalignment_points if p.id == ma_id)
    if getattr(p, "between", None):  # a multi-party case: each reading's holders, and who holds neither
        sides = sides_of(p)
        who = {s: ", ".join(f"{i} ({names.get(i, i)})" for i in sides[s]) for s in sides}
        verb = {s: "understands" if len(sides[s]) == 1 else "understand" for s in ("a", "b")}
        return (f"{p.id} [{p.type}] topic: {p.topic}\nSurface form: \"{p.surface_form}\"\n"
                f"{who['a']} {verb['a']}: {p.member_a_understanding}\n"
                f"{who['b']} {verb['b']}: {p.member_b_understanding}\n"
                + (f"Neutral (neither reading): {who['neutral']}\n" if sides["neutral"] else "")
                + f"Why it goes undetected: {p.why_undetected}")
    return (f"{p.id} [{p.type}] topic: {p.topic}\nSurface form: \"{p.surface_form}\"\n"
            f"M1 ({names.get('M1', 'M1')}) understands: {p.member_a_understanding}\n"
            f"M2 ({names.get('M2', 'M2')}) understands: {p.member_b_understanding}\n"
            f"Why it goes undetected: {p.why_undetected}")


def _at(t: Any) -> str:
    """``", meeting k"`` after a series turn's speaker (``build --meetings K``), else ``""``."""
    return f", meeting {t.meeting}" if getattr(t, "meeting", None) is not None else ""


def _turns(c: AcceptedCase) -> list[dict[str, str]]:
    return [{"author": f"{t.speaker_name} ({t.speaker_id}{_at(t)})", "text": f"{t.utterance}\n(thinks: {t.inner_thought})"}
            for t in c.dialogue.turns]


def _transcript(c: AcceptedCase) -> str:
    """The CSV's dialogue column; a series has a ``--- meeting k ---`` line before each meeting."""
    lines, shown = [], None
    for t in c.dialogue.turns:
        meeting = getattr(t, "meeting", None)
        if meeting is not None and meeting != shown:
            lines.append(f"--- meeting {meeting} ---")
            shown = meeting
        lines.append(f"[{t.turn_idx}] {t.speaker_name} ({t.speaker_id}) says: {t.utterance} | thinks: {t.inner_thought}")
    return "\n".join(lines)


def ls_task(c: AcceptedCase, s: SampledCase, ma_ids: list[str]) -> dict[str, Any]:
    """One Label Studio task (``{"data": {...}}``); points the case lacks get a note."""
    data: dict[str, Any] = {"case_id": c.case_id, "item_set": s.item_set, "domain": c.domain,
                            "task_type": c.task_type, "scenario": _scenario(c), "members": _members(c),
                            "turns": _turns(c)}
    for ma in ma_ids:
        data[point_field(ma)] = _point(c, ma) if ma in s.ma_ids else f"(this dialogue has no {ma}: leave its ratings empty)"
    return {"data": data}


def csv_rows(c: AcceptedCase, s: SampledCase) -> list[dict[str, Any]]:
    """One row per item of the case, with context columns and an empty column per dimension."""
    rubric = load_rubric()
    dims = [d.name for _, d in rubric.all_dimensions()]
    base = {"case_id": c.case_id, "item_set": s.item_set, "domain": c.domain, "task_type": c.task_type}
    transcript = _transcript(c)
    rows = []
    for stage, item in s.items():
        per_point = rubric.stage(stage).per_point  # a misalignment point, else the dialogue
        rows.append({"item_id": f"{c.case_id}#{item}", **base, "stage": stage, "item": item,
                     "scenario": _scenario(c), "members": _members(c),
                     "point": _point(c, item) if per_point else "",
                     "dialogue": "" if per_point else transcript, **{d: "" for d in dims}})
    return rows


def guidelines() -> str:
    """Markdown rating guide for CSV annotators, generated from the rubric."""
    rubric = load_rubric()
    lines = ["# Rating guide", "", f"Rubric version {rubric.version}. Fill only the columns of the item's stage "
             "(stage 1: misalignment points, stage 2: dialogues); leave the others empty.", ""]
    for srub in rubric.stages:
        lines += [f"## Stage {srub.stage}: {srub.unit}", ""]
        for d in srub.dimensions:
            lines += [f"### {d.name} ({d.min}-{d.max})", "", d.question, ""]
            lines += [f"- {s}: {d.levels[str(s)]}" for s in d.scores] + [""]
    return "\n".join(lines)


def export(out_dir: Path, manifest: Manifest, records: dict[str, AcceptedCase], fmt: str) -> list[Path]:
    """Write the forms of ``manifest`` under ``DIR/annotation/<split>/`` and return the paths:
    ``label-studio``: ``tasks.json``, ``calibration_tasks.json``, ``labeling_config.xml``;
    ``csv``: ``items.csv``, ``calibration_items.csv``, ``guidelines.md``.

    Raises:
        AnnotationError: a form already there was changed since an export wrote it (or, written
            by a release that kept no digests, differs from what this export writes); nothing
            is written then."""
    folder = annotation_dir(out_dir, manifest.split)
    texts: dict[str, str] = {}
    ma_ids = sorted({m for c in manifest.cases for m in c.ma_ids}, key=lambda m: (len(m), m))
    names = {"sample": ("tasks.json", "items.csv"), "calibration": ("calibration_tasks.json", "calibration_items.csv")}
    paths: list[Path] = []
    for item_set, (json_name, csv_name) in names.items():
        chosen = manifest.of_set(item_set)
        if fmt == "label-studio":
            tasks = [ls_task(records[s.case_id], s, ma_ids) for s in chosen]
            texts[json_name] = json.dumps(tasks, indent=2, ensure_ascii=False) + "\n"
        else:
            rows = [r for s in chosen for r in csv_rows(records[s.case_id], s)]
            frame = pl.DataFrame(rows, schema=_csv_schema())
            texts[csv_name] = frame.write_csv()
    if fmt == "label-studio":
        required = min(len(c.ma_ids) for c in manifest.cases)
        texts["labeling_config.xml"] = labeling_config(ma_ids, required)
    else:
        texts["guidelines.md"] = guidelines()
    written = _written(folder)
    for name, text in texts.items():  # a form filled in since this command wrote it is the annotators' work
        path = folder / name
        if path.is_file() and _sha(path.read_bytes()) not in (written.get(name), _sha(text.encode("utf-8"))):
            raise AnnotationError(f"{path} was changed since it was exported (annotators' work?); move it away "
                                  "first, nothing was written")
    paths = [write_text_atomic(folder / name, text) for name, text in texts.items()]
    write_text_atomic(folder / WRITTEN, json.dumps(written | {n: _sha(t.encode("utf-8")) for n, t in texts.items()},
                                                   indent=1, sort_keys=True) + "\n")
    return paths


#: The digests of the forms as ``annotate export`` last wrote them, so that a re-run replaces
#: its own forms but never one an annotator has filled in.
WRITTEN = "exported_forms.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _written(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / WRITTEN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _csv_schema() -> dict[str, Any]:
    cols = ["item_id", "case_id", "item_set", "domain", "task_type", "stage", "item", "scenario", "members",
            "point", "dialogue"] + [d.name for _, d in load_rubric().all_dimensions()]
    return {c: (pl.Int64 if c == "stage" else pl.String) for c in cols}
