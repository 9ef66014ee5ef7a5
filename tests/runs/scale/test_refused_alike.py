"""``estimate build|evaluate|belief run|belief reask|belief screen|collab run|meeting probe``
refuses exactly what the command refuses, with the command's own line (one code path:
``build_inputs`` / ``evaluate_inputs`` / belief's and collab's ``run_inputs``, belief's
``reask_inputs`` and ``screen_inputs``, the meeting's ``probe_inputs``), and the batch options are checked
before anything is contacted or created: ``--batch`` with ``--batch-dir``, ``--batch-dir``
without a ``model`` per component."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ioa_helpers import one_line_error

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "samples" / "evaluate" / "test"
SEEDS = ROOT / "seeds" / "demo.jsonl"
BUILD_MODELS = {"generator": {"model": "m"}, "judge": {"model": "m"}}
EVAL_MODELS = {c: {"model": "m"} for c in ("prober", "simulator", "validity_filter")}
BELIEF_ITEMS = ROOT / "samples" / "belief" / "items.jsonl"
BELIEF_MODELS = {c: {"model": "m"} for c in ("agent", "belief_judge", "stance_judge")}
HP = ROOT / "samples" / "collab" / "hidden_profile_sample.json"
VTT = ROOT / "samples" / "meetings" / "sample.vtt"


@pytest.fixture
def hits(monkeypatch):
    """Every endpoint variable points at a server that records each request it gets (and
    answers 404): the list of paths asked for."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append(self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _any

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refused-0123456789")
    yield seen
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A build directory made by ``build import`` (``D``), its export (``hub``), a user's
    folder (``U``), a finished one-round ``belief run`` (``BR``, against a scripted server),
    a meeting session (``S``), config files naming every model (``bm``, ``em``), a detector
    without a model (``detnm``) and one with a nonsensical ``max_tokens`` (``neg``); ``x``
    and ``bd`` are never made."""
    import os

    from typer.testing import CliRunner

    from ioa_synth.cli import app
    from ioa_synth.testing.belief_scripted import BeliefScript
    from ioa_synth.testing.scripted_server import ScriptedServer

    tmp = tmp_path_factory.mktemp("refused")
    made = {"D": tmp / "D", "hub": tmp / "hub", "U": tmp / "U", "bm": tmp / "bm.json", "em": tmp / "em.json",
            "neg": tmp / "neg.json", "x": tmp / "x", "bd": tmp / "bd", "blm": tmp / "blm.json",
            "cm": tmp / "cm.json", "det": tmp / "det.json", "BR": tmp / "BR", "S": tmp / "S",
            "detnm": tmp / "detnm.json"}
    run = CliRunner().invoke
    assert run(app, ["build", "import", str(SAMPLE), "--split", "test", "--out", str(made["D"])]).exit_code == 0
    assert run(app, ["export", "--out", str(made["D"]), "--to", str(made["hub"]), "--splits", "test"]).exit_code == 0
    made["U"].mkdir()
    (made["U"] / "notes.txt").write_text("mine\n")
    made["bm"].write_text(json.dumps(BUILD_MODELS))
    made["em"].write_text(json.dumps(EVAL_MODELS))
    made["blm"].write_text(json.dumps(BELIEF_MODELS))
    made["cm"].write_text(json.dumps({"discusser": {"model": "m"}}))
    made["det"].write_text(json.dumps({"prober": {"model": "m"}}))
    made["detnm"].write_text(json.dumps({"prober": {}}))
    assert run(app, ["meeting", "import", str(VTT), "--out", str(made["S"])]).exit_code == 0
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    with ScriptedServer(BeliefScript(agents=2)) as srv:
        os.environ.update(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="sk-test-refused-0123456789")
        try:
            res = run(app, ["belief", "run", "--items", str(BELIEF_ITEMS), "--out", str(made["BR"]), "--agents", "2",
                            "--attackers", "0", "--rounds", "1", "--limit", "1", "--config", str(made["blm"])])
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    assert res.exit_code == 0, res.output
    made["neg"].write_text(json.dumps({"generator": {"request_options": {"max_tokens": -5}},
                                       "prober": {"request_options": {"max_tokens": -5}}}))
    return made


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# Each: bad input that the command refuses (exit 2) before any work. {X} names a folder of
# the fixture ``folders``.
REFUSED = {
    "build": [
        ["--sedes", "{SEEDS}", "--split", "test", "--out", "{x}"],           # a typo: the close name
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{x}", "--workers", "0"],
        ["--seeds", "{SEEDS}", "--out", "{x}"],                              # a missing option
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{U}"],           # a user's own files
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{hub}"],         # a folder of another kind
        ["--split", "test", "--out", "{x}"],                                 # no seeds, no pool
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{x}", "--type-mix", "nosuch"],
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{x}", "--config", "{neg}"],
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{x}", "--config", "{bm}", "--batch", "--batch-dir", "{bd}"],
        ["--seeds", "{SEEDS}", "--split", "test", "--out", "{x}", "--batch-dir", "{bd}"],   # no model
    ],
    "evaluate": [
        ["--dat", "{SAMPLE}", "--out", "{x}"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--workers", "0"],
        ["--data", "{D}/test", "--out", "{D}"],                              # a build directory
        ["--data", "{SAMPLE}", "--out", "{U}"],
        ["--data", "{SAMPLE}", "--out", "{hub}"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--mode", "direct", "--rollouts", "2"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--questions-from", "{x}"],
        ["--data", "{x}/nosuch", "--out", "{x}"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--config", "{neg}"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--config", "{em}", "--batch", "--batch-dir", "{bd}"],
        ["--data", "{SAMPLE}", "--out", "{x}", "--batch-dir", "{bd}"],
    ],
    "belief run": [
        ["--item", "{BELIEF_ITEMS}", "--out", "{x}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}", "--workers", "0"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}", "--attackers", "0,10"],   # as many attackers as agents
        ["--items", "{BELIEF_ITEMS}", "--out", "{U}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{hub}"],
        ["--items", "{x}/nosuch.jsonl", "--out", "{x}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}", "--config", "{neg}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}", "--config", "{blm}", "--batch", "--batch-dir", "{bd}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}", "--batch-dir", "{bd}"],
    ],
    "collab run": [
        ["--bench", "hidden-profile", "--task", "{HP}", "--out", "{x}", "--configs", "discussion"],
        ["--bench", "nosuch", "--tasks", "{HP}", "--out", "{x}", "--configs", "discussion"],
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{x}", "--configs", "single"],
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{x}", "--configs", "mcq:d"],   # no --detector d
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{U}", "--configs", "discussion"],
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{hub}", "--configs", "discussion"],
        ["--bench", "hidden-profile", "--tasks", "{x}/nosuch.json", "--out", "{x}", "--configs", "discussion"],
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{x}", "--configs", "discussion", "--config", "{cm}",
         "--batch", "--batch-dir", "{bd}"],
        ["--bench", "hidden-profile", "--tasks", "{HP}", "--out", "{x}", "--configs", "mcq:d", "--detector", "d={det}",
         "--batch-dir", "{bd}"],                                           # no model for the discusser
    ],
    "belief reask": [
        ["{x}", "--variant", "own", "--steps", "1"],                           # no results folder
        ["{hub}", "--variant", "own", "--steps", "1"],                         # a folder of another kind
        ["{BR}", "--variant", "nosuch", "--steps", "1"],
        ["{BR}", "--variant", "own", "--steps", "5"],                          # past the run's one round
        ["{BR}", "--variant", "own", "--steps", "1", "--sample", "9"],         # more than its conversations
        ["{BR}", "--variant", "own", "--steps", "1", "--config", "{blm}", "--batch", "--batch-dir", "{bd}"],
        ["{BR}", "--variant", "own", "--steps", "1", "--batch-dir", "{bd}"],   # no model
    ],
    "belief screen": [
        ["--item", "{BELIEF_ITEMS}", "--out", "{x}/s.jsonl"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}/s.jsonl", "--samples", "0"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{U}"],                         # a folder
        ["--items", "{BELIEF_ITEMS}", "--out", "{U}/notes.txt"],               # a user's file
        ["--items", "{x}/nosuch.jsonl", "--out", "{x}/s.jsonl"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}/s.jsonl", "--config", "{blm}", "--batch", "--batch-dir", "{bd}"],
        ["--items", "{BELIEF_ITEMS}", "--out", "{x}/s.jsonl", "--config", "{blm}", "--batch-dir", "{bd}"],  # no screener model
    ],
    "meeting probe": [
        ["{x}", "--detector", "d={det}"],                                      # no session
        ["{S}", "--detector", "noequals"],
        ["{S}", "--detector", "d={blm}"],                                      # a config without a prober block
        ["{S}", "--detector", "d={det}", "--detector", "d={det}"],             # a name twice
        ["{S}", "--detector", "d={det}", "--batch", "--batch-dir", "{bd}"],
        ["{S}", "--detector", "d={detnm}", "--batch-dir", "{bd}"],             # no model
    ],
}
CASES = [(command, i) for command, argv in REFUSED.items() for i in range(len(argv))]
IDS = [f"{c.replace(' ', '-')}-{i}" for c, i in CASES]


@pytest.mark.parametrize("command, i", CASES, ids=IDS)
def test_estimate_refuses_what_the_command_refuses_with_its_line(cli, hits, folders, command, i):
    names = {**{k: str(v) for k, v in folders.items()}, "SEEDS": str(SEEDS), "SAMPLE": str(SAMPLE),
             "BELIEF_ITEMS": str(BELIEF_ITEMS), "HP": str(HP)}
    argv = [a.format(**names) for a in REFUSED[command][i]]
    before = {k: _tree(folders[k]) for k in ("D", "U", "hub")}
    own = cli(*command.split(), *argv)
    assert own.exit_code == 2, own.output
    one_line_error(own)
    estimated = cli("estimate", *command.split(), *argv, "--tokenizer", "chars")
    assert (estimated.exit_code, estimated.stderr) == (own.exit_code, own.stderr)
    assert "{COMMAND}" not in estimated.stderr  # a usage error's hint is the command's: 'ioa-synth build --help'
    assert not folders["x"].exists() and not folders["bd"].exists()
    assert {k: _tree(folders[k]) for k in ("D", "U", "hub")} == before
    assert hits == []  # no endpoint contacted


def test_the_commands_with_both_batch_flags_are_those_tested_here():
    """A new command with --batch and --batch-dir gets its case in the test below."""
    import typer

    from ioa_synth.cli import app

    def leaves(cmd, path=()):
        subs = getattr(cmd, "commands", None)
        return [x for n, c in subs.items() for x in leaves(c, (*path, n))] if subs else [(path, cmd)]

    both = {" ".join(path) for path, cmd in leaves(typer.main.get_command(app))
            if {"--batch", "--batch-dir"} <= {o for p in cmd.params for o in p.opts}}
    assert both == set(REFUSED)


@pytest.mark.parametrize("command, argv, models", [
    ("build", ["--seeds", SEEDS, "--split", "test"], BUILD_MODELS),
    ("evaluate", ["--data", SAMPLE], EVAL_MODELS),
], ids=["build", "evaluate"])
def test_batch_and_batch_dir_together_are_refused(cli, hits, tmp_path, command, argv, models):
    config = tmp_path / "models.json"
    config.write_text(json.dumps(models))
    out, bdir = tmp_path / "out", tmp_path / "waves"
    res = cli(command, *argv, "--out", out, "--config", config, "--batch", "--batch-dir", bdir)
    assert res.exit_code == 2
    one_line_error(res, "--batch and --batch-dir", "give one")
    assert not out.exists() and not bdir.exists() and hits == []


@pytest.mark.parametrize("command, argv, components", [
    ("build", ["--seeds", SEEDS, "--split", "test"], "generator, judge"),
    ("evaluate", ["--data", SAMPLE], "prober, simulator, validity_filter"),
], ids=["build", "evaluate"])
def test_batch_dir_without_a_model_is_refused_before_any_contact(cli, hits, tmp_path, command, argv, components):
    out, bdir = tmp_path / "out", tmp_path / "waves"
    res = cli(command, *argv, "--out", out, "--batch-dir", bdir)
    assert res.exit_code == 2
    one_line_error(res, 'set "model"', f"--config block of {components}")
    assert not out.exists() and not bdir.exists()
    assert hits == []  # docs/scale.md: the URL "is not contacted"
    named = tmp_path / "some.json"  # a model for some components: the others are named
    named.write_text(json.dumps({"judge": {"model": "m"}, "simulator": {"model": "m"}}))
    res = cli(command, *argv, "--out", out, "--batch-dir", bdir, "--config", named)
    one_line_error(res, "--config block of " + ", ".join(c for c in components.split(", ")
                                                         if c not in ("judge", "simulator")) + " (")
    assert not bdir.exists() and hits == []
