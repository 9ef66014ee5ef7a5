"""OpenAlex fetcher (``pyalex``, OpenAlex API documentation rules).

- ``law``: works whose primary topic is in the Law subfield (OpenAlex subfield 3308).
- ``cross_disciplinary``: works balanced across the four OpenAlex domains (Life, Social,
  Physical, Health Sciences): one cursor per domain, polled in turn, each capped at
  ``ceil(max / 4)`` kept records.
- ``--doi-file``: each DOI resolved as a single work (``/works/https://doi.org/<doi>``), for
  any domain ("DOI-indexed records"); unknown DOIs are dropped as ``not_found``.
- Server-side filters ``has_abstract``, ``is_retracted:false``, ``is_paratext:false`` and
  ``language:en`` save budget; the same conditions are checked again on each work.
- Credentials: ``OPENALEX_API_KEY`` (Bearer) and ``OPENALEX_EMAIL`` (``From``) through
  ``pyalex.config``; cursor paging (``cursor=*`` then ``meta.next_cursor``) with the cursor
  kept in the state for resuming. An empty page while ``meta.count`` says more remain is
  retried with backoff before it is believed.
- Endpoint: pyalex hard-codes ``api.openalex.org`` in ``BaseOpenAlex.url`` (its
  ``config.openalex_url`` is not used there), so :class:`Works` overrides ``url`` to put
  ``OPENALEX_API_URL`` in front of the same path and query, and ``_get_from_url`` to use our
  paced, retrying session. A 429 whose ``Retry-After`` exceeds 15 minutes (the daily budget
  is spent) raises :class:`~ioa_synth.seeds.pace.RetryLater`.
"""

from __future__ import annotations

import contextlib
import math
from functools import partial
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit, urlunsplit

import pyalex
import requests

from ioa_synth.seeds.ids import normalize_doi
from ioa_synth.seeds.pace import Batch, SourceError, paced_session
from ioa_synth.seeds.settings import Settings
from ioa_synth.seeds.text import openalex_abstract, strip_markup

LAW_SUBFIELD = "3308"
OPENALEX_DOMAINS = ("1", "2", "3", "4")  # Life, Social, Physical, Health Sciences
PER_PAGE = 200
INTERVAL = 0.1  # OpenAlex: at most 10 requests per second
LICENSE = "CC0-1.0 (OpenAlex data)"
EMPTY_PAGE_RETRIES = 3


class Works(pyalex.Works):
    """``pyalex.Works`` bound to a base URL and session (the class name gives the ``/works`` path)."""

    base_url = "https://api.openalex.org"
    session: requests.Session | None = None

    @property
    def url(self) -> str:
        """pyalex's URL with scheme, host and base path taken from :attr:`base_url`."""
        parts, base = urlsplit(super().url), urlsplit(self.base_url)
        return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + parts.path, parts.query, ""))

    def _get_from_url(self, url, session=None):
        return super()._get_from_url(url, self.session or session)


@contextlib.contextmanager
def pyalex_config(settings: Settings):
    """Set ``pyalex.config`` email/api_key (no pyalex retries: ours do it) and restore it after."""
    saved = dict(pyalex.config)
    pyalex.config.email, pyalex.config.api_key = settings.openalex_email, settings.openalex_api_key
    pyalex.config.max_retries = 0
    try:
        yield
    finally:
        pyalex.config.update(saved)


def work_candidate(work: dict[str, Any]) -> dict[str, Any]:
    """A candidate record from an OpenAlex work object."""
    work = pyalex.Work(work)
    wid = str(work.get("id") or "").rsplit("/", 1)[-1]
    ids = work.get("ids") or {}
    title = work.get("title") if work.get("title") is not None else work.get("display_name")
    topics = [" > ".join(t[k]["display_name"] for k in ("domain", "field", "subfield"))
              + f" > {t['display_name']}" for t in work.get("topics") or []
              if all(isinstance(t.get(k), dict) for k in ("domain", "field", "subfield"))]
    oa = (work.get("best_oa_location") or {}).get("license")
    landing = (work.get("primary_location") or {}).get("landing_page_url")
    return {
        "source": "openalex", "source_id": wid, "doi": normalize_doi(work.get("doi")),
        "title": strip_markup(title) if title is not None else None,
        "abstract": openalex_abstract(work["abstract"]) if "abstract_inverted_index" in work else None,
        "categories": topics, "year": work.get("publication_year"), "license": LICENSE,
        "oa_license": oa, "url": landing or work.get("id"),
        "ids": {"openalex": wid, "doi": work.get("doi"), "pmid": ids.get("pmid"), "pmcid": ids.get("pmcid")},
        "_flags": {"withdrawn": bool(work.get("is_retracted")), "language": work.get("language")},
    }


def read_doi_file(path: str | Path) -> list[str]:
    """DOIs from a text file, one per line (``#`` comments and blank lines skipped), normalised.

    Raises ``ValueError`` naming ``path:line`` for a line that is not a DOI, ``OSError`` if unreadable.
    """
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8-sig").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        doi = normalize_doi(line)
        if doi is None:
            raise ValueError(f"{path}:{n}: not a DOI: {line!r}")
        out.append(doi)
    return list(dict.fromkeys(out))


