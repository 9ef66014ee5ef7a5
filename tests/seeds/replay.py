"""A local HTTP server that replays the real recorded API responses in tests/fixtures/seed_apis.

Nothing here invents paper content. Responses are either the recorded bytes as they are,
or *compositions* of recorded pieces:

- arXiv "archive" mode: the 20 real entries of the two recorded ``search_query=testing``
  pages, served newest first (``sortBy=submittedDate``), filtered by a
  ``submittedDate:[A TO B]`` clause and sliced by ``start``/``max_results``, inside the
  recorded feed envelope with ``totalResults`` set to the filtered count. "recorded" mode
  serves the two pages byte for byte by ``start`` (0, 10) and the recorded empty feed after.
- NCBI: eSearch answers ``esearch5.xml`` (``esearch8.xml`` when the term holds ``abcXYZ``);
  eFetch ``db=pmc`` answers a ``<pmc-articleset>`` wrapping the recorded correction notice
  (``efetch_pmc.xml``) and the two recorded PMC OA articles (``.nxml``); eFetch
  ``db=pubmed`` answers the recorded PubMed file holding that id.
- OpenAlex: ``/works`` answers ``results_page_1.json`` for ``cursor=*`` and
  ``results_page_2.json`` (the terminal page) for page 1's ``next_cursor``;
  ``/works/<W id or DOI>`` answers ``W2741809807.json`` for that work, 404 otherwise.

Faults are queued per route with :meth:`ReplayServer.fault` and served before the normal
answer: any status, headers (``Retry-After``) and body, or a body cut short (the full
``Content-Length`` is announced, half the bytes are sent, the connection is closed).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, unquote, urlsplit

from lxml import etree

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "seed_apis"
ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


def arxiv_recording(name: str) -> dict:
    """One recorded arXiv response: ``{"url", "status_code", "body"}`` with ``body`` as bytes."""
    path = next((FIXTURES / "arxiv").glob(f"{name}*.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["body"] = data["body"].encode("latin-1")  # the recorder decoded the bytes as latin-1
    return data


def fixture_bytes(rel: str) -> bytes:
    """Raw bytes of a fixture file (path relative to tests/fixtures/seed_apis)."""
    return (FIXTURES / rel).read_bytes()


@dataclass
class Reply:
    """One HTTP answer; ``truncate`` sends only half of ``body`` under the full Content-Length."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    truncate: bool = False


def _article_xml(data: bytes) -> bytes:
    """The ``<article>`` element of a JATS file, without XML declaration or DOCTYPE."""
    root = etree.fromstring(data, etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=False))
    article = root if etree.QName(root).localname == "article" else root.find("article")
    return etree.tostring(article)


def pmc_articleset() -> bytes:
    """The recorded eFetch wrapper with the two recorded OA articles added after its article."""
    head = fixture_bytes("pmc/efetch_pmc.xml").split(b"<pmc-articleset>")[0]
    parts = [_article_xml(fixture_bytes(f"pmc/{n}")) for n in
             ("efetch_pmc.xml", "pntd.0002065.nxml", "1472-6831-8-11.nxml")]
    return head + b"<pmc-articleset>" + b"".join(parts) + b"</pmc-articleset>\n"


class ArxivArchive:
    """The 20 recorded ``testing`` entries, newest first, as a tiny arXiv query service."""

    def __init__(self) -> None:
        pages = [arxiv_recording("q_testing_s0_m10"), arxiv_recording("q_testing_s10_m10")]
        self.envelope = etree.fromstring(pages[0]["body"])
        entries = [e for p in pages for e in etree.fromstring(p["body"]).iterfind(f"{ATOM}entry")]
        entries.sort(key=lambda e: e.findtext(f"{ATOM}published"), reverse=True)
        self.entries = entries

    @staticmethod
    def _stamp(entry) -> str:
        return re.sub(r"\D", "", entry.findtext(f"{ATOM}published"))[:12]

    def answer(self, params: dict[str, str]) -> bytes:
        """The feed for ``search_query``/``start``/``max_results`` (date window honoured)."""
        m = re.search(r"submittedDate:\[(\d{12}) TO (\d{12})\]", params.get("search_query", ""))
        chosen = [e for e in self.entries if not m or m.group(1) <= self._stamp(e) <= m.group(2)]
        start, size = int(params.get("start", 0)), int(params.get("max_results", 10))
        feed = etree.fromstring(etree.tostring(self.envelope))
        for old in feed.findall(f"{ATOM}entry"):
            feed.remove(old)
        feed.find(f"{OPENSEARCH}totalResults").text = str(len(chosen))
        feed.find(f"{OPENSEARCH}startIndex").text = str(start)
        feed.find(f"{OPENSEARCH}itemsPerPage").text = str(size)
        for entry in chosen[start:start + size]:
            feed.append(etree.fromstring(etree.tostring(entry)))
        return etree.tostring(feed, xml_declaration=True, encoding="UTF-8")


