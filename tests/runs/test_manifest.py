"""The results-folder manifest (``run.json``): one reader for the manifests this release
writes, those of the release before it (no ``kind``, no ``versions``) and garbage; the folder
kinds the capabilities register; and the one scheduler, ``RunContext.map``."""

from __future__ import annotations

import json
from collections import deque

import pytest

from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run
from ioa_synth.runs.folder_kinds import FolderKindMismatch, check_folder_kind, detect_folder, folder_kind
from ioa_synth.runs.interrupt import RunInterrupted
from ioa_synth.runs.manifest import MANIFEST_FILE, Manifest, ManifestError, read_manifest
from ioa_synth.testing.scripted_server import chat_reply

import ioa_synth.belief  # noqa: F401  (registers its folder kind)
import ioa_synth.build  # noqa: F401
import ioa_synth.evaluate  # noqa: F401
import ioa_synth.meetings  # noqa: F401

#: run.json as ``evaluate`` wrote it before the manifest (keys in the released order).
RELEASED_EVALUATE = {
    "command": "evaluate", "argv": ["evaluate", "--data", "data/test", "--out", "res"],
    "args": {"data": "data/test", "mode": "mcq", "access": "public", "rollouts": 1, "permute_seed": None, "limit": None},
    "components": {"prober": {"model": "m", "temperature": 0.7, "structured_output": "json_schema",
                              "request_options": {}, "base_url_kind": "remote"}},
    "fingerprint": "0123456789abcdef",
    "fingerprint_parts": {"fingerprint_version": 2, "toolkit_version": "0.1.0", "components": {}, "templates": {},
                          "inputs": {}, "mode": "mcq", "questions_from": None},
    "started_at": "2025-01-01T00:00:00Z", "finished_at": "2025-01-01T00:05:00Z"}
#: run.json as ``belief run`` wrote it before the manifest.
RELEASED_BELIEF = {
    "command": "belief run", "argv": ["belief", "run"], "args": {"agents": 2},
    "settings": {"agents": 2, "attackers": [1], "rounds": 1, "memory": 5, "seed": 0},
    "components": {"agent": {"model": "scripted", "temperature": 0.7, "base_url_kind": "remote"}},
    "probe_temperature": 0.0, "fingerprint": "fedcba9876543210",
    "fingerprint_parts": {"fingerprint_version": 2, "belief_setup_version": 1, "study": {}, "items": {}},
    "started_at": "2025-01-01T00:00:00Z", "finished_at": None}


def _folder(path, run):
    path.mkdir(parents=True, exist_ok=True)
    text = run if isinstance(run, (str, bytes)) else json.dumps(run, indent=2)
    (path / MANIFEST_FILE).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_released_manifests_read_with_their_kind_and_keep_every_key(tmp_path):
    ev = read_manifest(_folder(tmp_path / "ev", RELEASED_EVALUATE), "evaluate")
    assert (ev.kind, ev.command, ev.args["mode"], ev.fingerprint) == ("evaluate", "evaluate", "mcq", "0123456789abcdef")
    # its settings, kept in args then, are typed (evaluate's registered model)
    assert ev.versions.toolkit is None and (ev.settings.mode, ev.settings.rollouts) == ("mcq", 1)
    settings = {"mode": "mcq", "access": "public", "rollouts": 1, "permute_seed": None}
    assert ev.model_dump(mode="json", exclude_unset=True) == {"kind": "evaluate", **RELEASED_EVALUATE,
                                                              "settings": settings}
    bel = read_manifest(_folder(tmp_path / "bel", RELEASED_BELIEF))
    assert (bel.kind, bel.settings.rounds, bel.components["agent"]["model"]) == ("belief", 1, "scripted")
    assert bel.settings.labelling is None and "labelling" not in bel.to_json()["settings"]  # no default added
    assert bel.to_json()["probe_temperature"] == 0.0  # a key of the capability's own is kept
    assert folder_kind(tmp_path / "ev") == "evaluate" and folder_kind(tmp_path / "bel") == "belief"


def test_new_manifest_round_trips(tmp_path):
    new = {"kind": "belief", **RELEASED_BELIEF, "versions": {"toolkit": "0.2.0", "setup": 1}}
    manifest = read_manifest(_folder(tmp_path / "bel", new), "belief")
    assert manifest.versions.setup == 1 and manifest.to_json() == Manifest.model_validate(new).to_json()
    assert list(manifest.to_json())[:2] == ["kind", "command"]


@pytest.mark.parametrize("text, needle", [
    (b"", "invalid JSON at line 1, column 1"),
    (b'{"command": "evaluate",}', "invalid JSON at line 1"),
    ("{}".encode("utf-16"), "not UTF-8 text (it is UTF-16); save it as UTF-8"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"args": {}}', "names no command"),
    (b'{"command": "evaluate", "args": [1]}', "args: Input should be a valid dictionary"),
    (b'{"command": "evaluate", "versions": {"setup": [2]}}', "versions.setup"),
])
def test_garbage_run_json_is_one_line_naming_the_file(tmp_path, text, needle):
    folder = _folder(tmp_path / "f", text)
    with pytest.raises(ManifestError) as err:
        read_manifest(folder)
    message = str(err.value)
    assert needle in message and "\n" not in message
    assert str(folder / MANIFEST_FILE) in message
    assert folder_kind(folder) is None  # not a results folder of any kind


