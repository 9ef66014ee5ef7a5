"""The page of each folder kind (handlers of :mod:`ioa_synth.view.app`): the build's cases
table and case page, evaluate's summary, case page and comparison, a belief conversation, a
collab task run, a meeting session, and any folder's calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ioa_synth.view.read import build as build_read
from ioa_synth.view.read import calls as calls_read
from ioa_synth.view.read import evaluate as eval_read
from ioa_synth.view.read import studies
from ioa_synth.view.read.folders import read_json_file

if TYPE_CHECKING:  # pragma: no cover
    from ioa_synth.view.app import Pages


def _filters(request: Request, names: tuple[str, ...]) -> dict[str, str]:
    return {n: request.query_params.get(n, "") for n in names if request.query_params.get(n)}


def _page(request: Request) -> int:
    raw = request.query_params.get("page", "1")
    return int(raw) if raw.isdigit() else 1


def _query(params: dict[str, Any], **change: Any) -> str:
    """``?...`` of ``params`` with ``change`` applied (empty values dropped)."""
    merged = {k: v for k, v in {**params, **change}.items() if v not in (None, "")}
    return "?" + urlencode(merged) if merged else "?"


def folder_page(pages: "Pages", request: Request) -> HTMLResponse:
    folder = pages.folder(request)
    if folder.kind == "build":
        cat = pages.catalog(folder)
        if cat is None:
            raise HTTPException(404)
        filters = _filters(request, ("status", "cell", "type", "gate", "split"))
        sort = request.query_params.get("sort", "case")
        data = build_read.cases_page(cat, filters, sort, _page(request))
        return pages.render("build.html", folder=folder, data=data, filters=filters, sort=sort,
                            query=lambda **c: _query({**filters, "sort": sort}, **c))
    if folder.kind == "evaluate":
        recs = eval_read.records(folder.path, folder.cache)
        filters = _filters(request, ("missed", "type", "domain"))
        abc = {k: sum(getattr(r.metrics, k) for r in recs.values() if r.metrics) for k in "abc"}
        rows = eval_read.case_rows(recs, filters)
        pages_n = max(1, -(-len(rows) // eval_read.PAGE))
        page = min(_page(request), pages_n)
        data = {"page": page, "pages": pages_n, "total": len(rows),
                "rows": rows[(page - 1) * eval_read.PAGE: page * eval_read.PAGE]}
        return pages.render("evaluate.html", folder=folder, summary=eval_read.summary(folder.path), abc=abc,
                            data=data, choices=eval_read.choices(recs), filters=filters,
                            query=lambda **c: _query(filters, **c),
                            others=[f for f in pages.library.folders if f.kind == "evaluate" and f is not folder])
    if folder.kind == "belief":
        return pages.render("belief.html", folder=folder, conversations=studies.belief_list(folder.path),
                            summary=read_json_file(folder.path / "summary.json"),
                            curves=(folder.path / "curves.png").is_file())
    if folder.kind == "collab":
        return pages.render("collab.html", folder=folder, runs=studies.collab_list(folder.path),
                            report=read_json_file(folder.path / "report.json"))
    if folder.kind == "meeting":
        return pages.render("meeting.html", folder=folder, m=studies.meeting(folder.path))
    return pages.render("other.html", folder=folder, manifest=folder.manifest(),
                        has_catalog=pages.catalog(folder) is not None, **studies.other(folder.path, folder.kind))


def calls_page(pages: "Pages", request: Request) -> HTMLResponse:
    folder = pages.folder(request)
    cat = pages.catalog(folder) if folder.kind != "meeting" else None  # its calls name the detectors the pages keep blind
    if cat is None:
        raise HTTPException(404)
    filters = _filters(request, ("component", "step", "status", "via", "unit"))
    data = calls_read.calls_page(cat, filters, _page(request))
    return pages.render("calls.html", folder=folder, data=data, filters=filters,
                        query=lambda **c: _query(filters, **c))


def case_page(pages: "Pages", request: Request) -> HTMLResponse:
    folder = pages.folder(request)
    case_id = request.path_params["case_id"]
    if folder.kind == "build":
        cat = pages.catalog(folder)
        snapshot = pages.library.snapshots.snapshot_dir(folder.path) if cat is not None else None
        data = build_read.case_page(cat, snapshot, case_id) if snapshot is not None else None
        if data is None:
            raise HTTPException(404)
        return pages.render("build_case.html", folder=folder, case_id=case_id, d=data,
                            calls=calls_read.unit_calls(cat, case_id))
    if folder.kind == "evaluate":
        record = eval_read.full_record(folder.path, folder.cache, case_id)
        if record is None:
            raise HTTPException(404)
        return pages.render("evaluate_case.html", folder=folder, r=record)
    raise HTTPException(404)


def compare_page(pages: "Pages", request: Request) -> HTMLResponse:
    ids = [request.query_params.get(k, "") for k in ("a", "b")]
    folders = [pages.library.get(int(i)) if i.isdigit() else None for i in ids]
    if any(f is None or f.kind != "evaluate" for f in folders):
        raise HTTPException(404)
    a, b = folders
    rows = eval_read.compare(eval_read.records(a.path, a.cache), eval_read.records(b.path, b.cache))
    return pages.render("compare.html", a=a, b=b, rows=rows)


def conversation_page(pages: "Pages", request: Request) -> HTMLResponse:
    folder = pages.folder(request)
    name = request.path_params["name"]
    known = {c["name"] for c in studies.belief_list(folder.path)} if folder.kind == "belief" else set()
    data = read_json_file(folder.path / "conversations" / f"{name}.json") if name in known else None
    if not isinstance(data, dict):
        raise HTTPException(404)
    return pages.render("belief_conversation.html", folder=folder, name=name, data=data,
                        conv=studies.belief_conversation(data))


def task_page(pages: "Pages", request: Request) -> HTMLResponse:
    folder = pages.folder(request)
    name = request.path_params["name"]
    record = studies.collab_record(folder.path, name) if folder.kind == "collab" else None
    if record is None:
        raise HTTPException(404)
    cat = pages.catalog(folder)
    calls = calls_read.unit_calls(cat, f"{record.get('task_id')}__{record.get('config')}") if cat is not None else []
    return pages.render("collab_task.html", folder=folder, name=name, r=record, calls=calls)
