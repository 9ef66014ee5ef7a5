"""arXiv fetcher (``arxiv`` library, arXiv API user manual rules).

- Domains: ``ml_research`` = cs.LG, cs.AI, cs.CL, stat.ML; ``software_engineering`` =
  cs.SE; ``business`` = every ``q-fin.*`` subcategory. The query asks for any listing in
  those categories; a result is kept only if its *primary* category is one of them
  (dropped as ``off_domain`` otherwise).
- Politeness: one request at a time, at least 3 s apart (the pacer sits in the
  ``requests`` adapter mounted on ``arxiv.Client``'s session, so retries are paced too);
  pages of at most 2,000; at most 30,000 results per query: results come newest first
  (``sortBy=submittedDate``) and after 30,000 the next query is restricted to
  ``submittedDate:[... TO <oldest seen>]``. The same window trick resumes an interrupted
  run without offsets: ``state["until"]`` is the oldest submission time of the batches
  handled completely; the overlap at the boundary is removed as duplicates.
- Endpoint: ``ARXIV_API_URL`` replaces ``Client.query_url_format`` (the library's own knob).
- Faults: HTTP errors and empty pages are first retried by the library
  (``num_retries``, paced); a page that comes back empty although ``totalResults`` says
  more remain is asked again from the same offset after a backoff (and, if it stays
  empty, taken as the end, noted in the state); a page that comes back short moves the offset by
  what arrived; error entries (``<id>…/api/errors#…</id>``) raise :class:`SourceError`
  with arXiv's message, whatever the HTTP status (a ``requests`` response hook on the
  client's session); titles are kept as given, even ``"0"``.
"""

from __future__ import annotations

import re
from functools import partial
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

import arxiv
from lxml import etree

from ioa_synth.seeds.pace import Batch, RetryLater, SourceError, paced_session
from ioa_synth.seeds.settings import Settings
from ioa_synth.seeds.text import arxiv_summary

DOMAIN_CATEGORIES: dict[str, tuple[str, ...]] = {
    "ml_research": ("cs.LG", "cs.AI", "cs.CL", "stat.ML"),
    "software_engineering": ("cs.SE",),
    "business": ("q-fin.*",),
}
ATOM = "{http://www.w3.org/2005/Atom}"
INTERVAL = 3.0
MAX_PAGE = 2000
LICENSE = "CC0-1.0 (arXiv metadata, incl. abstracts)"
_WITHDRAWN = re.compile(r"\bwithdrawn\b", re.I)
_WITHDRAWN_SUMMARY = re.compile(r"\b(?:has been|is|was) withdrawn\b", re.I)


class _Client(arxiv.Client):
    """``arxiv.Client`` that remembers ``opensearch:totalResults`` of the last page it parsed."""

    total: int | None = None

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0):
        feed = super()._parse_feed(url, first_page=first_page, _try_index=_try_index)
        self.total = feed.header.total_results
        return feed


def reject_error_feed(resp, *args, **kwargs):
    """``requests`` response hook: raise :class:`SourceError` for an arXiv error feed.

    arXiv reports a bad query as an Atom entry whose ``<id>`` is
    ``https://arxiv.org/api/errors#...`` (HTTP 400 today, HTTP 200 in older deployments and
    some mirrors); the library would skip that entry silently or retry a 400 in vain.
    """
    if b"/api/errors#" in resp.content:
        root = etree.fromstring(resp.content, etree.XMLParser(no_network=True, resolve_entities=False))
        for entry in root.iterfind(f"{ATOM}entry"):
            if "/api/errors" in (entry.findtext(f"{ATOM}id") or ""):
                message = " ".join((entry.findtext(f"{ATOM}summary") or "").split())
                raise SourceError(f"arXiv API error (HTTP {resp.status_code}): {message} ({resp.url})")
    return resp


def in_domain(domain: str, primary: str) -> bool:
    """Whether a primary category belongs to ``domain`` (``q-fin.*`` matches every q-fin.X)."""
    for cat in DOMAIN_CATEGORIES[domain]:
        if primary == cat or (cat.endswith(".*") and primary.startswith(cat[:-1])):
            return True
    return False


def _advance(state: dict[str, Any], batch: list[dict[str, Any]]) -> None:
    """Commit a handled batch: ``until`` becomes the oldest submission time seen."""
    stamps = [c["_published"] for c in batch if c["_published"]]
    stamps += [state["until"]] if state.get("until") else []
    state["until"] = min(stamps) if stamps else None


