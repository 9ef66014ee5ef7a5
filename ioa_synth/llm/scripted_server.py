"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests, benchmarks and
dry runs of a pipeline without a model.

:class:`ScriptedServer` serves ``POST /v1/chat/completions`` and ``GET /v1/models``
from a responder function; :class:`ProtocolResponder` answers each stage's requests
with valid IoA-Suite JSON and can be scripted, per request kind, to send low judge
scores, rule-breaking outputs, HTTP errors, invalid JSON or length stops.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

KINDS = ("stage1_generator", "stage1_judge", "stage2_generator", "stage2_judge")


@dataclass
class Reply:
    """An HTTP reply: status, JSON body (or raw text), headers, and a delay in seconds."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None


def chat_reply(content: str, finish_reason: str = "stop", model: str = "scripted",
               prompt_tokens: int = 100, completion_tokens: int = 50) -> Reply:
    """A 200 chat-completions reply whose message content is ``content``."""
    return Reply(body={
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}})


def request_kind(body: dict[str, Any]) -> str:
    """Which of :data:`KINDS` a chat request is, from its schema or, failing that, its prompt."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    props = schema.get("properties", {})
    for key, kind in (("meeting_scenario", "stage1_generator"), ("turns", "stage2_generator"),
                      ("ma_scores", "stage1_judge"), ("dialogue_scores", "stage2_judge")):
        if key in props:
            return kind
    text = " ".join(m.get("content", "") for m in body.get("messages", []))
    for marker, kind in (("Score every misalignment point", "stage1_judge"), ("Score the dialogue", "stage2_judge"),
                         ("Write the meeting dialogue", "stage2_generator"), ("Design the participants", "stage1_generator")):
        if marker in text:
            return kind
    return "unknown"


#: A hand-written case, as a careful human would write one: distinct readings per point,
#: surface forms voiced in the dialogue, no private wording in any utterance. It passes
#: every content gate (:mod:`ioa_synth.protocol.gates`).
_MEMBERS = [
    {"id": "M1", "name": "Ada Okafor", "role": "research lead",
     "expertise": "information retrieval evaluation and multilingual benchmark design",
     "background": "eight years building search benchmarks in a university lab before joining the company",
     "private_state": "wants a result strong enough for the workshop paper due in April",
     "hidden_assumptions": ["evaluation data is frozen once it has been published to the team bucket",
                            "baselines are always retrained with the current tokenizer",
                            "a release includes its written evaluation report"]},
    {"id": "M2", "name": "Ben Lindqvist", "role": "ML engineer",
     "expertise": "training infrastructure, PyTorch data pipelines and model serving",
     "background": "came from a production ads team where evaluation samples were redrawn on every run",
     "private_state": "needs the pipeline frozen by month end so he can move to the serving migration",
     "hidden_assumptions": ["cached leaderboard numbers are trustworthy for old models",
                            "the data loader's split logic is the source of truth",
                            "documentation can follow a deployment"]},
]
_POINTS = [
    ("definitional", "evaluation data", "the held-out set",
     "the 2,400 questions from the March 2024 crawl, never used for tuning and frozen in the team bucket",
     "a fresh random tenth of the corpus that the data loader draws with seed 17 on every training run",
     "both have used the phrase for years and each reads it through their previous team's habits"),
    ("procedural", "baseline comparison", "rerun the baseline",
     "retrain the 2023 BM25 plus cross-encoder pipeline from scratch with the current tokenizer",
     "reuse the cached January leaderboard scores and recompute only the new model",
     "comparing against a baseline is routine, so nobody asks how it is produced"),
    ("criterial", "ship criterion", "good enough to ship",
     "recall at 10 of at least 0.82 on every language slice including the low-resource ones",
     "mean recall at 10 over all queries above last quarter's 0.79",
     "both think of recall at 10 and hear a familiar number"),
    ("scopal", "release contents", "the March release",
     "model weights together with the signed evaluation report reviewed by the board",
     "the inference container image alone, with documents following in April",
     "each assumes the other means the same deliverable because the date matches"),
]
_TURNS = [
    ("M1", "So for the comparison, we score everything on the held-out set, same as last time.",
     "For me the held-out set is the frozen 2,400 March questions; nothing else is comparable.", ["MA1"],
     "Ada opens with the evaluation data and names the set they will score on."),
    ("M2", "Sure, the held-out set is already wired into the loader, so that part is free.",
     "The loader redraws its tenth with seed 17, so it is always there; easy.", ["MA1"],
     "Ben confirms the set is ready on his side."),
    ("M1", "Good. Then we rerun the baseline before we look at any of the new numbers.",
     "Rerunning means retraining the 2023 pipeline with today's tokenizer; it takes two days.", ["MA2"],
     "Ada asks for the baseline to be redone first."),
    ("M2", "Fine by me, rerun the baseline first and then we decide if it is good enough to ship.",
     "I will pull January's cached scores; recomputing only our model is an hour of work.", ["MA2", "MA3"],
     "Ben agrees and moves to the release decision."),
    ("M1", "If it is good enough to ship, it goes into the March release.",
     "Every language slice has to clear 0.82 before I sign anything, and the report goes with it.", ["MA3", "MA4"],
     "Ada ties the decision to the release date."),
    ("M2", "Agreed, the March release it is. I will block out the last week for it.",
     "The container image is what ships in March; the write-up can come in April.", ["MA4"],
     "Ben closes with the schedule."),
]


