"""The real pages in headless Chromium (Debian's, driven by Playwright): three participants
answer on their own links, see the divergent questions with everyone's answers, label them,
fill the survey; ``meeting report`` then gives the numbers worked out by hand below."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import DETECTORS, QUESTIONS, set_of
from .pages import free_port

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM) and not shutil.which("chromium"),
                                reason="Debian's chromium is not installed (scripts/setup.sh installs it as root)")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
AL, BE = "alphadetector", "betadetector"
# Answers per detector, question and participant (P1, P2, P3).
ANSWERS = {AL: {1: "AAA", 2: "ABA"}, BE: {1: "ABB", 2: "BBB", 3: "AAB"}}
# Validity labels of the divergent questions, per participant.
LABELS = {(AL, 2): ("valid", "valid", "invalid: other"),
          (BE, 1): ("valid", "invalid: already discussed", "invalid: no meaningful distinction"),
          (BE, 3): ("invalid: redundant", "invalid: redundant", "invalid: redundant")}
DISCOVERY = {AL: (4, 5, 3), BE: (2, 2, 3)}
WILLINGNESS = {AL: (5, 4, 4), BE: (1, 2, 3)}
BEST = (AL, AL, BE)


@pytest.fixture
def served(probed):
    session = probed(seed=3)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ioa_synth", "meeting", "serve", str(session), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    links = {}
    try:
        while len(links) < 3:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            m = re.match(r"(P\d) \(.*\): (http://\S+)", line)
            if m:
                links[m.group(1)] = m.group(2)
        deadline = time.monotonic() + 30
        import httpx
        while True:
            try:
                httpx.get(links["P1"], timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
                time.sleep(0.1)
        yield session, links
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_three_participants_answer_label_and_report(served, cli):
    from playwright.sync_api import sync_playwright

    session, links = served
    label = {det: set_of(session, det) for det in DETECTORS}
    pages_seen = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for i, pid in enumerate(("P1", "P2", "P3")):
                page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone
                page.goto(links[pid])
                assert page.locator("nav.tabs a").all_inner_texts() == ["Set A", "Set B"]
                for det, qs in ANSWERS.items():
                    for n, letters in qs.items():
                        page.check(f'input[name="{label[det]}-{n}"][value="{letters[i]}"]')
                page.click("button[type=submit]")
                # the last answer closes the phase: that participant goes straight to page 2
                assert ("Where you answered differently" if pid == "P3" else "Your answers are saved") in page.content()
                pages_seen.append(page.content())
                page.context.close()
            for i, pid in enumerate(("P1", "P2", "P3")):
                page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
                page.goto(links[pid])
                text = page.inner_text("body")
                pages_seen.append(page.content())
                shown = sorted(re.findall(r'name="label-([AB])-(\d)"', page.content()))
                assert sorted(set(shown)) == sorted((label[d], str(n)) for d, n in LABELS)
                for (det, n), given in LABELS.items():
                    q = QUESTIONS[DETECTORS[det]][n - 1]
                    assert f"{label[det]}{n}. {q['question']}" in text
                    letters = ANSWERS[det][n]
                    for j, name in enumerate(("Avery", "Blake", "Casey")):
                        who = f"{name} (you)" if j == i else name
                        assert f"{who}: {letters[j]}. {q['options'][letters[j]]}" in text
                    page.check(f'input[name="label-{label[det]}-{n}"][value="{given[i]}"]')
                for det in DETECTORS:
                    page.check(f'input[name="discovery-{label[det]}"][value="{DISCOVERY[det][i]}"]')
                    page.check(f'input[name="willingness-{label[det]}"][value="{WILLINGNESS[det][i]}"]')
                page.check(f'input[name="best"][value="{label[BEST[i]]}"]')
                page.click("button[type=submit]")
                assert "Thank you" in page.inner_text("body")
                page.context.close()
        finally:
            browser.close()
    for html in pages_seen:
        for det in DETECTORS:
            assert det not in html and DETECTORS[det] not in html

    res = cli("meeting", "report", session, "--json")
    assert res.exit_code == 0, res.output
    per = json.loads(res.stdout)["sessions"][0]["detectors"]
    # by hand: alpha diverges on Q2 only (2 valid of 3: validated under 'any'); beta on Q1 (1 valid) and Q3 (none)
    assert {k: per[AL][k] for k in ("questions", "divergent", "validated", "validity_rate", "best_votes")} == \
        {"questions": 2, "divergent": 1, "validated": 1, "validity_rate": 1.0, "best_votes": 2}
    assert {k: per[BE][k] for k in ("questions", "divergent", "validated", "validity_rate", "best_votes")} == \
        {"questions": 3, "divergent": 2, "validated": 1, "validity_rate": 0.5, "best_votes": 1}
    assert per[AL]["discovery"] == pytest.approx(4.0) and per[BE]["discovery"] == pytest.approx(7 / 3)
    assert per[AL]["willingness"] == pytest.approx(13 / 3) and per[BE]["willingness"] == pytest.approx(2.0)
    assert per[BE]["label_counts"] == {"valid": 1, "invalid: no meaningful distinction": 1,
                                       "invalid: already discussed": 1, "invalid: redundant": 3, "invalid: other": 0}
    table = cli("meeting", "report", session).stdout
    assert "alphadetector" in table and "50.0%" in table
