"""``seeds fetch``: run one source for one domain, filter, de-duplicate, log and catalog.

The flow for every batch a source yields:

1. items already kept or dropped by an earlier run are skipped silently (resume);
2. :func:`review` drops an item with a reason (``no_abstract``, ``withdrawn_or_retracted``,
   ``not_english``, ``no_title``, ``off_domain``, ``unavailable``, ``not_found``);
3. an item sharing an identity with a kept record (arXiv versions, DOI spellings) is
   counted as ``merged`` and not written again;
4. kept records are appended to the log, the state saved, and the records added to the
   catalog's ``papers`` table, where records of the same paper from other sources merge.

``--max N`` caps the kept records of one query (counted across resumed runs).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.folder_kinds import claim_folder
from ioa_synth.seeds.arxiv_source import DOMAIN_CATEGORIES, ArxivSource
from ioa_synth.seeds.ids import identities
from ioa_synth.seeds.openalex_source import OpenAlexSource, read_doi_file
from ioa_synth.seeds.pace import RetryLater
from ioa_synth.seeds.pmc_source import PmcSource
from ioa_synth.seeds.records import RECORD_FIELDS, FetchLog, Tally
from ioa_synth.seeds.settings import Settings
from ioa_synth.seeds.store import add_papers, ensure_tables
from ioa_synth.seeds.text import looks_english

SOURCES = ("arxiv", "pmc", "openalex")
DOMAINS_OF: dict[str, tuple[str, ...]] = {
    "arxiv": tuple(DOMAIN_CATEGORIES),
    "pmc": ("medicine",),
    "openalex": ("law", "cross_disciplinary"),
}
DEFAULT_MAX = 500


@dataclass
class FetchResult:
    """What a fetch run did. ``stopped`` is ``max``, ``exhausted`` or ``retry_later``."""

    tally: Tally
    log: FetchLog
    stopped: str = "exhausted"
    message: str = ""
    catalog_new: int = 0
    catalog_merged: int = 0
    total_kept: int = 0


def make_source(source: str, domain: str, *, query: str | None, since: str | None,
                settings: Settings, max_records: int | None, doi_file: str | Path | None):
    """Build the fetcher for ``source``/``domain``.

    Raises ``ValueError`` with a user-facing message for a bad combination, a bad date
    or an unreadable/invalid DOI file.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r} (use one of {', '.join(SOURCES)})")
    if since:
        try:
            datetime.strptime(since, "%Y-%m-%d")
        except ValueError:
            raise ValueError(f"--since must be YYYY-MM-DD, got {since!r}") from None
    if doi_file is not None:
        if source != "openalex":
            raise ValueError("--doi-file resolves DOIs through OpenAlex: use --source openalex")
        try:
            dois = read_doi_file(doi_file)
        except OSError as exc:
            raise ValueError(f"cannot read --doi-file {doi_file}: {exc.strerror or exc}") from None
        if not dois:
            raise ValueError(f"--doi-file {doi_file} holds no DOI")
        return OpenAlexSource(domain, query, since, settings, max_records, dois=dois,
                              label=Path(doi_file).name)
    if domain not in DOMAINS_OF[source]:
        raise ValueError(f"{source} does not serve domain {domain!r} "
                         f"(it serves {', '.join(DOMAINS_OF[source])}; see `seeds fetch --help`)")
    if source == "arxiv":
        return ArxivSource(domain, query, since, settings)
    if source == "pmc":
        return PmcSource(domain, query, since, settings)
    return OpenAlexSource(domain, query, since, settings, max_records)


def review(candidate: dict[str, Any]) -> str | None:
    """The reason to drop a candidate, or None to keep it."""
    flags = candidate.get("_flags") or {}
    for flag in ("unavailable", "not_found", "off_domain"):
        if flags.get(flag):
            return flag
    if flags.get("withdrawn"):
        return "withdrawn_or_retracted"
    title, abstract = candidate.get("title"), candidate.get("abstract")
    if title is None or not str(title).strip():
        return "no_title"
    if abstract is None or not str(abstract).strip():
        return "no_abstract"
    lang = flags.get("language")
    if lang and not str(lang).lower().startswith("en"):
        return "not_english"
    if not lang and not looks_english(f"{title} {abstract}"):
        return "not_english"
    return None


