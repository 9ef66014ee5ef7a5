"""PubMed Central fetching through ``Bio.Entrez`` against replayed eSearch/eFetch/JATS files."""

from __future__ import annotations

import io
import re

from Bio import Entrez

from ioa_synth.seeds.fetch import run_fetch
from ioa_synth.seeds.pmc_source import PmcSource, entrez_session
from ioa_synth.seeds.text import strip_markup

from .conftest import read_jsonl
from .replay import Reply, pmc_articleset


def _records(result) -> dict[str, dict]:
    return {r["source_id"]: r for r in read_jsonl(result.log.records_path)}


def test_medicine_fetch_parses_jats(tmp_path, settings, replay):
    settings.ncbi_email = "seeds@example.org"
    result = run_fetch(tmp_path, "pmc", "medicine", settings=settings)
    records = _records(result)
    assert set(records) == {"PMC3585041", "PMC2329613"}
    # the correction notice has no abstract; the 5 searched ids are not in the recorded eFetch
    assert result.tally.dropped == {"no_abstract": 1, "unavailable": 5}
    oral = records["PMC2329613"]
    lines = oral["abstract"].split("\n")
    assert [line.split(":")[0] for line in lines] == ["Background", "Methods", "Results", "Conclusion"]
    assert lines[0].startswith("Background: The purpose of this study")
    assert "mean age = 57.1 ± 12.2 yrs" in oral["abstract"]
    assert oral["license"] == "http://creativecommons.org/licenses/by/2.0"
    assert oral["doi"] == "10.1186/1472-6831-8-11" and oral["year"] == 2008
    rvf = records["PMC3585041"]
    assert "Zambézia" in rvf["title"] and "Author Summary" not in rvf["abstract"]
    assert "mosquito-borne" not in rvf["abstract"]  # that sentence is in the author summary
    assert "(OR = 7.3; p<0.001)" in rvf["abstract"]  # &#x0200a; hair spaces, &#x0003c;
    assert rvf["ids"] == {"pmcid": "PMC3585041", "pmid": "23469300", "doi": "10.1371/journal.pntd.0002065"}
    search = dict(replay.requests)["esearch"]
    assert search["db"] == "pmc" and search["term"] == '"open access"[filter]'
    assert search["email"] == "seeds@example.org" and search["tool"] == "ioa-synth"
    fetch = dict(replay.requests)["efetch"]
    assert fetch["id"] == "6540636,5830998,4460425,4466840,3443459"


def test_entrez_is_restored_after_fetch(tmp_path, settings, replay):
    before = (Entrez.email, Entrez.tool, Entrez.max_tries, Entrez._build_request)
    run_fetch(tmp_path, "pmc", "medicine", settings=settings)
    assert (Entrez.email, Entrez.tool, Entrez.max_tries, Entrez._build_request) == before


def test_api_key_raises_the_rate(tmp_path, settings, replay, waits):
    assert PmcSource("medicine", None, None, settings).pacer.interval == 1 / 3
    settings.ncbi_api_key = "k"
    assert PmcSource("medicine", None, None, settings).pacer.interval == 0.1
    run_fetch(tmp_path, "pmc", "medicine", settings=settings)
    assert dict(replay.requests)["esearch"]["api_key"] == "k"
    assert waits and all(w <= 0.1 for w in waits)


def test_query_and_since(tmp_path, settings, replay):
    run_fetch(tmp_path, "pmc", "medicine", query="stem cells", since="2020-01-31", settings=settings)
    search = dict(replay.requests)["esearch"]
    assert search["term"] == '"open access"[filter] AND (stem cells)'
    assert (search["mindate"], search["datetype"]) == ("2020/01/31", "pdat")


def test_no_hits_ends_cleanly(tmp_path, settings, replay):
    result = run_fetch(tmp_path, "pmc", "medicine", query="abcXYZ", settings=settings)
    assert result.stopped == "exhausted" and result.total_kept == 0
    assert replay.count("efetch") == 0


def test_429_then_503_then_truncated_body(tmp_path, settings, replay, waits):
    replay.fault("esearch", Reply(429, b"", {"Retry-After": "4"}))
    replay.fault("efetch", Reply(503, b""))
    replay.fault("efetch", Reply(200, pmc_articleset(), truncate=True))
    result = run_fetch(tmp_path, "pmc", "medicine", settings=settings)
    assert set(_records(result)) == {"PMC3585041", "PMC2329613"}
    assert 4.0 in waits
    assert replay.count("esearch") == 2 and replay.count("efetch") == 3


def test_resume_skips_ids_already_handled(tmp_path, settings, replay):
    run_fetch(tmp_path, "pmc", "medicine", max_records=1, settings=settings)
    result = run_fetch(tmp_path, "pmc", "medicine", max_records=5, settings=settings)
    assert len(read_jsonl(result.log.records_path)) == 2
    asked = [p["id"] for r, p in replay.requests if r == "efetch"]
    assert len(asked) == 2  # the second run asks only for ids not yet handled


def test_mathml_and_inline_markup_from_pubmed_efetch(settings, replay):
    """The recorded PubMed eFetch files, served and parsed by Bio.Entrez through the redirect."""
    with entrez_session(settings):
        mathml = Entrez.read(io.BytesIO(Entrez.efetch(db="pubmed", id="30108519", retmode="xml").read()))
        tert = Entrez.read(io.BytesIO(Entrez.efetch(db="pubmed", id="27797938", retmode="xml").read()))
    raw = str(mathml["PubmedArticle"][0]["MedlineCitation"]["Article"]["Abstract"]["AbstractText"][0])
    assert "<math" in raw and "<sub>" in raw
    text = strip_markup(raw)
    assert not re.search(r"</?[A-Za-z]", text) and "P < 0.001" in text  # tags gone, "<" kept
    assert "(LEmin)" in text and "( V.O2max )" in text and "km·h-1" in text
    sections = tert["PubmedArticle"][0]["MedlineCitation"]["Article"]["Abstract"]["AbstractText"]
    results = strip_markup(str(sections[2]))
    assert "(TERT)" in strip_markup(str(sections[0])) and "r2<0.25" in results and "ptrend=0.048" in results
