"""Identities of a paper: how two records are recognised as the same publication.

A record's identities are strings ``"<kind>:<value>"``:

- ``doi:<doi>`` — lower case, without ``https://doi.org/``, ``dx.doi.org``, ``doi:``
  prefixes or percent-encoding (DOIs are case-insensitive, DOI Handbook §2.4).
- ``arxiv:<id>`` — arXiv identifier without its version (``2204.08348v3`` →
  ``2204.08348``; old style ``astro-ph/0601001``); arXiv's own DOIs
  (``10.48550/arXiv.<id>``) yield it too.
- ``pmid:``, ``pmcid:`` (``PMC`` + digits), ``openalex:`` (``W`` + digits) when known.
- ``title:<normalised title>`` — accents folded, case folded, punctuation dropped; only for
  titles of at least :data:`MIN_TITLE_WORDS` words and :data:`MIN_TITLE_CHARS` characters,
  so that short generic titles ("Editorial", "Book Review", "0") never merge different papers.
"""

from __future__ import annotations

import re
from typing import Any, Iterable
from urllib.parse import unquote

from ioa_synth.text.normalise import ALNUM, Normaliser

MIN_TITLE_WORDS = 2
MIN_TITLE_CHARS = 12

_DOI_PREFIX = re.compile(r"^(?:https?://)?(?:dx\.)?(?:doi\.org/)|^doi:\s*", re.I)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(?:v\d+)?$")
_ARXIV_OLD = re.compile(r"([a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$", re.I)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)


def normalize_doi(value: str | None) -> str | None:
    """``'https://doi.org/10.7717/PeerJ.4375'`` → ``'10.7717/peerj.4375'``; None if not a DOI."""
    if not value:
        return None
    doi = unquote(str(value).strip())
    for _ in range(2):  # "https://doi.org/doi:10..." happens
        doi = _DOI_PREFIX.sub("", doi).strip()
    doi = doi.lower().rstrip(".")
    return doi if _DOI_SHAPE.match(doi) else None


def arxiv_base_id(value: str | None) -> str | None:
    """arXiv id without version from an id, abs/pdf URL or arXiv DOI; None if not one."""
    if not value:
        return None
    text = str(value).strip()
    m = _ARXIV_DOI.match(normalize_doi(text) or "")
    if m:
        text = m.group(1)
    text = re.sub(r"^(?:https?://)?(?:export\.)?arxiv\.org/(?:abs|pdf)/", "", text, flags=re.I)
    text = re.sub(r"^arxiv:", "", text, flags=re.I).removesuffix(".pdf")
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        m = pattern.search(text)
        if m and m.start() == 0:
            return m.group(1).lower() if pattern is _ARXIV_OLD else m.group(1)
    return None


#: Title tokens: accents and case folded, letters and digits kept, nothing dropped, no stemming.
TITLE = Normaliser(ALNUM, casefold=True, fold_accents=True)


def normalize_title(title: str | None) -> str:
    """Fold accents and case, keep letters and digits: ``'Déjà vu: A  Study'`` → ``'deja vu a study'``."""
    return TITLE.text(title)


def _pmcid(value: Any) -> str | None:
    m = re.search(r"(?:PMC)?(\d+)\s*/?$", str(value or "").strip(), re.I)
    return f"PMC{m.group(1)}" if m else None


def _tail(value: Any, pattern: str) -> str | None:
    m = re.search(pattern, str(value or ""))
    return m.group(1) if m else None


def identities(record: dict[str, Any]) -> list[str]:
    """All identities of a paper record (see module docstring), sorted, without duplicates.

    Reads ``source``/``source_id``, ``doi``, ``title`` and the optional ``ids`` mapping
    (``doi``, ``arxiv``, ``pmid``, ``pmcid``, ``openalex``) of a record.
    """
    ids = dict(record.get("ids") or {})
    source, sid = record.get("source"), record.get("source_id")
    if source in ("arxiv", "pmc", "openalex", "doi"):
        ids.setdefault({"pmc": "pmcid"}.get(source, source), sid)
    out: set[str] = set()
    for doi in (record.get("doi"), ids.get("doi")):
        if (d := normalize_doi(doi)) is not None:
            out.add(f"doi:{d}")
            if (a := arxiv_base_id(d)) is not None:
                out.add(f"arxiv:{a}")
    if (a := arxiv_base_id(ids.get("arxiv"))) is not None:
        out.add(f"arxiv:{a}")
    if (p := _tail(ids.get("pmid"), r"(\d+)\s*/?$")) is not None:
        out.add(f"pmid:{p}")
    if ids.get("pmcid") and (p := _pmcid(ids["pmcid"])) is not None:
        out.add(f"pmcid:{p}")
    if (w := _tail(ids.get("openalex"), r"(W\d+)\s*$")) is not None:
        out.add(f"openalex:{w}")
    title = normalize_title(record.get("title"))
    if len(title.split()) >= MIN_TITLE_WORDS and len(title) >= MIN_TITLE_CHARS:
        out.add(f"title:{title}")
    return sorted(out)


def primary_identity(record: dict[str, Any]) -> str:
    """The identity used as ``paper_id``: the record's own source id, else its first identity.

    Raises ``ValueError`` when the record has no identity at all.
    """
    kind = {"pmc": "pmcid"}.get(record.get("source") or "", record.get("source") or "")
    own = [i for i in identities({**record, "title": None}) if i.startswith(f"{kind}:")]
    found = own or identities(record)
    if not found:
        raise ValueError("record has no identifier and no usable title")
    return found[0]


class IdentityGroups:
    """Union-find over identities: records sharing any identity fall in one group."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def _find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def add(self, keys: Iterable[str]) -> str:
        """Join ``keys`` into one group and return the group's root key."""
        keys = list(keys)
        root = self._find(keys[0])
        for key in keys[1:]:
            other = self._find(key)
            if other != root:
                root, other = min(root, other), max(root, other)
                self._parent[other] = root
        return root

    def group(self, key: str) -> str:
        """The root key of ``key``'s group."""
        return self._find(key)
