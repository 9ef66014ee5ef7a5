"""Identity normalisation and abstract cleaning, on identifiers and text from the recordings."""

from __future__ import annotations

import json

import pyalex
import pytest
from lxml import etree

from ioa_synth.seeds.fetch import review
from ioa_synth.seeds.openalex_source import work_candidate
from ioa_synth.seeds.ids import arxiv_base_id, identities, normalize_doi, normalize_title, primary_identity
from ioa_synth.seeds.text import jats_abstract, looks_english, openalex_abstract, strip_markup

from .conftest import snapshot_records
from .replay import fixture_bytes

JATS = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=False)


@pytest.mark.parametrize("raw", ["10.7717/peerj.4375", "https://doi.org/10.7717/PEERJ.4375",
                                 "http://dx.doi.org/10.7717/peerj.4375", "doi:10.7717/peerj.4375",
                                 "https://doi.org/10.7717%2Fpeerj.4375"])
def test_doi_spellings(raw):
    assert normalize_doi(raw) == "10.7717/peerj.4375"


def test_not_a_doi():
    assert normalize_doi("peerj.4375") is None and normalize_doi(None) is None


@pytest.mark.parametrize("raw, base", [
    ("2204.08348v3", "2204.08348"), ("https://arxiv.org/abs/2204.08348v1", "2204.08348"),
    ("http://arxiv.org/abs/astro-ph/0601001v1", "astro-ph/0601001"), ("arXiv:1810.04805", "1810.04805"),
    ("10.48550/arXiv.1810.04805", "1810.04805"), ("abc", None)])
def test_arxiv_ids(raw, base):
    assert arxiv_base_id(raw) == base


def test_titles_fold_case_accents_punctuation():
    a = "Serological Evidence of Rift Valley Fever Virus Circulation in Sheep and Goats in Zambézia Province, Mozambique"
    assert normalize_title(a) == normalize_title(a.upper().replace("é", "e") + ".")


def test_identities_of_snapshot_records():
    recs = {r["source_id"]: r for r in snapshot_records()}
    assert "arxiv:1810.04805" in identities(recs["1810.04805v2"])
    assert primary_identity(recs["1810.04805v2"]) == "arxiv:1810.04805"
    assert primary_identity(recs["10.1371/journal.pmed.0020171"]) == "doi:10.1371/journal.pmed.0020171"
    ids = [identities(r) for r in recs.values()]
    assert all(ids) and all(any(i.startswith("title:") for i in x) for x in ids)


def test_openalex_work_identities():
    work = json.loads(fixture_bytes("openalex/W2741809807.json"))
    rec = {"source": "openalex", "source_id": "W2741809807", "ids": work["ids"], "title": work["title"]}
    assert {"doi:10.7717/peerj.4375", "pmid:29456894", "pmcid:PMC5815332", "openalex:W2741809807"} <= set(identities(rec))


def test_short_titles_are_no_identity():
    assert identities({"title": "0"}) == [] and identities({"title": "Editorial"}) == []
    assert identities({"title": "Book Review"}) == []
    assert identities({"title": "Biodiversity Finance"}) == ["title:biodiversity finance"]


def test_sectioned_jats_abstract_has_one_line_per_section():
    article = etree.fromstring(fixture_bytes("pmc/1472-6831-8-11.nxml"), JATS)
    text = jats_abstract(article)
    assert text.count("\n") == 3 and "BackgroundThe" not in text
    assert text.startswith("Background: The purpose") and "\nConclusion: In conclusion" in text


def test_inverted_index_rebuilt_and_cleaned():
    work = pyalex.Work(json.loads(fixture_bytes("openalex/W2741809807.json")))
    text = openalex_abstract(work["abstract"])
    assert text.startswith("Despite growing interest") and "  " not in text
    assert openalex_abstract(None) is None


def test_strip_markup_keeps_comparisons_and_unescapes():
    assert strip_markup("r<sup>2</sup>&lt;0.25 and <i>TERT</i> &amp;amp; p < 0.05") == "r2<0.25 and TERT & p < 0.05"
    assert strip_markup("<jats:p>One.</jats:p><jats:p>Two.</jats:p>") == "One.\nTwo."


def test_language_heuristic_keeps_every_real_abstract():
    assert all(looks_english(r["title"] + " " + r["abstract"]) for r in snapshot_records())


def test_non_english_language_metadata_is_dropped():
    work = json.loads(fixture_bytes("openalex/W2741809807.json"))
    assert review(work_candidate(work)) is None
    assert review(work_candidate({**work, "language": "pt"})) == "not_english"
    assert review(work_candidate({**work, "is_retracted": True})) == "withdrawn_or_retracted"