def valid_stage1(n_points: int = 2) -> dict[str, Any]:
    """A stage-1 output that satisfies every content rule and gate (``n_points`` MAs, MA1
    definitional); its outline has one turn per dialogue turn of :func:`valid_stage2`."""
    points = [{"id": f"MA{i + 1}", "type": t, "topic": topic, "surface_form": sf, "member_a_understanding": a,
               "member_b_understanding": b, "why_undetected": why}
              for i, (t, topic, sf, a, b, why) in enumerate(_POINTS[:n_points])]
    ids = {p["id"] for p in points}
    return {
        "meeting_scenario": ("A research lead and an ML engineer meet to plan the evaluation of a retrained retrieval "
                             "model. The agenda covers the evaluation data, the baseline and the release criterion; "
                             "they expect to leave with a two-week plan."),
        "members": [dict(m, hidden_assumptions=list(m["hidden_assumptions"])) for m in _MEMBERS],
        "misalignment_points": points,
        "conversation_outline": [
            {"turn": i + 1, "speaker": spk, "description": plan, "ma_ids": [m for m in mas if m in ids]}
            for i, (spk, _, _, mas, plan) in enumerate(_TURNS)],
    }


def valid_stage2(n_turns: int = 4) -> dict[str, Any]:
    """A stage-2 dialogue with ``n_turns`` (4-6) alternating turns matching :func:`valid_stage1`;
    the first four voice MA1 and MA2, six voice all four points."""
    return {"turns": [{"turn_idx": i + 1, "speaker_id": spk, "speaker_name": _MEMBERS[i % 2]["name"],
                       "inner_thought": thought, "utterance": said}
                      for i, (spk, said, thought, _, _) in enumerate(_TURNS[:n_turns])]}


def gate_breaking(kind: str, action: str) -> dict[str, Any]:
    """Generator JSON that is well-formed but fails one content gate (``action``):
    stage 1 ``"dots"`` (``"..."`` texts), ``"same_understanding"``, ``"copied"``
    (a field copied from the prompt's description); stage 2 ``"dots"``, ``"absent_ma"``
    (MA2's surface form never said), ``"leak"`` (an utterance quotes M2's private
    reading), ``"wrong_speaker"``."""
    if kind == "stage1_generator":
        data = valid_stage1()
        p = data["misalignment_points"][0]
        if action == "dots":
            p["member_a_understanding"] = p["member_b_understanding"] = p["why_undetected"] = "..."
        elif action == "same_understanding":
            p["member_b_understanding"] = p["member_a_understanding"]
        elif action == "copied":
            from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS

            p["surface_form"] = FIELD_DESCRIPTIONS["surface_form"]
        return data
    data = valid_stage2()
    turns = data["turns"]
    if action == "dots":
        for t in turns:
            t["inner_thought"] = t["utterance"] = "..."
    elif action == "absent_ma":
        turns[2]["utterance"] = "Good. Then we compare against last year before we look at the new numbers."
        turns[3]["utterance"] = "Fine by me, we compare first and decide next week."
    elif action == "leak":
        turns[1]["utterance"] = ("Sure, the held-out set is a fresh random tenth of the corpus that the data loader "
                                 "draws with seed 17.")
    elif action == "wrong_speaker":
        turns[1]["speaker_name"] = "Carol Diaz"
    return data


GATE_ACTIONS = ("dots", "same_understanding", "copied", "absent_ma", "leak", "wrong_speaker")


