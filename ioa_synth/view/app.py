"""The viewer's ASGI app (starlette): the routes, the one HTML renderer (jinja2 with
autoescape: every string a model wrote is shown as text), and what never reaches a page (an
API key or Authorization value from the environment, a meeting participant's real name).

URLs: ``/`` the index; ``/f/<n>/`` folder ``n``'s page; ``/f/<n>/case/<case id>`` a build or
evaluate case; ``/f/<n>/conversation/<name>`` a belief conversation; ``/f/<n>/task/<name>``
a collab task run; ``/f/<n>/calls`` the calls; ``/f/<n>/curves.png`` a belief run's plot;
``/compare?a=<n>&b=<m>`` two evaluate folders; ``/static/...`` the packaged CSS and script.
No other path is served: no file of a folder is reachable by its path.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ioa_synth.core.templates import template_dir
from ioa_synth.view import STATIC
from ioa_synth.view.read.folders import Folder, Library, summary
from ioa_synth.view.read.snapshot import SnapshotError
from ioa_synth.view.read.studies import real_names

#: Environment variables whose values never appear on a page.
SECRET_VARS = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$")
#: An Authorization header's value, a bearer token or an API key of the common ``sk-...`` form,
#: wherever one might appear in a stored text (a token: 12+ characters with a digit, so that
#: "the bearer shares" stays).
TOKENS = (re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic)\s+)?[^\s\"'<&]+"),
          re.compile(r"(?i)\b(bearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}"),
          re.compile(r"()\bsk-[A-Za-z0-9_-]{16,}"))


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir("view"))), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"
    env.filters["num"] = lambda x: "n/a" if x is None else (f"{x:,.3f}" if isinstance(x, float) else f"{x:,}")
    env.filters["usd"] = lambda x: "unknown" if x is None else f"${x:,.4f}"
    return env


def secrets() -> list[str]:
    """Values of the key-like environment variables (8+ characters), longest first."""
    return sorted({v for k, v in os.environ.items() if SECRET_VARS.search(k) and len(v) >= 8}, key=len, reverse=True)


def scrub(html: str, names: list[str] = ()) -> str:
    """``html`` without any key value, Authorization value or (meeting pages) real name."""
    for value in secrets():
        html = html.replace(value, "[redacted]")
    for pattern in TOKENS:
        html = pattern.sub(r"\1[redacted]", html)
    for name in names:
        html = re.sub(rf"\b{re.escape(name)}\b", "[name withheld]", html)
    return html


class Pages:
    """Renders pages for the folders of one :class:`Library`."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.env = _env()

    def render(self, template: str, status: int = 200, folder: Folder | None = None, **ctx: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(folders=self.library.folders, folder=folder, **ctx)
        names = real_names(folder.path) if folder is not None and folder.kind == "meeting" else []
        return HTMLResponse(scrub(html, names), status_code=status)

    def folder(self, request: Request) -> Folder:
        folder = self.library.get(request.path_params["fid"])
        if folder is None:
            raise HTTPException(404)
        return folder

    def catalog(self, folder: Folder):
        return self.library.catalog(folder)

    def index(self, request: Request) -> HTMLResponse:
        rows = [summary(f, self.catalog) for f in self.library.folders]
        return self.render("index.html", rows=rows, evaluate=[f for f in self.library.folders if f.kind == "evaluate"])


def make_app(library: Library) -> Starlette:
    """The app serving ``library``'s folders (read-only)."""
    from ioa_synth.view import pages as kind_pages

    pages = Pages(library)

    def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        return pages.render("error.html", status=code, message="No such page." if code == 404 else str(exc))

    routes = [
        Route("/", pages.index),
        Route("/f/{fid:int}/", lambda r: kind_pages.folder_page(pages, r)),
        Route("/f/{fid:int}/calls", lambda r: kind_pages.calls_page(pages, r)),
        Route("/f/{fid:int}/case/{case_id:path}", lambda r: kind_pages.case_page(pages, r)),
        Route("/f/{fid:int}/conversation/{name}", lambda r: kind_pages.conversation_page(pages, r)),
        Route("/f/{fid:int}/task/{name:path}", lambda r: kind_pages.task_page(pages, r)),
        Route("/f/{fid:int}/curves.png", lambda r: curves(pages, r)),
        Route("/compare", lambda r: kind_pages.compare_page(pages, r)),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    def unreadable(request: Request, exc: Exception) -> Response:
        return pages.render("error.html", status=503, message=f"This folder's catalog cannot be read now: {exc}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        library.close()  # on Ctrl-C or SIGTERM, before uvicorn re-raises the signal: the copies are removed

    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={404: not_found, 405: not_found, SnapshotError: unreadable})


def curves(pages: Pages, request: Request) -> Response:
    folder = pages.folder(request)
    path = folder.path / "curves.png"
    if folder.kind != "belief" or not path.is_file() or not path.resolve().is_relative_to(folder.path.resolve()):
        raise HTTPException(404)
    return FileResponse(path, media_type="image/png")
