"""The answer pages of a session (paper App. D.5): a Starlette app served by uvicorn,
server-rendered HTML forms, no JavaScript.

Each participant has one link ``/p/<token>`` (``private/links.json``). While anyone has not
answered, the page shows page 1 (every blinded set, one option per question); once all
have answered it shows page 2 (the divergent questions with everyone's answers, a validity
label each, the survey); after that a thank-you note. A refused submission (wrong token,
missing answer, a label for a question not shown, a closed phase) re-shows the page with
the reason and stores nothing. Pages name sets only by their blind label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from ioa_synth.meetings.forms import (LIKERT, VALIDITY_LABELS, FormError, divergent, phase, save_answers,
                                      save_labels)
from ioa_synth.meetings.session import Session

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                          autoescape=True, undefined=jinja2.StrictUndefined)

#: Survey items and how the page asks them.
SURVEY_WORDING = (("discovery", "Did this set help you discover hidden disagreements?"),
                  ("willingness", "Would you use a tool that asks questions like these after your meetings?"))


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``name`` (a template file) rendered with ``context``."""
    context.setdefault("message", None)
    return HTMLResponse(_ENV.get_template(name).render(**context), status_code=status)


def answers_page(session: Session, pid: str, token: str, chosen: Mapping[str, str] | None = None,
                 message: str | None = None, status: int = 200) -> HTMLResponse:
    """Page 1 of ``pid``: every set; the saved answers checked (or ``chosen`` after a refusal)."""
    answers = session.answers()
    saved = answers.get(pid)
    if chosen is None:
        chosen = {f"{label}-{n}": letter for label, qs in (saved or {}).items() for n, letter in qs.items()}
    return render("answers.html", status, me=session.pseudonym(pid), sets=session.question_sets(), chosen=chosen,
                  saved=saved is not None and message is None, waiting=len(session.ids) - len(answers),
                  action=f"/p/{token}/answers", message=message)


def labels_page(session: Session, pid: str, token: str, chosen: Mapping[str, str] | None = None,
                message: str | None = None, status: int = 200) -> HTMLResponse:
    """Page 2 of ``pid``: the divergent questions with everyone's answers, labels, survey."""
    def who(p: str) -> str:
        return f"{session.pseudonym(p)} (you)" if p == pid else session.pseudonym(p)

    questions = [{**d, "answers": {who(p): letter for p, letter in d["answers"].items()}} for d in divergent(session)]
    return render("labels.html", status, me=session.pseudonym(pid), questions=questions,
                  sets=list(session.question_sets()), validity=VALIDITY_LABELS, likert=LIKERT,
                  survey_items=SURVEY_WORDING, chosen=chosen or {}, action=f"/p/{token}/labels", message=message)


def make_app(folder: Path) -> Starlette:
    """The ASGI app of the session in ``folder`` (checked: it has question sets).

    Raises:
        SessionError: not a session, or no question sets yet.
    """
    session = Session(folder)
    session.question_sets()

    def participant(request: Request) -> tuple[str, str] | None:
        token = request.path_params["token"]
        pid = Session(folder).links().get(token)
        return (token, pid) if pid else None

    def bad_link() -> HTMLResponse:
        return render("message.html", 404, heading="Unknown link",
                      text="This link does not belong to a participant of this meeting. Use the personal link you "
                           "were sent; nothing was stored.")

    async def home(request: Request) -> HTMLResponse:
        return render("message.html", heading="Meeting questions",
                      text="Open the personal link you were sent to answer.")

    async def page(request: Request) -> HTMLResponse:
        who = participant(request)
        if who is None:
            return bad_link()
        token, pid = who
        s = Session(folder)
        now = phase(s)
        if now == "answering":
            return answers_page(s, pid, token)
        if pid not in s.labels():
            return labels_page(s, pid, token)
        return render("message.html", heading="Thank you",
                      text="Your answers, labels and survey are stored. "
                           + ("Everyone has finished." if now == "done" else "Others are still labelling."))

    def form_handler(save: Callable[[Session, str, dict[str, str]], Any],
                     closed: Callable[[Session, str, str], HTMLResponse | None],
                     again: Callable[..., HTMLResponse]) -> Callable[[Request], Any]:
        """A POST handler: ``save`` the form atomically, or (a :class:`FormError`) answer with
        ``closed(session, pid, message)`` when the phase no longer takes it, else the page
        ``again`` with the choices kept and the message; nothing is stored either way."""
        async def post(request: Request) -> Any:
            who = participant(request)
            if who is None:
                return bad_link()
            token, pid = who
            fields = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
            s = Session(folder)
            try:
                await run_in_threadpool(save, s, pid, fields)
            except FormError as exc:
                return closed(s, pid, str(exc)) or again(s, pid, token, chosen=fields, message=str(exc), status=400)
            return RedirectResponse(f"/p/{token}", status_code=303)
        return post

    post_answers = form_handler(
        save_answers, lambda s, pid, msg: (render("message.html", 409, heading="Answers are closed", text=msg)
                                           if phase(s) != "answering" else None), answers_page)
    post_labels = form_handler(
        save_labels, lambda s, pid, msg: (render("message.html", 409, heading="Nothing stored", text=msg)
                                          if phase(s) == "answering" or pid in s.labels() else None), labels_page)

    return Starlette(routes=[Route("/", home), Route("/p/{token}", page),
                             Route("/p/{token}/answers", post_answers, methods=["POST"]),
                             Route("/p/{token}/labels", post_labels, methods=["POST"])])


def serve(folder: Path, host: str, port: int) -> None:
    """Serve the session's pages with uvicorn until Ctrl-C."""
    import uvicorn

    uvicorn.run(make_app(folder), host=host, port=port, log_level="warning")
