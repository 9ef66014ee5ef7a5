"""Fixtures of the live-meeting tests: a scripted prober (and merge judge) at the HTTP
boundary, probed sessions of the shipped sample transcript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa_synth.meetings.forms import save_answers, save_labels
from ioa_synth.meetings.session import Session
from ioa_synth.testing.scripted_server import Reply, chat_reply

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "meetings"
#: Real names of the sample transcript: none may reach a model request.
REAL_NAMES = ("Maria", "Lopez", "Tom", "Becker", "Aisha", "Khan")
#: Detector names (never on a page or in a request) and the model each config names.
DETECTORS = {"alphadetector": "model-one", "betadetector": "model-two"}

#: Questions per model: model-one writes 2, model-two writes 3.
QUESTIONS = {
    "model-one": [
        {"question": "What does 'the baseline' refer to?", "options": {"A": "The current production model", "B": "Last quarter's vendor score"}},
        {"question": "What does 'ready on Friday' mean?", "options": {"A": "Trained and evaluated", "B": "Training finished"}},
    ],
    "model-two": [
        {"question": "Which customers are in 'the clean data'?", "options": {"A": "All customers", "B": "Customers without merged accounts"}},
        {"question": "Which metric will the evaluation use?", "options": {"A": "AUC", "B": "Recall at top decile"}},
        {"question": "Who prepares the holdout query?", "options": {"A": "Casey", "B": "Blake"}},
    ],
}


def schema_props(body: dict) -> dict:
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    return schema.get("properties", {})


class MeetingResponder:
    """Prober replies by model name; merge-judge replies group the numbered questions as
    ``merge_groups(texts)`` says (default: each question alone)."""

    def __init__(self, merge_groups=None) -> None:
        self.merge_groups = merge_groups

    def __call__(self, body: dict, headers: dict) -> Reply:
        props = schema_props(body)
        if "questions" in props:
            return chat_reply(json.dumps({"questions": QUESTIONS[body["model"]]}), model=body["model"])
        if "groups" in props:
            text = body["messages"][-1]["content"]
            numbered = [line for line in text.splitlines() if line[:1].isdigit() and ". " in line]
            stems = [line.split(". ", 1)[1] for line in numbered]
            groups = self.merge_groups(stems) if self.merge_groups else [[i + 1] for i in range(len(stems))]
            return chat_reply(json.dumps({"groups": groups}), model=body["model"])
        return Reply(status=400, body={"error": {"message": "unexpected request"}})


def write_detectors(folder: Path) -> list[str]:
    """Detector config files; returns the ``--detector`` arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    specs = []
    for name, model in DETECTORS.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps({"prober": {"model": model}}), encoding="utf-8")
        specs += ["--detector", f"{name}={path}"]
    return specs


@pytest.fixture
def meeting_server(endpoint):
    """A scripted server answering prober and merge-judge requests (OPENAI_BASE_URL)."""
    return endpoint(responder=MeetingResponder(), models=list(DETECTORS.values()))


@pytest.fixture
def probed(tmp_path, cli, meeting_server):
    """Factory: import the sample transcript into ``tmp_path/<name>`` and probe it with both
    detectors (``--seed``); returns the session folder."""

    def make(name: str = "session", seed: int = 1) -> Path:
        out = tmp_path / name
        res = cli("meeting", "import", SAMPLES / "sample.vtt", "--out", out)
        assert res.exit_code == 0, res.output
        res = cli("meeting", "probe", out, *write_detectors(tmp_path / "detectors"), "--seed", seed)
        assert res.exit_code == 0, res.output
        return out

    return make


def set_of(session: Path, detector: str) -> str:
    """The blind label of ``detector`` in ``session`` (tests may read the private mapping)."""
    blinding = json.loads((session / "private" / "blinding.json").read_text())
    return next(label for label, name in blinding.items() if name == detector)


#: The two detectors of :data:`DETECTORS`.
A, B = "alphadetector", "betadetector"
PIDS = ("P1", "P2", "P3")
# Per session and detector: {divergent question number: how many participants label it valid}.
PLAN = [
    {A: {1: 1, 2: 0}, B: {1: 3, 3: 2}},
    {A: {1: 2}, B: {}},
    {A: {1: 3, 2: 3}, B: {2: 1}},
]
BEST = [("A", "A", "A"), ("B", "B", "A"), ("B", "B", "B")]  # by detector initial, per participant
DISCOVERY = [{A: 4, B: 2}, {A: 4, B: 3}, {A: 4, B: 5}]


def fill(session_dir, plan, best, discovery):
    """Answers, labels and survey of P1-P3 as one session of :data:`PLAN`, :data:`BEST`, :data:`DISCOVERY` say."""
    s = Session(session_dir)
    label_of = {det: set_of(session_dir, det) for det in DETECTORS}
    sizes = {label: len(qs) for label, qs in s.question_sets().items()}
    for i, pid in enumerate(PIDS):
        fields = {}
        for det, div in plan.items():
            for n in range(1, sizes[label_of[det]] + 1):
                fields[f"{label_of[det]}-{n}"] = "B" if (n in div and pid == "P3") else "A"
        save_answers(s, pid, fields)
    for i, pid in enumerate(PIDS):
        fields = {"best": label_of[A if best[i] == "A" else B]}
        for det, div in plan.items():
            for n, valid in div.items():
                fields[f"label-{label_of[det]}-{n}"] = "valid" if i < valid else "invalid: other"
            fields[f"discovery-{label_of[det]}"] = str(discovery[det])
            fields[f"willingness-{label_of[det]}"] = "3"
        save_labels(s, pid, fields)


@pytest.fixture
def three_sessions(probed):
    """Three finished sessions of :data:`PLAN` (3 participants each)."""
    dirs = []
    for k in range(3):
        d = probed(f"s{k}", seed=k)
        fill(d, PLAN[k], BEST[k], DISCOVERY[k])
        dirs.append(d)
    return dirs
