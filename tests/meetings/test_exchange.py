"""Forms as files: ``serve --export`` and ``meeting answers`` (all or nothing)."""

from __future__ import annotations

import json


def fill_answers(path, letter):
    form = json.loads(path.read_text())
    for questions in form["sets"].values():
        for q in questions:
            q["answer"] = letter
    path.write_text(json.dumps(form))
    return form


def test_export_fill_import_both_phases(probed, cli, tmp_path):
    session = probed()
    forms = tmp_path / "forms"
    res = cli("meeting", "serve", session, "--export", forms)
    assert res.exit_code == 0, res.output
    files = [forms / f"answers-P{i}.json" for i in (1, 2, 3)]
    assert all(f.exists() for f in files) and (forms / "answers-P1.html").exists()
    assert "alphadetector" not in (forms / "answers-P1.html").read_text()
    fill_answers(files[0], "A")
    fill_answers(files[1], "A")
    third = fill_answers(files[2], "A")
    third["sets"]["A"][0]["answer"] = None  # one answer missing: nothing of the batch is stored
    files[2].write_text(json.dumps(third))
    res = cli("meeting", "answers", session, *files)
    assert res.exit_code == 2 and "answers-P3.json" in res.stderr and "missing: A1" in res.stderr
    assert not (session / "answers").exists()
    third["sets"]["A"][0]["answer"] = "B"
    files[2].write_text(json.dumps(third))
    res = cli("meeting", "answers", session, *files)
    assert res.exit_code == 0, res.output
    # phase 2 forms: the one divergent question with everyone's answers
    res = cli("meeting", "serve", session, "--export", forms)
    assert res.exit_code == 0, res.output
    label_files = [forms / f"labels-P{i}.json" for i in (1, 2, 3)]
    for i, path in enumerate(label_files):
        form = json.loads(path.read_text())
        assert [(q["set"], q["n"], q["answers"]) for q in form["questions"]] == [
            ("A", 1, {"P1": "A", "P2": "A", "P3": "B"})]
        form["questions"][0]["label"] = "valid" if i else "invalid: other"
        form["survey"] = {"discovery": {"A": 5, "B": 1}, "willingness": {"A": 4, "B": 2}, "best": "A"}
        path.write_text(json.dumps(form))
    res = cli("meeting", "answers", session, *label_files)
    assert res.exit_code == 0, res.output
    assert len(list((session / "labels").glob("*.json"))) == 3
    res = cli("meeting", "answers", session, label_files[0])
    assert res.exit_code == 2 and "already stored" in res.stderr


def test_import_refuses_foreign_and_duplicate_forms(probed, cli, tmp_path):
    session = probed("one")
    other = probed("two")
    forms = tmp_path / "forms"
    assert cli("meeting", "serve", other, "--export", forms).exit_code == 0
    fill_answers(forms / "answers-P1.json", "A")
    res = cli("meeting", "answers", session, forms / "answers-P1.json")
    assert res.exit_code == 2 and "another session" in res.stderr
    res = cli("meeting", "answers", other, forms / "answers-P1.json", forms / "answers-P1.json")
    assert res.exit_code == 2 and "a second form of P1" in res.stderr
    assert not (other / "answers").exists()


def test_no_lock_file_is_left_behind_on_any_path(probed, cli, tmp_path):
    import threading

    from ioa_synth.meetings.session import Session

    session = probed()
    forms = tmp_path / "forms"
    assert cli("meeting", "serve", session, "--export", forms).exit_code == 0
    bad = forms / "answers-P1.json"  # not filled: every answer missing
    res = cli("meeting", "answers", session, bad)
    assert res.exit_code == 2 and "missing" in res.stderr
    assert not (session / ".lock").exists()
    (forms / "broken.json").write_text("{not json")
    res = cli("meeting", "answers", session, forms / "broken.json")
    assert res.exit_code == 2 and not (session / ".lock").exists()
    # a lock file a killed process left behind is reused, then removed
    (session / ".lock").write_text("")
    fill_answers(bad, "A")
    res = cli("meeting", "answers", session, bad)
    assert res.exit_code == 0, res.output
    assert not (session / ".lock").exists()
    # the lock is released on an exception: another holder gets it at once
    s = Session(session)
    try:
        with s.locked():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    got = threading.Event()

    def take() -> None:
        with s.locked():
            got.set()

    worker = threading.Thread(target=take)
    worker.start()
    worker.join(timeout=10)
    assert got.is_set() and not (session / ".lock").exists()
