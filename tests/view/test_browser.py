"""The viewer in headless Chromium (Debian's, driven by Playwright), one browser for the
module, over folders made by real runs against the scripted servers: index -> build -> a
case with a regeneration -> its diff; an evaluate case; two evaluate runs compared; a belief
conversation; a collab transcript; a meeting session; the calls page; an XSS payload shown
as text. Screenshots go to ``tmp``, or to ``docs/img/`` with ``IOA_VIEW_SCREENSHOTS=docs/img``
(that is how docs/view.md's pictures are made)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from meetings.conftest import DETECTORS, REAL_NAMES

from .folders import REWRITTEN, XSS

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM) and not shutil.which("chromium"),
                                reason="Debian's chromium is not installed (scripts/setup.sh installs it as root)")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    where = os.environ.get("IOA_VIEW_SCREENSHOTS")
    return Path(where) if where else tmp_path_factory.mktemp("shots")


def shot(page, shots: Path, name: str, full: bool = False) -> None:
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"view-{name}.png"), full_page=full)


def test_index_build_case_regeneration_diff(page, served, shots):
    page.goto(served + "/")
    assert page.locator("table.grid tbody tr").count() == 8
    shot(page, shots, "index")
    page.click("text=build")
    rows = page.locator("table.cases tbody tr")
    assert rows.count() == 3
    page.select_option("select[name=status]", "regenerated")  # the page's script submits the filter
    page.wait_for_url("**status=regenerated**")
    assert page.locator("table.cases tbody tr").count() == 2
    page.select_option("select[name=status]", "discarded")
    page.wait_for_url("**status=discarded**")
    assert page.locator("table.cases tbody tr").all_inner_texts()[0].startswith("test/ml_research/design_review_000")
    assert "stage 2: θ2" in page.inner_text("table.cases")
    page.goto(page.url.split("?")[0])
    shot(page, shots, "build")
    page.click("text=test/ml_research/planning_000")
    body = page.inner_text("body")
    assert "Stage 1: attempt 1 → attempt 2" in body
    feedback = page.inner_text("#regeneration .feedback")
    assert "subtlety 1/3" in feedback and "Too obvious" in feedback
    diff = page.locator("#regeneration table.diff")
    assert REWRITTEN in diff.inner_text() and diff.locator(".diff_chg, .diff_add").count() >= 1
    rubric = page.locator("#stage1 article").first.inner_text()
    assert "subtlety" in rubric and "1/3" in rubric and "≥ 3 ✗" in rubric and "Too obvious" in rubric
    assert page.locator(".turn.cue .ma-cue").count() >= 2  # MAs marked at their cue turns
    # the XSS payload in the dialogue is shown as text and never runs
    assert XSS in page.inner_text("#dialogue")
    assert page.evaluate("window.__xss") is None
    assert page.locator("#calls table tbody tr").count() == 6
    page.locator("#dialogue").scroll_into_view_if_needed()
    shot(page, shots, "case-dialogue")
    page.locator("#regeneration").scroll_into_view_if_needed()
    shot(page, shots, "case-regeneration")


def test_evaluate_case_and_compare(page, served, ids, shots):
    page.goto(f"{served}/f/{ids['eval-a']}/")
    assert "precision" in page.inner_text("body")
    page.select_option("select[name=missed]", "yes")
    page.wait_for_url("**missed=yes**")
    page.click("table.cases >> text=ml_research/planning_000")
    body = page.inner_text("body")
    assert "Which split is meant?" in body and "category A" in body and "matches MA1" in body
    assert "category C: not_meaningful" in body
    shot(page, shots, "evaluate-case")
    page.goto(f"{served}/compare?a={ids['eval-a']}&b={ids['eval-b']}")
    row = page.locator("table.compare tbody tr", has_text="ml_research/planning_000")
    assert row.locator("td.only-b").inner_text() == "MA2" and row.locator("td.only-a").inner_text() == ""
    shot(page, shots, "compare")


def test_belief_conversation(page, served, ids, shots):
    page.goto(f"{served}/f/{ids['belief']}/")
    assert page.locator("img.plot").evaluate("img => img.naturalWidth") > 0  # curves.png
    page.click("text=counterfact-0_k1")
    assert page.locator("section.round").count() == 4  # before, rounds 1-3
    round1 = page.locator("section.round").nth(1).inner_text()
    assert "Round 1" in round1 and "infected" in round1  # agent 2 is persuaded after round 1
    assert page.locator(".badge.exposed").count() >= 1
    shot(page, shots, "belief")


def test_collab_transcript(page, served, ids, shots):
    page.goto(f"{served}/f/{ids['collab']}/")
    page.click("table.grid >> tr:has-text('mcq:probe') >> a")
    directive = page.locator(".turn.directive")
    assert directive.count() == 1 and "A check of the discussion" in directive.inner_text()
    assert "detector's intervention" in directive.inner_text()
    body = page.inner_text("body")
    assert "vote B, correct B" in body and "the vote is the correct option" in body
    directive.scroll_into_view_if_needed()
    shot(page, shots, "collab")


def test_meeting_session(page, served, ids, shots):
    page.goto(f"{served}/f/{ids['meeting']}/")
    body = page.inner_text("body")
    assert "Avery" in body and "Set A" in body and "Set B" in body
    for name in (*REAL_NAMES, *DETECTORS):
        assert name not in page.content()
    shot(page, shots, "meeting")


def test_calls_page(page, served, ids, shots):
    page.goto(f"{served}/f/{ids['build']}/calls")
    assert "16 calls" in page.inner_text("h2 >> nth=1")
    page.select_option("select[name=component]", "judge")
    page.wait_for_url("**component=judge**")
    totals = page.locator("table.totals tr.sum").inner_text().split("\t")
    assert totals[2] == "8" and totals[4] == "800"  # 8 judge calls of 100 prompt tokens each
    assert page.locator("table.calls tbody tr").count() == 8
    shot(page, shots, "calls")


def test_a_build_being_written_is_viewable_and_updates_on_reload(page, tmp_path):
    """A ``build`` in its own process writes while the viewer reads: the page loads, a reload
    shows more finished cases, and the build (which holds the catalog) finishes unhindered."""
    import subprocess
    import sys
    import time

    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    from .conftest import ROOT, start_view, stop
    from .folders import KEY, seeds

    out = tmp_path / "live"
    with ScriptedServer(ProtocolResponder(latency=0.4)) as server:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY}
        build = subprocess.Popen([sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds(tmp_path / "s.jsonl", 10)),
                                  "--split", "test", "--out", str(out), "--workers", "1"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            deadline = time.monotonic() + 120
            while not (out / "catalog.journal").exists() or not (out / "catalog.duckdb").exists():
                assert time.monotonic() < deadline and build.poll() is None, build.stderr.read()
                time.sleep(0.1)
            view, url = start_view(out)
            try:
                def finished() -> int:
                    page.reload() if page.url.startswith(url) else page.goto(url + "/f/0/")
                    return page.locator("table.cases .badge.accepted").count()

                first = finished()
                while first == 0:
                    assert time.monotonic() < deadline, "no case finished"
                    first = finished()
                assert build.poll() is None, "the build ended before the viewer saw it running"
                later = first
                while later == first:
                    assert time.monotonic() < deadline, "a reload showed no new case"
                    time.sleep(0.3)
                    later = finished()
                assert later > first
                assert build.wait(timeout=120) == 0, build.stderr.read()
                assert finished() == 10
            finally:
                stop(view)
        finally:
            if build.poll() is None:
                build.kill()
