"""The two forms of a participant (paper App. D.5) and the rules for storing them, shared by
the answer pages and by ``meeting answers`` (forms filled elsewhere).

Page 1 (phase ``answering``): one option per question of every blinded set, fields
``<label>-<n>`` (``A-1`` = set A, question 1). A second submit replaces the first until
every participant has answered; then the phase closes.

Page 2 (phase ``labelling``): for each divergent question (two participants chose
differently) one validity label, field ``label-<label>-<n>``; the survey per set:
``discovery-<label>`` and ``willingness-<label>`` (Likert 1-5) and one ``best`` set. Stored
once; a second submit is refused.

Every refusal is a :class:`FormError` with a message for the page, and stores nothing.
"""

from __future__ import annotations

from typing import Any, Mapping

from ioa_synth.meetings.session import Session

#: Validity labels of a divergent question (paper App. D.5).
VALIDITY_LABELS: tuple[str, ...] = ("valid", "invalid: no meaningful distinction", "invalid: already discussed",
                                    "invalid: redundant", "invalid: other")
#: Likert scale of the survey.
LIKERT: tuple[int, ...] = (1, 2, 3, 4, 5)
SURVEY_ITEMS: tuple[str, ...] = ("discovery", "willingness")


class FormError(ValueError):
    """A submission that is refused; the message is shown on the page (nothing is stored)."""


def phase(session: Session) -> str:
    """``answering`` until every participant has answered, then ``labelling`` until every
    participant has labelled, then ``done``."""
    if len(session.answers()) < len(session.ids):
        return "answering"
    return "labelling" if len(session.labels()) < len(session.ids) else "done"


def divergent(session: Session) -> list[dict[str, Any]]:
    """Questions on which any two participants chose differently, in set and question
    order: ``{"set", "n", "question", "options", "answers": {participant: letter}}``
    (needs every participant's answers)."""
    answers = session.answers()
    out = []
    for label, questions in session.question_sets().items():
        for n, q in enumerate(questions, start=1):
            chosen = {pid: answers[pid][label][str(n)] for pid in session.ids}
            if len(set(chosen.values())) > 1:
                out.append({"set": label, "n": n, "question": q["question"], "options": q["options"], "answers": chosen})
    return out


def _fields(fields: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v).strip() for k, v in fields.items() if v is not None and str(v).strip()}


def check_answers(session: Session, pid: str, fields: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The page-1 answers of ``pid`` from form ``fields``.

    Raises:
        FormError: the phase is closed, a question is unanswered, an option or a field is unknown.
    """
    if phase(session) != "answering":
        raise FormError("Answers are closed: every participant has answered. Reload the page for the next step.")
    given = {k: v for k, v in _fields(fields).items() if k not in ("token", "phase")}
    sets = session.question_sets()
    answers: dict[str, dict[str, str]] = {label: {} for label in sets}
    missing = []
    for label, questions in sets.items():
        for n, q in enumerate(questions, start=1):
            value = given.pop(f"{label}-{n}", None)
            if value is None:
                missing.append(f"{label}{n}")
            elif value not in q["options"]:
                raise FormError(f"Set {label}, question {n}: there is no option {value!r}.")
            else:
                answers[label][str(n)] = value
    if given:
        raise FormError(f"Unknown field(s) {', '.join(sorted(given))}: nothing was saved.")
    if missing:
        raise FormError(f"Please answer every question (missing: {', '.join(missing)}). Nothing was saved.")
    return answers


def check_labels(session: Session, pid: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The page-2 labels and survey of ``pid`` from form ``fields``.

    Raises:
        FormError: the phase is not open, ``pid`` already submitted, a label is missing or
            names a question that was not shown, a value is out of range.
    """
    now = phase(session)
    if now == "answering":
        raise FormError("Not everyone has answered yet: the questions to label are not ready.")
    if pid in session.labels():
        raise FormError("Your labels and survey are already stored; they cannot be changed.")
    given = {k: v for k, v in _fields(fields).items() if k not in ("token", "phase")}
    shown = {(d["set"], d["n"]) for d in divergent(session)}
    sets = list(session.question_sets())
    labels: dict[str, dict[str, str]] = {label: {} for label in sets}
    for key in [k for k in given if k.startswith("label-")]:
        _, label, n = (key.split("-", 2) + ["", ""])[:3]
        if not n.isdigit() or (label, int(n)) not in shown:
            raise FormError(f"{key}: that question was not shown to you for labelling. Nothing was saved.")
        value = given.pop(key)
        if value not in VALIDITY_LABELS:
            raise FormError(f"{key}: unknown label {value!r}. Nothing was saved.")
        labels[label][n] = value
    missing = [f"{s}{n}" for s, n in sorted(shown) if str(n) not in labels[s]]
    if missing:
        raise FormError(f"Please label every question (missing: {', '.join(missing)}). Nothing was saved.")
    survey: dict[str, Any] = {item: {} for item in SURVEY_ITEMS}
    for item in SURVEY_ITEMS:
        for label in sets:
            value = given.pop(f"{item}-{label}", None)
            if value not in {str(x) for x in LIKERT}:
                raise FormError(f"Please rate {item} of set {label} from 1 to 5. Nothing was saved.")
            survey[item][label] = int(value)
    best = given.pop("best", None)
    if best not in sets:
        raise FormError("Please choose the best set. Nothing was saved.")
    survey["best"] = best
    if given:
        raise FormError(f"Unknown field(s) {', '.join(sorted(given))}: nothing was saved.")
    return {"labels": labels, "survey": survey}


def save_answers(session: Session, pid: str, fields: Mapping[str, Any]) -> None:
    """Check and store (atomically, under the session lock) the page-1 answers of ``pid``."""
    with session.locked():
        session.write({"answers": check_answers(session, pid, fields)}, "answers", f"{pid}.json")


def save_labels(session: Session, pid: str, fields: Mapping[str, Any]) -> None:
    """Check and store (atomically, under the session lock) the page-2 form of ``pid``."""
    with session.locked():
        session.write(check_labels(session, pid, fields), "labels", f"{pid}.json")
