"""Seed text and assignment fixes, on JATS snippets written for the test and
the shipped snapshot: citation markers dropped, the main abstract preferred, retraction
notices not kept, ``assign`` never deleting split files it did not write."""

from __future__ import annotations

from lxml import etree

from ioa_synth.seeds.fetch import review
from ioa_synth.seeds.pmc_source import article_candidate
from ioa_synth.seeds.text import jats_abstract, strip_markup

from .conftest import SNAPSHOT

JATS = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=False)


def article(abstracts: str, title: str = "A trial of things", kind: str = "research-article") -> etree._Element:
    return etree.fromstring(f"""<article article-type="{kind}"><front><article-meta>
        <article-id pub-id-type="pmc">12345</article-id>
        <title-group><article-title>{title}</article-title></title-group>{abstracts}
        </article-meta></front></article>""".encode(), JATS)


def test_citation_markers_are_dropped_keeping_their_tail():
    el = article('<abstract><p>Effects were large (<italic>p</italic> &lt; 0.01)<xref ref-type="bibr" rid="r1">1'
                 '</xref>. Prior work<sup><xref ref-type="bibr" rid="r2">2</xref>,<xref ref-type="bibr">3</xref></sup>'
                 ' agrees<fn id="f1"><p>See the supplement.</p></fn> with this.</p></abstract>')
    assert jats_abstract(el) == "Effects were large (p < 0.01). Prior work, agrees with this."


def test_string_markup_drops_citation_markers_too():
    text = '(<i>p</i> &lt; 0.01)<xref ref-type="bibr" rid="B1">1</xref>. Done<xref rid="B2"/>.'
    assert strip_markup(text) == "(p < 0.01). Done."


def test_untyped_abstract_wins_over_an_executive_summary_before_it():
    el = article('<abstract abstract-type="executive-summary"><p>We summarise for executives.</p></abstract>'
                 '<abstract abstract-type="teaser"><p>Tease.</p></abstract>'
                 '<abstract><sec><title>Background</title><p>The real abstract.</p></sec></abstract>'
                 '<abstract abstract-type="graphical"><p>Picture.</p></abstract>')
    assert jats_abstract(el) == "Background: The real abstract."


def test_typed_abstract_is_used_when_no_untyped_one_exists():
    el = article('<abstract abstract-type="summary"><p>Lay summary.</p></abstract>'
                 '<abstract abstract-type="structured"><p>Structured main text.</p></abstract>')
    assert jats_abstract(el) == "Structured main text."


def test_retraction_notices_are_not_kept():
    body = "<abstract><p>This article has been retracted at the request of the authors for errors.</p></abstract>"
    for el in (article(body, title="Retraction: Effects of X on Y"),
               article(body, title="Retraction Note to: Effects of X on Y"),
               article(body, kind="retraction")):
        cand = article_candidate(el)
        assert cand["_flags"]["withdrawn"] is True
        assert review(cand) == "withdrawn_or_retracted"
    for title in ("RETRACTED: Effects of X on Y", "Retraction of: Effects of X", "Withdrawn"):
        assert article_candidate(article(body, title=title))["_flags"]["withdrawn"] is True, title
    for title in ("Retractions in psychiatry journals", "Retraction practices of medical journals"):
        assert article_candidate(article(body, title=title))["_flags"]["withdrawn"] is False, title


def test_assign_keeps_split_files_it_did_not_write_unless_replace(run, tmp_path):
    run("import", SNAPSHOT, "--out", tmp_path)
    assert run("assign", "--out", tmp_path, "--per-cell", "train=3,val=1,test=1", "--reserve", "1").exit_code == 0
    seeds = tmp_path / "seeds"
    before = {p.name: p.read_bytes() for p in seeds.glob("*.jsonl")}
    assert set(before) == {f"{s}{r}.jsonl" for s in ("train", "val", "test") for r in ("", "_reserve")}

    again = run("assign", "--out", tmp_path, "--per-cell", "test=2")
    assert again.exit_code == 2
    assert "--replace" in again.stderr and "train.jsonl" in again.stderr
    assert {p.name: p.read_bytes() for p in seeds.glob("*.jsonl")} == before  # nothing deleted or rewritten

    replaced = run("assign", "--out", tmp_path, "--per-cell", "test=2", "--replace")
    assert replaced.exit_code == 0, replaced.stderr
    assert sorted(p.name for p in seeds.glob("*.jsonl")) == ["test.jsonl"]


def test_reserve_warning_says_it_plainly(run, tmp_path):
    run("import", SNAPSHOT, "--out", tmp_path)
    res = run("assign", "--out", tmp_path, "--per-cell", "test=5", "--reserve", "1")  # law has 25 papers
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ("warning: 5 cells have fewer than 1 reserve tuple (test 5; see the +N counts in the table): "
                          "a case discarded in those cells is not replaced\n")
    assert "missing" not in res.stderr