def _stamp(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y%m%d%H%M")


class ArxivSource:
    """Yields batches of candidate records for one domain (see module docstring).

    Args:
        domain: one of :data:`DOMAIN_CATEGORIES`.
        query: extra arXiv query terms ANDed with the categories (``all:testing``).
        since: ``YYYY-MM-DD`` lower bound on the submission date.
        settings: endpoints and pacing.
        page_size: results per request (≤ 2,000).
        max_per_query: results read from one query before narrowing the date window.
    """

    name = "arxiv"

    def __init__(self, domain: str, query: str | None, since: str | None, settings: Settings,
                 page_size: int | None = None, max_per_query: int | None = None) -> None:
        if domain not in DOMAIN_CATEGORIES:
            raise ValueError(f"arXiv has no domain {domain!r} (use one of {', '.join(DOMAIN_CATEGORIES)})")
        self.domain, self.query, self.settings = domain, query, settings
        self.since = since.replace("-", "") + "0000" if since else None
        self.page_size = max(1, min(page_size or settings.arxiv_page_size, MAX_PAGE))
        self.max_per_query = max_per_query or settings.arxiv_max_per_query
        self.backoff = settings.backoff(base=INTERVAL)
        self.client = _Client(page_size=self.page_size, delay_seconds=0, num_retries=2)
        self.client.query_url_format = settings.arxiv_url + "?{}"
        session = paced_session(settings.pacer(INTERVAL), self.backoff, self.client._session)
        session.hooks["response"].append(reject_error_feed)

    @property
    def key(self) -> str:
        """The query without date window, recorded in each record's ``query``."""
        cats = " OR ".join(f"cat:{c}" for c in DOMAIN_CATEGORIES[self.domain])
        base = f"({cats})" if " OR " in cats else cats
        return f"{base} AND ({self.query})" if self.query else base

    def search_query(self, until: str | None) -> str:
        """The full query for a window ending at ``until`` (``YYYYMMDDHHMM``) or unbounded."""
        if not (self.since or until):
            return self.key
        hi = until or _stamp(datetime.now(timezone.utc) + timedelta(days=1))
        return f"{self.key} AND submittedDate:[{self.since or '199101010000'} TO {hi}]"

    def candidate(self, r: arxiv.Result) -> dict[str, Any]:
        """A candidate record from an ``arxiv.Result`` (with ``_flags`` for the filters)."""
        short = r.get_short_id()
        others = [c for c in r.categories if c != r.primary_category]
        withdrawn = bool(_WITHDRAWN.search(r.comment or "")) or bool(
            _WITHDRAWN_SUMMARY.search((r.summary or "")[:300]))
        return {
            "source": "arxiv", "source_id": short, "doi": r.doi or None,
            "title": r.title.strip() if r.title is not None else None,
            "abstract": arxiv_summary(r.summary),
            "categories": [r.primary_category, *others] if r.primary_category else others,
            "year": r.published.year if r.published else None, "license": LICENSE,
            "url": r.entry_id.replace("http://", "https://", 1), "ids": {"arxiv": short, "doi": r.doi},
            "_flags": {"withdrawn": withdrawn, "language": None,
                       "off_domain": not in_domain(self.domain, r.primary_category or "")},
            "_published": _stamp(r.published) if r.published else None,
        }

    def _page(self, query: str, start: int) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``page_size`` candidates from ``start``; second item: an empty page cut it short."""
        search = arxiv.Search(query=query, max_results=start + self.page_size,
                              sort_by=arxiv.SortCriterion.SubmittedDate,
                              sort_order=arxiv.SortOrder.Descending)
        batch: list[dict[str, Any]] = []
        try:
            for result in self.client.results(search, offset=start):
                batch.append(self.candidate(result))
        except arxiv.UnexpectedEmptyPageError:
            return batch, True
        except arxiv.HTTPError as exc:
            raise SourceError(f"arXiv API answered HTTP {exc.status} for {exc.url}") from exc
        return batch, False

    def batches(self, state: dict[str, Any], done: set[str]) -> Iterator[Batch]:
        """Yield ``(candidates, commit)`` per API page; ``commit()`` (called once the page is
        handled) moves ``state["until"]``; ``state["exhausted"]`` is set at the end.

        Raises :class:`SourceError` (API error, HTTP error after retries, persistent empty
        pages) and :class:`~ioa_synth.seeds.pace.RetryLater`.
        """
        empty_tries = 0
        while True:
            until = state.get("until")
            query, start, expected = self.search_query(until), 0, 0
            while start < self.max_per_query:
                batch, cut = self._page(query, start)
                if batch:
                    yield batch, partial(_advance, state, batch)
                    start += len(batch)
                    expected, empty_tries = max(expected, self.client.total or 0), 0
                if cut or (not batch and start < expected):  # an empty page before the end
                    empty_tries += 1
                    if empty_tries > self.backoff.retries:
                        state["exhausted"] = True
                        state["note"] = f"arXiv sent empty pages from {start} of {expected}; stopped there"
                        return
                    self.backoff.pause(empty_tries, None)
                    continue
                if not batch or start >= expected:
                    state["exhausted"] = True
                    return
            if state.get("until") == until:  # a full window within one minute: step past it
                state["until"] = _stamp(datetime.strptime(until, "%Y%m%d%H%M").replace(
                    tzinfo=timezone.utc) - timedelta(minutes=1))


__all__ = ["ArxivSource", "SourceError", "RetryLater", "DOMAIN_CATEGORIES", "in_domain"]