class ReplayServer:
    """Threaded HTTP server on 127.0.0.1 (free port) replaying the fixtures; see module docstring.

    Attributes:
        requests: ``(route, params)`` of every request received, in order; ``params`` also
            holds ``_path`` and the ``_authorization``, ``_from``, ``_user-agent`` headers.
        arxiv_mode: ``"archive"`` (default) or ``"recorded"``.
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.faults: list[tuple[str, Callable[[dict], bool], Reply]] = []
        self.arxiv_mode = "archive"
        self.archive = ArxivArchive()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                server._serve(self, self.path, b"")

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                server._serve(self, self.path, self.rfile.read(length))

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def env(self) -> dict[str, str]:
        """Base-URL variables pointing the three sources at this server."""
        return {"ARXIV_API_URL": f"{self.url}/api/query", "NCBI_EUTILS_URL": f"{self.url}/eutils",
                "OPENALEX_API_URL": f"{self.url}/openalex"}

    def start(self) -> "ReplayServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fault(self, route: str, reply: Reply, when: Callable[[dict], bool] = lambda p: True) -> None:
        """Queue ``reply`` for the next request to ``route`` whose params satisfy ``when``."""
        with self._lock:
            self.faults.append((route, when, reply))

    def count(self, route: str) -> int:
        """How many requests ``route`` received."""
        return sum(r == route for r, _ in self.requests)

    def _serve(self, handler: BaseHTTPRequestHandler, path: str, body: bytes) -> None:
        parts = urlsplit(path)
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        params.update({k: v[-1] for k, v in parse_qs(body.decode()).items()})
        route, params["_path"] = self._route(parts.path), unquote(parts.path)
        for header in ("Authorization", "From", "User-Agent"):
            params[f"_{header.lower()}"] = handler.headers.get(header, "")
        with self._lock:
            self.requests.append((route, params))
            reply = None
            for i, (r, when, queued) in enumerate(self.faults):
                if r == route and when(params):
                    reply = self.faults.pop(i)[2]
                    break
        reply = reply or self._answer(route, params)
        handler.send_response(reply.status)
        for k, v in reply.headers.items():
            handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(reply.body)))
        if reply.truncate:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        handler.wfile.write(reply.body[: len(reply.body) // 2] if reply.truncate else reply.body)
        handler.wfile.flush()

    @staticmethod
    def _route(path: str) -> str:
        if path.endswith("/api/query"):
            return "arxiv"
        if path.endswith("/esearch.fcgi"):
            return "esearch"
        if path.endswith("/efetch.fcgi"):
            return "efetch"
        if path.rstrip("/").endswith("/openalex/works"):
            return "openalex_list"
        if "/openalex/works/" in path:
            return "openalex_work"
        return "unknown"

    def _answer(self, route: str, params: dict[str, str]) -> Reply:
        xml = {"Content-Type": "text/xml; charset=UTF-8"}
        if route == "arxiv":
            return self._arxiv(params)
        if route == "esearch":
            name = "esearch8.xml" if "abcXYZ" in params.get("term", "") else "esearch5.xml"
            return Reply(200, fixture_bytes(f"pmc/{name}"), xml)
        if route == "efetch" and params.get("db") == "pmc":
            return Reply(200, pmc_articleset(), xml)
        if route == "efetch" and params.get("db") == "pubmed":
            for name in ("pubmed1.xml", "pubmed4.xml", "pubmed6.xml"):
                data = fixture_bytes(f"pmc/{name}")
                if f"<PMID Version=\"1\">{params.get('id')}</PMID>".encode() in data:
                    return Reply(200, data, xml)
        js = {"Content-Type": "application/json"}
        if route == "openalex_list":
            page1 = json.loads(fixture_bytes("openalex/results_page_1.json"))
            if params.get("cursor") == "*":
                return Reply(200, fixture_bytes("openalex/results_page_1.json"), js)
            if params.get("cursor") == page1["meta"]["next_cursor"]:
                return Reply(200, fixture_bytes("openalex/results_page_2.json"), js)
        if route == "openalex_work" and re.search(r"(W2741809807|10\.7717/peerj\.4375)$",
                                                   params["_path"], re.I):
            return Reply(200, fixture_bytes("openalex/W2741809807.json"), js)
        return Reply(404, b"", {})

    def _arxiv(self, params: dict[str, str]) -> Reply:
        atom = {"Content-Type": "application/atom+xml; charset=UTF-8"}
        if params.get("id_list"):
            key = params["id_list"].replace("/", "_")
            rec = arxiv_recording(f"id_{key}_s0")
            return Reply(rec["status_code"], rec["body"], atom)
        if self.arxiv_mode == "recorded":
            name = {"0": "q_testing_s0_m10", "10": "q_testing_s10_m10"}.get(params.get("start", ""))
            rec = arxiv_recording(name or "id_0808.05394")  # past the recorded pages: the empty feed
            return Reply(200, rec["body"], atom)
        return Reply(200, self.archive.answer(params), atom)
