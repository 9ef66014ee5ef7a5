"""Forms as files (``meeting serve --export`` and ``meeting answers``), for teams that
collect the answers elsewhere (paper App. D.5's forms, the same rules as the pages).

``--export DIR`` writes, for the session's current phase, one JSON form per participant
(``answers-P1.json`` or ``labels-P1.json``) with the fields to fill set to ``null``, and
the same page as static HTML for reading. ``meeting answers SESSION FILE...`` checks every
filled form against the session and stores them all, or none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ioa_synth.meetings.forms import (SURVEY_ITEMS, VALIDITY_LABELS, FormError, check_answers, check_labels,
                                      divergent, phase)
from ioa_synth.meetings.session import Session
from ioa_synth.core.atomic import write_json_atomic, write_text_atomic


def _header(session: Session, form: str, pid: str) -> dict[str, Any]:
    return {"form": form, "session_id": session.session_id, "participant": pid, "you_are": session.pseudonym(pid)}


def export_forms(session: Session, out: Path) -> list[Path]:
    """Write the forms of the current phase into ``out``; return the paths.

    Raises:
        SessionError: no question sets.
        FormError: every participant has already labelled (nothing left to fill).
    """
    from ioa_synth.meetings.web import answers_page, labels_page

    now = phase(session)
    if now == "done":
        raise FormError("every participant has answered and labelled: there is no form left to fill")
    paths = []
    sets = session.question_sets()
    for pid in session.ids:
        if now == "answering":
            form = {**_header(session, "answers", pid),
                    "sets": {label: [{"n": n, "question": q["question"], "options": q["options"], "answer": None}
                                     for n, q in enumerate(qs, start=1)] for label, qs in sets.items()}}
            page = answers_page(session, pid, "", chosen={}).body
        else:
            if pid in session.labels():
                continue
            form = {**_header(session, "labels", pid), "allowed_labels": list(VALIDITY_LABELS),
                    "questions": [{**d, "label": None} for d in divergent(session)],
                    "survey": {**{item: {label: None for label in sets} for item in SURVEY_ITEMS}, "best": None}}
            page = labels_page(session, pid, "").body
        paths.append(write_json_atomic(out / f"{form['form']}-{pid}.json", form))
        paths.append(write_text_atomic(out / f"{form['form']}-{pid}.html", bytes(page).decode("utf-8")))
    return paths


def form_fields(form: dict[str, Any]) -> dict[str, Any]:
    """The page fields a filled JSON form stands for."""
    fields: dict[str, Any] = {}
    if form.get("form") == "answers":
        for label, questions in (form.get("sets") or {}).items():
            for q in questions:
                fields[f"{label}-{q.get('n')}"] = q.get("answer")
    else:
        for q in form.get("questions") or []:
            fields[f"label-{q.get('set')}-{q.get('n')}"] = q.get("label")
        survey = form.get("survey") or {}
        for item in SURVEY_ITEMS:
            for label, value in (survey.get(item) or {}).items():
                fields[f"{item}-{label}"] = value
        fields["best"] = survey.get("best")
    return fields


def import_forms(session: Session, files: list[Path]) -> dict[str, str]:
    """Check every filled form in ``files`` and store all of them (or, on any error, none).

    Returns ``{participant: form kind}``.

    Raises:
        FormError: a file is unreadable or not a form of this session, a participant appears
            twice, or a form breaks the page rules (the message names the file).
    """
    with session.locked():
        checked: list[tuple[str, str, Any]] = []
        for path in files:
            try:
                form = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise FormError(f"{path}: not a readable JSON form ({exc})") from None
            if not isinstance(form, dict) or form.get("form") not in ("answers", "labels"):
                raise FormError(f"{path}: not an exported meeting form (\"form\" must be answers or labels)")
            if form.get("session_id") != session.session_id:
                raise FormError(f"{path}: a form of another session ({form.get('session_id')!r})")
            pid = form.get("participant")
            if pid not in session.ids:
                raise FormError(f"{path}: unknown participant {pid!r}")
            if any(pid == p for p, _, _ in checked):
                raise FormError(f"{path}: a second form of {pid}")
            check = check_answers if form["form"] == "answers" else check_labels
            try:
                value = check(session, pid, form_fields(form))
            except FormError as exc:
                raise FormError(f"{path}: {exc}") from None
            checked.append((pid, form["form"], value))
        for pid, kind, value in checked:
            if kind == "answers":
                session.write({"answers": value}, "answers", f"{pid}.json")
            else:
                session.write(value, "labels", f"{pid}.json")
    return {pid: kind for pid, kind, _ in checked}
