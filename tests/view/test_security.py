"""What the viewer never serves: a file by its path (``private/``, ``../``), a model-written
string as markup, a key or Authorization value, a meeting participant's real name. Every page
reachable from the index is fetched and checked."""

from __future__ import annotations

import re
from collections import deque
from urllib.parse import urljoin

import httpx

from meetings.conftest import DETECTORS, REAL_NAMES

from .folders import KEY, XSS


def crawl(base: str, limit: int = 400) -> dict[str, httpx.Response]:
    """Every same-origin page linked from ``/`` (breadth first, at most ``limit``)."""
    seen: dict[str, httpx.Response] = {}
    todo = deque(["/"])
    with httpx.Client(base_url=base, timeout=30) as client:
        while todo and len(seen) < limit:
            path = todo.popleft()
            if path in seen:
                continue
            res = client.get(path)
            seen[path] = res
            if "text/html" not in res.headers.get("content-type", ""):
                continue
            for href in re.findall(r'href="([^"#]+)', res.text):
                href = href.replace("&amp;", "&")
                url = urljoin(base + path, href)
                if url.startswith(base) and not url.endswith(".css"):
                    todo.append(url[len(base):])
    return seen


def test_every_page_answers_escaped_and_without_secrets(served, ids):
    pages = crawl(served)
    assert len(pages) > 20
    for path, res in pages.items():
        assert res.status_code == 200, path
        html = res.text
        assert KEY not in html and not re.search(r"(?i)bearer\s+sk-", html), path
        assert "<script>window" not in html and "<img src=x" not in html, path
        assert re.findall(r"<script[^>]*>", html) in ([], ['<script src="/static/view.js" defer>']), path
    case = pages[f"/f/{ids['build']}/case/test/ml_research/planning_000"].text
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in case and "Authorization: [redacted]" in case
    imported = pages[f"/f/{ids['imported']}/case/test/software_engineering/troubleshooting_001"].text
    assert "no judge of this build scored it" in imported and "Priya" in imported
    assert "data/test.jsonl" in pages[f"/f/{ids['exported']}/"].text
    meeting = [res.text for path, res in pages.items() if path.startswith(f"/f/{ids['meeting']}/")]
    assert meeting
    for html in meeting:
        for name in (*REAL_NAMES, *DETECTORS):
            assert name not in html


def test_no_file_is_served_by_its_path(served, ids, folders):
    m, b = ids["meeting"], ids["build"]
    assert (folders["meeting"] / "private" / "names.json").is_file()
    for path in (f"/f/{m}/private/names.json", f"/f/{m}/private/links.json", f"/f/{m}/private/",
                 f"/f/{m}/session.json", f"/f/{m}/../../etc/passwd", f"/f/{m}/%2e%2e/%2e%2e/etc/passwd",
                 f"/f/{b}/catalog.duckdb", f"/f/{b}/case/..%2F..%2Fprivate%2Fnames.json",
                 f"/f/{b}/case/../../../../etc/passwd", "/static/../app.py", "/static/%2e%2e/app.py",
                 "/static/..%2Fapp.py", f"/f/{m}/task/..%2Fprivate%2Fnames", f"/f/{m}/conversation/..%2Fsession",
                 f"/f/{ids['belief']}/conversation/..%2F..%2Fmeeting%2Fprivate%2Fnames", "/f/99/", "/private/names.json",
                 f"/f/{m}/curves.png", f"/f/{m}/calls"):
        res = httpx.get(served + path)
        assert res.status_code == 404, path
        assert "Maria" not in res.text and "token" not in res.text.lower(), path


def test_the_xss_dialogue_is_text_in_the_diff_and_the_dialogue(served, ids):
    html = httpx.get(f"{served}/f/{ids['build']}/case/test/ml_research/design_review_000").text
    diff = html.split('id="regeneration"')[1]
    assert "&lt;script&gt;window.__xss" in diff and 'class="diff_add"' in diff  # the rewritten first turn
    assert XSS not in html


def test_a_key_from_the_environment_never_reaches_a_page(monkeypatch):
    from ioa_synth.view.app import scrub

    monkeypatch.setenv("JUDGE_API_KEY", "judge-key-0123456789abcdef")
    html = scrub("<p>the key judge-key-0123456789abcdef; Authorization: Bearer abc123; "
                 "bearer eyJhbGciOi.J9x2kq; sk-proj-abcdefghijklmnop1234; the bearer shares, a basic plan</p>")
    assert "judge-key" not in html and "abc123" not in html and "eyJhbGciOi" not in html and "sk-proj" not in html
    assert html.count("[redacted]") == 4 and "Authorization: [redacted]" in html
    assert "the bearer shares, a basic plan" in html
