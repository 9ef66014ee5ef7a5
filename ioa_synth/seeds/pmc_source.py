"""PubMed Central fetcher (``Bio.Entrez`` eSearch + eFetch, JATS parsed with lxml).

- Domain ``medicine``: PMC open-access articles (``"open access"[filter]``) with an
  abstract; articles without one are dropped as ``no_abstract`` (PMC has no reliable
  has-abstract filter: ``hasabstract`` is a PubMed filter, PMC reads it as free text).
- Politeness (NCBI E-utilities usage guidelines): at most 3 requests/s, 10 with
  ``NCBI_API_KEY``; ``NCBI_EMAIL`` and ``tool=ioa-synth`` sent with every request.
  ``Bio.Entrez`` keeps its own 3/s guard; ours adds backoff with jitter and
  ``Retry-After`` (``Entrez.max_tries`` is set to 1 so failures reach it).
- Endpoint: ``Bio.Entrez`` builds ``https://eutils.ncbi.nlm.nih.gov/entrez/eutils/<tool>.fcgi``
  inside each function and has no base-URL setting. When ``NCBI_EUTILS_URL`` differs,
  :func:`entrez_session` wraps the private ``Entrez._build_request`` for the duration of
  the fetch to swap that prefix, and restores it afterwards.
- Resume: ``state["retstart"]`` is the next eSearch offset; ids already kept or dropped are
  not fetched again.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import socket
import re
import urllib.error
import warnings
from typing import Any, Iterator

from Bio import Entrez
from lxml import etree

from ioa_synth.seeds.pace import Batch, SourceError, no_commit, parse_retry_after
from ioa_synth.seeds.settings import EUTILS_DEFAULT, Settings
from ioa_synth.seeds.text import element_text, jats_abstract

TERM = '"open access"[filter]'
ID_PAGE = 500
FETCH_BATCH = 20
_XML = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=False, huge_tree=True)
#: Titles of retraction/withdrawal notices ("Retraction: X", "Retraction Note to: X", "RETRACTED: X"),
#: not of papers about retractions ("Retractions in psychiatry journals").
_NOTICE_TITLE = re.compile(r"\s*(?:retraction|retracted|withdrawn|withdrawal)\b(?:\s+(?:note|notice|statement|article))?"
                           r"\s*(?::|of\b|to\b|for\b|[-–—]|$)", re.I)
_RETRACTION_TYPES = frozenset({"retraction", "retraction-notice", "withdrawal", "removal-notice"})


@contextlib.contextmanager
def entrez_session(settings: Settings):
    """Configure ``Bio.Entrez`` (email, API key, tool, one try, base URL) and restore it after."""
    saved = (Entrez.email, Entrez.api_key, Entrez.tool, Entrez.max_tries, Entrez._build_request)
    original = Entrez._build_request
    Entrez.email, Entrez.api_key, Entrez.tool = settings.ncbi_email, settings.ncbi_api_key, "ioa-synth"
    Entrez.max_tries = 1
    if settings.eutils_url != EUTILS_DEFAULT:
        def build(cgi, *args, **kwargs):
            return original(cgi.replace(EUTILS_DEFAULT, settings.eutils_url, 1), *args, **kwargs)
        Entrez._build_request = build
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"\s*Email address is not specified")
            yield
    finally:
        Entrez.email, Entrez.api_key, Entrez.tool, Entrez.max_tries, Entrez._build_request = saved


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 429 or exc.code >= 500
    return isinstance(exc, (urllib.error.URLError, http.client.HTTPException, socket.timeout,
                            ConnectionError, etree.XMLSyntaxError, _Truncated))


def _retry_after(exc: BaseException) -> float | None:
    if isinstance(exc, urllib.error.HTTPError) and exc.headers is not None:
        return parse_retry_after(exc.headers.get("Retry-After"))
    return None


class _Truncated(Exception):
    """An E-utilities answer that parsed but is cut short."""


def _first(el: etree._Element | None, path: str) -> etree._Element | None:
    return None if el is None else el.find(path)


def _license(meta: etree._Element) -> str | None:
    lic = meta.find("{*}permissions/{*}license")
    if lic is None:
        return None
    ref = lic.find("{*}license_ref")
    href = lic.get("{http://www.w3.org/1999/xlink}href")
    if ref is not None and (ref.text or "").strip():
        return ref.text.strip()
    if href:
        return href
    text = element_text(lic)
    return lic.get("license-type") or (text.split(". ")[0][:200] if text else None)


def _year(meta: etree._Element) -> int | None:
    for kind in ("epub", "ppub", "collection", "pub", None):
        for date in meta.iterfind("{*}pub-date"):
            if kind is None or kind in (date.get("pub-type"), date.get("date-type")):
                year = _first(date, "{*}year")
                if year is not None and (year.text or "").strip().isdigit():
                    return int(year.text.strip())
    return None


def article_candidate(article: etree._Element) -> dict[str, Any] | None:
    """A candidate record from one JATS ``<article>``; None if it has no PMC id."""
    meta = article.find("{*}front/{*}article-meta")
    if meta is None:
        return None
    ids = {a.get("pub-id-type"): (a.text or "").strip() for a in meta.iterfind("{*}article-id")}
    pmc = (ids.get("pmc") or ids.get("pmcid") or "").upper().removeprefix("PMC")
    if not pmc.isdigit():
        return None
    title_el = meta.find("{*}title-group/{*}article-title")
    title = element_text(title_el) if title_el is not None else None
    journal = article.find("{*}front/{*}journal-meta//{*}journal-title")
    subjects = [element_text(s) for s in meta.iterfind("{*}article-categories//{*}subject")]
    kind = (article.get("article-type") or "").lower()
    retracted = kind in _RETRACTION_TYPES or bool(_NOTICE_TITLE.match(title or ""))
    lang = article.get("{http://www.w3.org/XML/1998/namespace}lang") or "en"
    source_id = f"PMC{pmc}"
    return {
        "source": "pmc", "source_id": source_id, "doi": ids.get("doi") or None,
        "title": title, "abstract": jats_abstract(article),
        "categories": subjects + ([f"journal:{element_text(journal)}"] if journal is not None else []),
        "year": _year(meta), "license": _license(meta),
        "url": f"https://pmc.ncbi.nlm.nih.gov/articles/{source_id}/",
        "ids": {"pmcid": source_id, "pmid": ids.get("pmid"), "doi": ids.get("doi")},
        "_flags": {"withdrawn": retracted, "language": lang},
    }


def parse_articles(data: bytes) -> list[etree._Element]:
    """The ``<article>`` elements of an eFetch answer (``<pmc-articleset>`` or one ``<article>``).

    Raises :class:`SourceError` for an E-utilities error document.
    """
    root = etree.parse(io.BytesIO(data), _XML).getroot()
    name = etree.QName(root).localname
    if name == "article":
        return [root]
    if name == "pmc-articleset":
        return list(root.iterfind("{*}article"))
    message = " ".join(element_text(root).split())[:300]
    raise SourceError(f"NCBI eFetch returned <{name}>: {message}")


class PmcSource:
    """Yields batches of candidate records for ``medicine`` (see module docstring)."""

    name = "pmc"

    def __init__(self, domain: str, query: str | None, since: str | None, settings: Settings,
                 id_page: int = ID_PAGE, fetch_batch: int = FETCH_BATCH) -> None:
        if domain != "medicine":
            raise ValueError(f"PMC serves the medicine domain, not {domain!r}")
        self.query, self.since, self.settings = query, since, settings
        self.id_page, self.fetch_batch = id_page, fetch_batch
        self.pacer = settings.pacer(0.1 if settings.ncbi_api_key else 1 / 3)
        self.backoff = settings.backoff(base=1.0)

    @property
    def key(self) -> str:
        """The eSearch term, recorded in each record's ``query``."""
        return f"{TERM} AND ({self.query})" if self.query else TERM

    def _call(self, fn, parse):
        def once():
            with self.pacer.lock:
                self.pacer.wait()
                handle = fn()
                try:
                    data = handle.read()
                finally:
                    handle.close()
            return parse(data if isinstance(data, bytes) else data.encode("utf-8"))
        return self.backoff.call(once, _transient, _retry_after)

    def search(self, retstart: int) -> tuple[list[str], int]:
        """One eSearch page: ``(ids, total count)``; raises :class:`SourceError` on an API error."""
        extra: dict[str, Any] = {}
        if self.since:
            extra = {"mindate": self.since.replace("-", "/"), "maxdate": "3000", "datetype": "pdat"}

        def parse(data: bytes) -> dict:
            try:
                return Entrez.read(io.BytesIO(data))
            except (Entrez.Parser.CorruptedXMLError, Entrez.Parser.NotXMLError) as exc:
                raise _Truncated(str(exc)) from exc

        result = self._call(lambda: Entrez.esearch(db="pmc", term=self.key, retstart=retstart,
                                                   retmax=self.id_page, **extra), parse)
        if result.get("ERROR"):
            raise SourceError(f"NCBI eSearch error: {result['ERROR']}")
        return [str(i) for i in result.get("IdList", [])], int(result.get("Count", 0))

    def fetch(self, ids: list[str]) -> list[etree._Element]:
        """The JATS articles of ``ids`` (eFetch ``db=pmc``)."""
        return self._call(lambda: Entrez.efetch(db="pmc", id=",".join(ids), retmode="xml"),
                          parse_articles)

    def batches(self, state: dict[str, Any], done: set[str]) -> Iterator[Batch]:
        """Yield ``(candidates, commit)`` per eFetch; ids asked for but not returned come back
        as ``{"source_id": ..., "_flags": {"unavailable": True}}``."""
        with entrez_session(self.settings):
            while True:
                start = state.get("retstart", 0)
                ids, count = self.search(start)
                if not ids:
                    state["exhausted"] = True
                    return
                todo = [i for i in ids if f"PMC{i}" not in done]
                for k in range(0, len(todo), self.fetch_batch):
                    asked = todo[k:k + self.fetch_batch]
                    found = [c for c in map(article_candidate, self.fetch(asked)) if c]
                    got = {c["source_id"] for c in found}
                    missing = [{"source": "pmc", "source_id": f"PMC{i}", "_flags": {"unavailable": True}}
                               for i in asked if f"PMC{i}" not in got]
                    yield found + missing, no_commit  # handled ids are skipped on resume
                state["retstart"] = start + len(ids)
                if state["retstart"] >= count:
                    state["exhausted"] = True
                    return
