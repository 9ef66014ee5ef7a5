"""Probing: transcript-only prompts with pseudonyms, calls in the session's catalog, blind labels."""

from __future__ import annotations

import json

import duckdb

from ioa_synth.meetings.probe import blind_labels

from .conftest import DETECTORS, QUESTIONS, REAL_NAMES, SAMPLES, set_of, write_detectors


def test_probe_requests_carry_pseudonyms_only_and_no_detector_name(probed, meeting_server):
    session = probed()
    bodies = [json.dumps(r["body"]) for r in meeting_server.requests]
    assert len(bodies) == 2
    for body in bodies:
        for real in REAL_NAMES:
            assert real not in body, real
        for name in DETECTORS:
            assert name not in body
        assert "Three people held the meeting" in body
        assert "Avery (P1)" in body and "Blake (P2)" in body and "Casey (P3)" in body
    sets = json.loads((session / "sets.json").read_text())
    assert sorted(sets["sets"]) == ["A", "B"] and "alphadetector" not in json.dumps(sets)
    for name, model in DETECTORS.items():
        assert sets["sets"][set_of(session, name)] == QUESTIONS[model]


def test_calls_are_stored_in_the_session_catalog(probed):
    session = probed()
    con = duckdb.connect(str(session / "catalog.duckdb"), read_only=True)
    calls = con.execute("SELECT case_id, role, error FROM llm_calls ORDER BY case_id").fetchall()
    runs = con.execute("SELECT command FROM runs").fetchall()
    con.close()
    assert calls == [("alphadetector", "prober", None), ("betadetector", "prober", None)]
    assert runs == [("meeting probe",), ("meeting probe",)]


def test_blind_labels_are_seeded_and_differ_across_seeds():
    names = ["x", "y", "z"]
    assert blind_labels(names, 5) == blind_labels(names, 5)
    assert len({tuple(blind_labels(names, s).values()) for s in range(20)}) > 1


def test_probe_twice_and_bad_detectors_refused(probed, cli, tmp_path):
    session = probed()
    specs = write_detectors(tmp_path / "detectors")
    res = cli("meeting", "probe", session, *specs)
    assert res.exit_code == 2 and "already probed" in res.stderr
    fresh = tmp_path / "fresh"
    assert cli("meeting", "import", SAMPLES / "teams.vtt", "--out", fresh).exit_code == 0
    res = cli("meeting", "probe", fresh, "--detector", "noequals")
    assert res.exit_code == 2 and "NAME=CONFIG" in res.stderr
    res = cli("meeting", "probe", fresh, "--detector", f"x={tmp_path / 'missing.json'}")
    assert res.exit_code == 2 and res.stderr.startswith("error:")
    assert not (fresh / "sets.json").exists()


def test_serving_a_session_without_question_sets_is_a_clear_error(cli, tmp_path):
    fresh = tmp_path / "fresh"
    assert cli("meeting", "import", SAMPLES / "teams.vtt", "--out", fresh).exit_code == 0
    res = cli("meeting", "serve", fresh, "--port", "8765")
    assert res.exit_code == 2
    assert res.stderr.strip().startswith("error:") and "no question sets yet" in res.stderr
    res = cli("meeting", "serve", tmp_path / "nothing")
    assert res.exit_code == 2 and "not a meeting session" in res.stderr