class OpenAlexSource:
    """Yields batches of candidate records (see module docstring)."""

    name = "openalex"

    def __init__(self, domain: str, query: str | None, since: str | None, settings: Settings,
                 max_records: int | None = None, dois: list[str] | None = None,
                 label: str = "", per_page: int = PER_PAGE) -> None:
        if dois is None and domain not in ("law", "cross_disciplinary"):
            raise ValueError(f"OpenAlex serves law and cross_disciplinary (or --doi-file), not {domain!r}")
        self.domain, self.query, self.since, self.settings = domain, query, since, settings
        self.max_records, self.dois, self.per_page = max_records, dois, per_page
        self.label = label
        self.backoff = settings.backoff(base=1.0)
        self.session = paced_session(settings.pacer(INTERVAL), self.backoff)

    @property
    def key(self) -> str:
        """A readable description of the query, recorded in each record's ``query``."""
        if self.dois is not None:
            return f"doi-file:{self.label} ({len(self.dois)} DOIs)"
        what = f"primary_topic.subfield.id:{LAW_SUBFIELD}" if self.domain == "law" else \
            "balanced over primary_topic.domain.id:1|2|3|4"
        return what + (f" search:{self.query}" if self.query else "") + (
            f" from_publication_date:{self.since}" if self.since else "")

    def _works(self, domain_id: str | None = None) -> Works:
        works = Works()
        works.base_url, works.session = self.settings.openalex_url, self.session
        filters: dict[str, Any] = {"has_abstract": True, "is_retracted": False,
                                   "is_paratext": False, "language": "en"}
        if self.since:
            filters["from_publication_date"] = self.since
        if self.domain == "law":
            filters["primary_topic"] = {"subfield": {"id": LAW_SUBFIELD}}
        else:
            filters["primary_topic"] = {"domain": {"id": domain_id}}
        works = works.filter(**filters)
        return works.search(self.query) if self.query else works

    def _get(self, call, what: str):
        """Run one pyalex call; a body that is not JSON (cut short) is retried with backoff."""
        try:
            return self.backoff.call(call, lambda e: isinstance(e, requests.exceptions.JSONDecodeError))
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "?"
            raise SourceError(f"OpenAlex answered HTTP {status} for {what}") from exc
        except (pyalex.api.QueryError, ValueError) as exc:
            raise SourceError(f"OpenAlex rejected {what}: {exc}") from exc

    def _pages(self, state: dict[str, Any], domain_id: str | None) -> Iterator[Batch]:
        cursor, seen, empty = state.get("cursor", "*"), state.get("seen", 0), 0
        while cursor:
            page = self._get(lambda: self._works(domain_id).get(per_page=self.per_page, cursor=cursor),
                             f"the works query ({self.key})")
            count, nxt = int(page.meta.get("count") or 0), page.meta.get("next_cursor")
            if not page and seen < count and empty < EMPTY_PAGE_RETRIES:
                empty += 1  # empty page before the end: ask again
                self.backoff.pause(empty, None)
                continue
            empty, seen = 0, seen + len(page)
            yield [work_candidate(w) for w in page], partial(state.update, seen=seen, cursor=nxt)
            cursor = nxt if page or nxt != cursor else None
        state["exhausted"] = True

    def _balanced(self, state: dict[str, Any]) -> Iterator[Batch]:
        quota = math.ceil(self.max_records / len(OPENALEX_DOMAINS)) if self.max_records else None
        buckets = state.setdefault("buckets", {})
        pages = {d: self._pages(buckets.setdefault(d, {}), d) for d in OPENALEX_DOMAINS}
        while pages:
            for d in list(pages):
                if quota is not None and buckets[d].get("kept", 0) >= quota:
                    del pages[d]
                    continue
                item = next(pages[d], None)
                if item is None:
                    del pages[d]
                    continue
                yield [{**c, "_bucket": d} for c in item[0]], item[1]
        state["exhausted"] = all(b.get("exhausted") for b in buckets.values())

    def _by_doi(self, state: dict[str, Any]) -> Iterator[Batch]:
        start = state.get("next", 0)
        for k in range(start, len(self.dois), 25):
            batch = []
            for doi in self.dois[k:k + 25]:
                works = Works()
                works.base_url, works.session = self.settings.openalex_url, self.session
                try:
                    batch.append(work_candidate(self._get(lambda: works[f"https://doi.org/{doi}"], f"DOI {doi}")))
                except SourceError as exc:
                    if "HTTP 404" not in str(exc):
                        raise
                    batch.append({"source": "openalex", "source_id": doi, "_flags": {"not_found": True}})
            yield batch, partial(state.update, next=k + len(batch))
        state["exhausted"] = True

    def batches(self, state: dict[str, Any], done: set[str]) -> Iterator[Batch]:
        """Yield ``(candidates, commit)`` per page; ``commit()`` stores the next cursor (or DOI
        index) once the page is handled. Raises :class:`SourceError` or ``RetryLater``."""
        with pyalex_config(self.settings):
            if self.dois is not None:
                yield from self._by_doi(state)
            elif self.domain == "law":
                yield from self._pages(state, None)
            else:
                yield from self._balanced(state)