def finalize(candidate: dict[str, Any], domain: str, query: str, endpoint: str) -> dict[str, Any]:
    """The output record: :data:`RECORD_FIELDS` in order, then ``domain``, ``ids``, ``origin``."""
    rec = {k: candidate.get(k) for k in RECORD_FIELDS}
    rec["title"] = str(rec["title"])
    rec["fetched_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rec["query"] = query
    rec["domain"] = domain
    rec["ids"] = {k: v for k, v in (candidate.get("ids") or {}).items() if v}
    rec["origin"] = {"api": candidate["source"], "endpoint": endpoint}
    if candidate.get("oa_license"):
        rec["oa_license"] = candidate["oa_license"]
    return rec


def _endpoint(source: str, settings: Settings) -> str:
    return {"arxiv": settings.arxiv_url, "pmc": settings.eutils_url, "openalex": settings.openalex_url}[source]


def run_fetch(out_dir: str | Path, source: str, domain: str, *, max_records: int | None = DEFAULT_MAX,
              query: str | None = None, since: str | None = None, doi_file: str | Path | None = None,
              settings: Settings | None = None,
              on_batch: Callable[[FetchResult], None] | None = None) -> FetchResult:
    """Fetch, filter and store records of ``domain`` from ``source`` into ``out_dir``.

    Returns a :class:`FetchResult`; a server asking to wait too long (OpenAlex's daily
    budget) ends the run early with ``stopped == "retry_later"`` and what was fetched kept.
    Raises ``ValueError`` (bad arguments, see :func:`make_source`) and
    :class:`~ioa_synth.seeds.pace.SourceError` (the source refused the query).
    """
    settings = settings or Settings.from_env()
    src = make_source(source, domain, query=query, since=since, settings=settings,
                      max_records=max_records, doi_file=doi_file)
    log = FetchLog(Path(out_dir), source, domain).open()
    qstate = log.state.setdefault(src.key, {})
    qstate["kept"] = sum(r.get("query") == src.key for r in log.records)  # the log is the truth
    result = FetchResult(Tally(), log, total_kept=qstate.get("kept", 0))
    if qstate.get("exhausted"):
        result.message = "this query was fetched completely before; nothing new to fetch"
        return result
    if max_records is not None and qstate.get("kept", 0) >= max_records:
        result.stopped, result.message = "max", f"already holds {max_records} records for this query"
        return result
    claim_folder(out_dir, "build", "seeds fetch")  # a build directory's manifest, before anything is written
    catalog = Catalog(out_dir)
    ensure_tables(catalog)
    try:
        _loop(src, log, qstate, result, domain, max_records, _endpoint(source, settings), catalog, on_batch)
    except RetryLater as exc:
        result.stopped = "retry_later"
        result.message = f"{source} asked to pause ({exc}); rerun the same command then to resume"
    finally:
        log.save_state()
        catalog.close()
    return result


def _loop(src, log: FetchLog, qstate: dict, result: FetchResult, domain: str,
          max_records: int | None, endpoint: str, catalog: Catalog, on_batch) -> None:
    tally, full = result.tally, False
    for batch, commit in src.batches(qstate, log.done):
        kept: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        handled: set[str] = set()
        batch_ids: set[str] = set()
        buckets: Counter = Counter()
        for cand in batch:
            if max_records is not None and qstate.get("kept", 0) + len(kept) >= max_records:
                full = True
                break
            sid = str(cand.get("source_id"))
            if sid in log.done or sid in handled:
                continue
            handled.add(sid)
            reason = review(cand)
            if reason:
                dropped.append({"source_id": sid, "reason": reason, "query": src.key})
                tally.dropped[reason] += 1
                continue
            rec = finalize(cand, domain, src.key, endpoint)
            ids = identities(rec)
            if log.holds(rec) or batch_ids.intersection(ids):
                tally.merged += 1
                continue
            batch_ids.update(ids)
            kept.append(rec)
            if "_bucket" in cand:
                buckets[cand["_bucket"]] += 1
        if not full:
            commit()  # the whole batch was handled: its progress may be recorded
        log.append(kept, dropped)
        qstate["kept"] = qstate.get("kept", 0) + len(kept)
        for name, n in buckets.items():
            qstate["buckets"][name]["kept"] = qstate["buckets"][name].get("kept", 0) + n
        log.save_state()
        new, merged = add_papers(catalog, kept)
        tally.kept += len(kept)
        result.catalog_new += new
        result.catalog_merged += merged
        result.total_kept = qstate["kept"]
        if on_batch:
            on_batch(result)
        if full or (max_records is not None and result.total_kept >= max_records):
            full = True
            break
    result.stopped = "max" if full or not qstate.get("exhausted") else "exhausted"
