"""The answer pages through the ASGI app: saving, replacing, refusals, the phases, and
concurrent submissions on a real uvicorn server."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
from starlette.testclient import TestClient

from ioa_synth.meetings.web import make_app

from .conftest import DETECTORS
from .pages import all_answers, links, live_server, sets


def test_answer_save_reload_replace_and_refusals(probed):
    session = probed()
    tokens = links(session)
    client = TestClient(make_app(session))
    page = client.get(f"/p/{tokens['P1']}")
    assert page.status_code == 200 and "Set A" in page.text and "Set B" in page.text
    assert "<script" not in page.text and 'name="viewport"' in page.text
    for name in DETECTORS:
        assert name not in page.text
    # wrong token
    bad = client.post("/p/not-a-token/answers", data=all_answers(session))
    assert bad.status_code == 404 and "does not belong" in bad.text
    # a missing answer: message, nothing stored
    partial = dict(all_answers(session))
    partial.pop("B-1")
    res = client.post(f"/p/{tokens['P1']}/answers", data=partial)
    assert res.status_code == 400 and "missing: B1" in res.text
    assert not (session / "answers" / "P1.json").exists()
    # save, reload shows what was saved, a second submit replaces it
    assert client.post(f"/p/{tokens['P1']}/answers", data=all_answers(session, "A")).status_code == 200
    assert 'value="A" checked' in client.get(f"/p/{tokens['P1']}").text
    assert client.post(f"/p/{tokens['P1']}/answers", data=all_answers(session, "B")).status_code == 200
    saved = json.loads((session / "answers" / "P1.json").read_text())["answers"]
    assert all(v == "B" for qs in saved.values() for v in qs.values())
    page = client.get(f"/p/{tokens['P1']}").text
    assert 'value="B" checked' in page and 'value="A" checked' not in page and "Waiting for 2" in page
    # P2 never sees P1's answers on page 1
    assert 'checked' not in client.get(f"/p/{tokens['P2']}").text
    # labels before everyone answered: refused
    res = client.post(f"/p/{tokens['P1']}/labels", data={"best": "A"})
    assert res.status_code == 409 and "Not everyone has answered" in res.text


def test_label_for_a_question_not_shown_and_reused_token(probed):
    session = probed()
    tokens = links(session)
    client = TestClient(make_app(session))
    client.post(f"/p/{tokens['P1']}/answers", data=all_answers(session, "A"))
    client.post(f"/p/{tokens['P2']}/answers", data=all_answers(session, "A"))
    p3 = all_answers(session, "A")
    p3["A-1"] = "B"  # the only divergent question
    client.post(f"/p/{tokens['P3']}/answers", data=p3)
    # the phase is closed for answers
    res = client.post(f"/p/{tokens['P3']}/answers", data=all_answers(session, "B"))
    assert res.status_code == 409 and "closed" in res.text
    page = client.get(f"/p/{tokens['P1']}").text
    assert "A1." in page and "Casey: B" in page and "Avery (you): A" in page and "B2." not in page
    survey = {f"{item}-{label}": "3" for item in ("discovery", "willingness") for label in sets(session)}
    good = {"label-A-1": "valid", **survey, "best": "A"}
    res = client.post(f"/p/{tokens['P1']}/labels", data={**good, "label-B-2": "valid"})
    assert res.status_code == 400 and "was not shown" in res.text
    assert not (session / "labels" / "P1.json").exists()
    res = client.post(f"/p/{tokens['P1']}/labels", data={k: v for k, v in good.items() if k != "label-A-1"})
    assert res.status_code == 400 and "missing: A1" in res.text
    assert client.post(f"/p/{tokens['P1']}/labels", data=good).status_code == 200
    assert "Thank you" in client.get(f"/p/{tokens['P1']}").text
    res = client.post(f"/p/{tokens['P1']}/labels", data={**good, "label-A-1": "invalid: other"})
    assert res.status_code == 409 and "already stored" in res.text
    assert json.loads((session / "labels" / "P1.json").read_text())["labels"]["A"] == {"1": "valid"}


def test_concurrent_submissions_lose_nothing(probed):
    session = probed()
    tokens = links(session)
    with live_server(session) as base, httpx.Client(base_url=base, timeout=30) as http:
        def answer(job):
            pid, i = job
            letter = "AB"[i % 2] if pid != "P3" else "B"
            return http.post(f"/p/{tokens[pid]}/answers", data=all_answers(session, letter)).status_code

        # every participant resubmits several times at once; the last of each must be stored whole
        jobs = [(pid, i) for i in range(6) for pid in ("P1", "P2")]
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(answer, jobs))
        assert set(codes) == {303}
        stored = {p: json.loads((session / "answers" / f"{p}.json").read_text()) for p in ("P1", "P2")}
        assert all(len(v["answers"]) == 2 for v in stored.values())
        # the last participant and the labels of all three, all at once
        assert http.post(f"/p/{tokens['P3']}/answers", data=all_answers(session, "B")).status_code == 303
        survey = {f"{item}-{label}": "4" for item in ("discovery", "willingness") for label in sets(session)}
        page = http.get(f"/p/{tokens['P1']}").text
        shown = sorted(set(part.split('"')[0] for part in page.split('name="label-')[1:]))
        fields = {f"label-{key}": "valid" for key in shown}

        def label(pid):
            return http.post(f"/p/{tokens[pid]}/labels", data={**fields, **survey, "best": "B"}).status_code

        with ThreadPoolExecutor(3) as pool:
            assert list(pool.map(label, ["P1", "P2", "P3"])) == [303, 303, 303]
    for pid in ("P1", "P2", "P3"):
        assert json.loads((session / "labels" / f"{pid}.json").read_text())["survey"]["best"] == "B"