def test_asking_for_a_kind_names_what_the_folder_is(tmp_path):
    with pytest.raises(ManifestError, match=r"run\.json: missing \(is this an 'ioa-synth belief run' results folder\?\)"):
        read_manifest(tmp_path, "belief")
    ev = _folder(tmp_path / "ev", RELEASED_EVALUATE)
    with pytest.raises(ManifestError, match=r"is not a 'belief run' results folder \(its run\.json was written by "
                                            r"'ioa-synth evaluate'\)"):
        read_manifest(ev, "belief")
    odd = _folder(tmp_path / "odd", {"components": {}})
    with pytest.raises(ManifestError, match=r"is not an 'evaluate' results folder \(its run\.json names no command\)"):
        read_manifest(odd, "evaluate")


def test_folder_kinds_by_manifest_or_the_layout_of_a_folder_without_one(tmp_path):
    """A folder's kind is its manifest's; one written without a manifest (by the release
    before, e.g. a session or a catalog) is told by its kind's layout, and never written."""
    session = tmp_path / "session"
    (session / "private").mkdir(parents=True)
    (session / "session.json").write_text("{}")
    assert detect_folder(session).kind == "meeting" and detect_folder(session).by == "layout"
    assert not (session / MANIFEST_FILE).exists()
    with Catalog(tmp_path / "calls") as cat:  # a belief command's catalog, no run.json
        cat.insert("runs", {"run_id": "r1", "command": "belief screen"})
    assert folder_kind(tmp_path / "calls") == "belief"
    assert folder_kind(tmp_path / "calls", open_catalog=False) is None  # no catalog opened
    with Catalog(tmp_path / "other") as cat:  # runs of a command no kind claims: a build directory
        cat.insert("runs", {"run_id": "r1", "command": "regenerate"})
    assert folder_kind(tmp_path / "other") == "build"
    assert folder_kind(tmp_path / "missing") is None and folder_kind(tmp_path / "session" / "private") is None
    with pytest.raises(FolderKindMismatch) as err:
        check_folder_kind(_folder(tmp_path / "bel", RELEASED_BELIEF), "evaluate", what="--out X")
    assert str(err.value) == ("--out X is an 'ioa-synth belief run' results folder, not an 'ioa-synth evaluate' "
                              "results folder; use a folder of its own")
    # a manifest of a kind this process has not registered is still named, after its command
    assert detect_folder(_folder(tmp_path / "collab", {"kind": "collab-x", "command": "collab-x run"})).title == \
        "an 'ioa-synth collab-x run' results folder"


def test_open_run_with_a_kind_writes_the_manifest_and_refuses_another_kind(tmp_path, endpoint):
    endpoint(responder=lambda body, headers: chat_reply('{"answer": "x"}'), models=["m"])
    out = tmp_path / "res"
    with Catalog(out) as catalog:
        with open_run(catalog, "evaluate", ["prober"], ToolkitConfig(), args={"limit": 1}, kind="evaluate",
                      check=None, settings={"mode": "mcq"}, setup_version=7, manifest_extra={"note": "x"}) as run:
            started = read_manifest(out, "evaluate")
            assert started.finished_at is None and started == run.manifest
        done = read_manifest(out, "evaluate")
        assert done.finished_at and (done.versions.setup, done.settings.mode, done.args) == (7, "mcq", {"limit": 1})
        assert done.to_json()["settings"] == {"mode": "mcq"}  # stored as given, typed when read
        assert done.components["prober"]["model"] == "m" and done.to_json()["note"] == "x"
        assert done.fingerprint and done.fingerprint_parts == run.description
        with pytest.raises(RuntimeError):
            with open_run(catalog, "evaluate", ["prober"], ToolkitConfig(), kind="evaluate", check=None):
                raise RuntimeError("boom")
        assert read_manifest(out).finished_at is None  # it did not finish
        before = (out / MANIFEST_FILE).read_bytes()
        with pytest.raises(FolderKindMismatch, match="is an 'ioa-synth evaluate' results folder, not an "
                                                     "'ioa-synth belief run' results folder"):
            with open_run(catalog, "belief run", ["agent"], ToolkitConfig(), kind="belief", check=None):
                pass
        assert (out / MANIFEST_FILE).read_bytes() == before


def test_map_keeps_order_grows_from_on_done_and_names_its_unit(tmp_path, endpoint):
    endpoint(responder=lambda body, headers: chat_reply("{}"), models=["m"])
    with Catalog(tmp_path) as catalog, open_run(catalog, "audit", ["agent"], ToolkitConfig(), check=None) as run:
        submitted, finished = [], []
        queue = deque([1, 2, 3])

        def done(unit, result):
            finished.append(result)
            if unit == 1:
                queue.append(10)  # e.g. a reserve draw

        assert run.map(queue, lambda u: u * 2, done, workers=2, on_submit=submitted.append) == 4
        assert submitted == [1, 2, 3, 10] and sorted(finished) == [2, 4, 6, 20] and not queue
        assert run.map([], lambda u: u, workers=3) == 0
        with pytest.raises(ZeroDivisionError):  # a unit's error stops the run and is raised
            run.map(range(3), lambda u: 1 / 0, workers=2)
        run.guard.stop.clear()

        def stop(u):
            raise RunInterrupted(0, 0)  # what a unit meets when the run stops

        run.guard.interrupted = True  # as after Ctrl-C
        with pytest.raises(RunInterrupted) as err:
            run.map(range(3), stop, workers=1, unit="conversation")
        run.guard.interrupted = False
        assert err.value.unit == "conversation"
