"""Results folders made by real runs against the scripted servers (faked only at the HTTP
boundary), one of each kind the viewer reads: a build with regenerations and a dialogue
carrying an XSS payload, two evaluate runs of its cases, a belief run, a collab run and a
probed meeting session. ``make_all(root)`` makes them all under ``root``."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, chat_reply

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from conftest import real_seed_tuples  # noqa: E402
from evaluate.eval_helpers import Q, Study  # noqa: E402
from meetings.conftest import SAMPLES as MEETING_SAMPLES, MeetingResponder, write_detectors  # noqa: E402

#: What the XSS case's dialogue says (a model-written string: it must show as text).
#: (``onError``: attribute names are case-blind in HTML, and the gates reject "onerror" as words run together)
XSS = "<script>window.__xss = 1</script><img src=x onError=\"window.__xss=2\">"
#: What the stage-1 regeneration rewrites (MA1's why_undetected), seen in the diff.
REWRITTEN = "each has said it in every planning meeting this year and nobody ever asked"
KEY = "sk-view-test-SECRET-0123456789"
#: A key a model might echo; no page may show it (nor any Authorization value).
LEAK = f"Authorization: Bearer {KEY}"
#: Two probers' question sets over the build's two-MA cases: A finds MA1 only, B finds MA1 and MA2.
STUDY_A = [Q("Which split is meant?", "A", "B", hit="MA1"), Q("Who runs it?", "A", "A"),
           Q("When is it due?", "B", "A", meaningful=False)]
STUDY_B = [Q("Which split is meant?", "A", "B", hit="MA1"), Q("Which baseline counts?", "A", "C", hit="MA2"),
           Q("Who runs it?", "A", "A")]


class XssResponder(ProtocolResponder):
    """The protocol's valid replies; every dialogue's last turn ends with :data:`XSS`."""

    def _reply(self, kind: str, body: dict[str, Any], action: str):
        reply = super()._reply(kind, body, action)
        retry = body["messages"][-1]["content"].startswith("Your previous")
        if kind == "stage1_generator" and action == "ok" and retry:  # a regeneration that changes something
            data = json.loads(reply.body["choices"][0]["message"]["content"])
            data["misalignment_points"][0]["why_undetected"] = REWRITTEN
            return chat_reply(json.dumps(data), model=self.model)
        if kind == "stage2_generator" and action == "ok":
            data = json.loads(reply.body["choices"][0]["message"]["content"])
            data["turns"][-1]["utterance"] += " " + XSS + " " + LEAK
            if retry:  # the rewritten dialogue differs in its first turn too (the diff shows it)
                data["turns"][0]["utterance"] += " " + XSS
            return chat_reply(json.dumps(data), model=self.model)
        return reply


@contextmanager
def scripted(responder, env: str = "OPENAI", models: list[str] | None = None) -> Iterator[ScriptedServer]:
    """A scripted server with ``<env>_BASE_URL``/``<env>_API_KEY`` pointed at it meanwhile."""
    with ScriptedServer(responder, models=models) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv(f"{env}_BASE_URL", server.base_url)
        mp.setenv(f"{env}_API_KEY", KEY)
        yield server


def cli(*args: Any) -> None:
    from ioa_synth.cli import app

    res = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def seeds(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in real_seed_tuples(n)), encoding="utf-8")
    return path


def make_build(root: Path) -> Path:
    """Three cases: one accepted after a stage-1 regeneration (the judge's 'low' first),
    one discarded after two failed dialogues, one accepted first time; every dialogue ends
    with :data:`XSS`."""
    out = root / "build"
    script = {"stage1_judge": ["low"], "stage2_judge": ["ok", "low", "low"]}
    with scripted(XssResponder(script=script)):
        cli("build", "--seeds", seeds(root / "seeds.jsonl", 3), "--split", "test", "--out", out, "--workers", "1")
    return out


class EvalResponder:
    """The evaluate study's three components on one server, told apart by their schema."""

    def __init__(self, study: Study) -> None:
        self.study = study

    def __call__(self, body: dict[str, Any], headers: dict[str, str]):
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        props = schema.get("properties", {})
        if "questions" in props:
            return self.study.prober(body, headers)
        if "answers" in props:
            return self.study.simulator(body, headers)
        return self.study.filter(body, headers)


def make_evaluate(root: Path, build: Path, name: str, study: list) -> Path:
    out = root / name
    with scripted(EvalResponder(Study(study))):
        cli("evaluate", "--data", build / "test", "--out", out, "--workers", "1")
    return out


def make_belief(root: Path) -> Path:
    from belief.helpers import LABELS, STANCES, sample_items
    from ioa_synth.testing.belief_scripted import BeliefScript

    out = root / "belief"
    (root / "belief-items").mkdir(exist_ok=True)
    items = sample_items(root / "belief-items", n=1)
    with scripted(BeliefScript(agents=3, labels=LABELS, stances=STANCES)):
        cli("belief", "run", "--items", items, "--out", out, "--agents", "3", "--attackers", "1", "--rounds", "3")
    return out


def make_collab(root: Path) -> Path:
    from collab.helpers import HP, detector_config, hp_tasks
    from ioa_synth.testing.collab_scripted import CollabScript

    out = root / "collab"
    tasks = hp_tasks(1)
    with scripted(CollabScript(tasks=tasks, diverge={tasks[0].task_id})):
        cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
            "discussion,mcq:probe", "--detector", f"probe={detector_config(root)}", "--limit", "1", "--workers", "2")
    return out


def make_meeting(root: Path) -> Path:
    out = root / "meeting"
    with scripted(MeetingResponder(), models=["model-one", "model-two"]):
        cli("meeting", "import", MEETING_SAMPLES / "sample.vtt", "--out", out)
        cli("meeting", "probe", out, *write_detectors(root / "detectors"), "--seed", 1)
    from ioa_synth.meetings.forms import save_answers
    from ioa_synth.meetings.session import Session

    session = Session(out)
    sets = json.loads((out / "sets.json").read_text(encoding="utf-8"))["sets"]
    for i, pid in enumerate(("P1", "P2")):  # two of three answered page 1
        save_answers(session, pid, {f"{label}-{n}": "AB"[(n + i) % 2]
                                    for label, qs in sets.items() for n in range(1, len(qs) + 1)})
    return out


def make_imported(root: Path) -> tuple[Path, Path]:
    """The shipped IoA-Suite sample brought in by ``build import``, and its ``export``."""
    samples = TESTS.parent / "samples" / "evaluate" / "test"
    cli("build", "import", samples, "--split", "test", "--out", root / "imported")
    cli("export", "--out", root / "imported", "--to", root / "exported")
    return root / "imported", root / "exported"


def make_all(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    build = make_build(root)
    return {"build": build, "evaluate": make_evaluate(root, build, "eval-a", STUDY_A),
            "evaluate_b": make_evaluate(root, build, "eval-b", STUDY_B), "belief": make_belief(root),
            "collab": make_collab(root), "meeting": make_meeting(root),
            **dict(zip(("imported", "exported"), make_imported(root)))}


if __name__ == "__main__":  # python tests/view/folders.py ROOT
    for kind, path in make_all(Path(sys.argv[1])).items():
        print(kind, path)