def judge_scores(kind: str, body: dict[str, Any], passing: bool = True) -> dict[str, Any]:
    """Judge JSON for a request: maximal scores (``passing``) or a subtlety/naturalness of 1."""
    if kind == "stage1_judge":
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        ids = schema.get("properties", {}).get("ma_scores", {}).get("required") or ["MA1", "MA2"]
        item = {"subtlety": 3 if passing else 1, "specificity": 2, "believability": 2,
                "feedback": "No changes needed." if passing else "Too obvious: anyone would ask which data is meant."}
        return {"ma_scores": {i: dict(item) for i in ids}, "overall_feedback": "ok" if passing else "make it subtler"}
    return {"dialogue_scores": {"naturalness": 3 if passing else 1, "implicitness": 3, "coverage": 2,
                                "profile_consistency": 3,
                                "feedback": "No changes needed." if passing else "Stilted: rewrite turn 2."}}


class ProtocolResponder:
    """Answers every request kind with valid JSON, unless a scripted action is queued.

    ``script`` maps a kind to a list of actions consumed one per request of that kind:
    ``"ok"``, ``"low"`` (judge: failing scores), ``"inconsistent"`` (judge: a score below
    the maximum with "No changes needed."), ``"invalid"`` (generator: breaks the
    structural rules), one of :data:`GATE_ACTIONS` (generator: fails that content gate,
    see :func:`gate_breaking`), ``"badjson"``, ``"length"``, ``"429"`` (with ``Retry-After: 0``),
    ``"500"``, ``"503"``, ``"400"``. ``latency`` delays every reply (seconds).
    """

    def __init__(self, script: dict[str, list[str]] | None = None, latency: float = 0.0, model: str = "scripted") -> None:
        self.script = defaultdict(deque, {k: deque(v) for k, v in (script or {}).items()})
        self.latency = latency
        self.model = model
        self.counts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        kind = request_kind(body)
        with self._lock:
            self.counts[kind] += 1
            action = self.script[kind].popleft() if self.script[kind] else "ok"
        reply = self._reply(kind, body, action)
        reply.delay = self.latency
        return reply

    def _reply(self, kind: str, body: dict[str, Any], action: str) -> Reply:
        if action in ("429", "500", "503", "400"):
            headers = {"Retry-After": "0"} if action == "429" else {}
            return Reply(status=int(action), body={"error": {"message": f"scripted {action}", "type": "scripted"}},
                         headers=headers)
        if action == "badjson":
            return chat_reply('{"this is": not json', model=self.model)
        if action == "length":
            return chat_reply('{"cut off', finish_reason="length", model=self.model)
        if kind in ("stage1_generator", "stage2_generator") and action in GATE_ACTIONS:
            data = gate_breaking(kind, action)
        elif kind == "stage1_generator":
            data = valid_stage1()
            if action == "invalid":
                data["misalignment_points"] = data["misalignment_points"][:1]
                data["misalignment_points"][0]["type"] = "procedural"
        elif kind == "stage2_generator":
            data = valid_stage2()
        elif kind in ("stage1_judge", "stage2_judge"):
            data = judge_scores(kind, body, passing=action not in ("low", "inconsistent"))
            if action == "inconsistent":
                block = data.get("dialogue_scores") or next(iter(data["ma_scores"].values()))
                block["feedback"] = "No changes needed."
        else:
            return Reply(status=400, body={"error": {"message": "unknown request kind"}})
        return chat_reply(json.dumps(data), model=self.model)


class ScriptedServer:
    """OpenAI-compatible HTTP server on 127.0.0.1 (free port) in a background thread.

    ``responder(body, headers) -> Reply`` answers chat completions; every request
    (path, headers, body) is kept in ``requests``. Use as a context manager; the
    API base URL is ``base_url`` (ending in ``/v1``).
    """

    def __init__(self, responder: Callable[[dict[str, Any], dict[str, str]], Reply], models: list[str] | None = None) -> None:
        self.responder = responder
        self.models = models or ["scripted"]
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # silence
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                data = (reply.raw if reply.raw is not None else json.dumps(reply.body)).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(Reply(body={"object": "list", "data": [
                        {"id": m, "object": "model", "owned_by": "scripted"} for m in outer.models]}))
                else:
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append({"path": self.path, "headers": headers, "body": body})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))
                    return
                self._send(outer.responder(body, headers))

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # bursts of new connections from many workers

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
