"""A scripted OpenAI Batch API (Files and Batches routes) for :class:`ScriptedServer`.

Routes: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/batches``. A batch moves
``validating -> in_progress -> completed`` one step per ``retrieve`` (``steps`` retrieves in
progress), and is answered line by line by the server's chat responder, so a batch run and
a live run against the same responder get the same replies. Scripted per submission
(``outcomes``, consumed in order, then ``"complete"``):

- ``"complete"``: every line answered (a responder's non-200 reply goes to the error file);
- ``"fail"``: the batch fails validation (``errors``, no output);
- ``"expire:N"``: only the first N lines are answered, then ``expired``;
- ``"errors:K"``: every K-th line (1-based) gets an HTTP 500 in the error file;
- ``"hold"``: stays ``in_progress`` until :meth:`ScriptedBatches.release`.

``submissions`` counts ``POST /v1/batches``; ``retrieves`` the polls.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class _Batch:
    id: str
    input_file_id: str
    metadata: dict[str, Any]
    outcome: str
    status: str = "validating"
    polls: int = 0
    created_at: int = field(default_factory=lambda: int(time.time()))
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0


class ScriptedBatches:
    """The Files and Batches state of one scripted server (thread-safe).

    Args:
        outcomes: what each submitted batch does, in submission order (see module docstring).
        steps: retrieves a batch stays ``in_progress`` before it finishes.
    """

    def __init__(self, outcomes: list[str] | None = None, steps: int = 1) -> None:
        self.outcomes = list(outcomes or [])
        self.steps = steps
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, _Batch] = {}
        self.submissions = 0
        self.retrieves = 0
        self.released = threading.Event()
        self._lock = threading.Lock()
        self.respond: Callable[[dict[str, Any], dict[str, str]], Any] | None = None

    def release(self) -> None:
        """Let ``"hold"`` batches finish at their next retrieve."""
        self.released.set()

    # -- routes --------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any] | None:
        """``(status, JSON or bytes)`` for a Files/Batches route, ``None`` for another path."""
        parts = [p for p in path.split("?")[0].split("/") if p]
        if "files" in parts:
            rest = parts[parts.index("files") + 1:]
            if method == "POST" and not rest:
                return self._upload(headers, body)
            if method == "GET" and len(rest) == 2 and rest[1] == "content":
                with self._lock:
                    found = self.files.get(rest[0])
                return (200, found[1]) if found else (404, {"error": {"message": f"no file {rest[0]}"}})
            return 404, {"error": {"message": "not found"}}
        if "batches" not in parts:
            return None
        rest = parts[parts.index("batches") + 1:]
        if method == "POST" and not rest:
            return self._create(json.loads(body or b"{}"))
        if method == "GET" and not rest:
            with self._lock:
                data = [self._view(b) for b in sorted(self.batches.values(), key=lambda b: b.id, reverse=True)]
            return 200, {"object": "list", "data": data, "has_more": False,
                         "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None}
        if method == "GET" and len(rest) == 1:
            return self._retrieve(rest[0])
        return 404, {"error": {"message": "not found"}}

    def _upload(self, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode() + body)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            fields[part.get_param("name", header="content-disposition")] = (part.get_filename(),
                                                                            part.get_payload(decode=True))
        if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
            return 400, {"error": {"message": "expected a file with purpose=batch"}}
        name, data = fields["file"]
        with self._lock:
            file_id = f"file-{len(self.files) + 1:04d}"
            self.files[file_id] = (name or "upload.jsonl", data)
        return 200, self._file(file_id)

    def _file(self, file_id: str) -> dict[str, Any]:
        name, data = self.files[file_id]
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": name, "purpose": "batch", "status": "processed"}

    def _create(self, req: dict[str, Any]) -> tuple[int, Any]:
        with self._lock:
            if req.get("input_file_id") not in self.files:
                return 400, {"error": {"message": f"no file {req.get('input_file_id')}"}}
            self.submissions += 1
            outcome = self.outcomes.pop(0) if self.outcomes else "complete"
            batch = _Batch(f"batch_{len(self.batches) + 1:04d}", req["input_file_id"], req.get("metadata") or {},
                           outcome)
            batch.total = len([x for x in self.files[batch.input_file_id][1].splitlines() if x.strip()])
            self.batches[batch.id] = batch
            return 200, self._view(batch)

    def _retrieve(self, batch_id: str) -> tuple[int, Any]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, {"error": {"message": f"no batch {batch_id}"}}
            self.retrieves += 1
            batch.polls += 1
            if batch.status == "validating":
                if batch.outcome == "fail":
                    batch.status = "failed"
                    batch.errors = [{"code": "invalid_request", "line": 1, "message": "scripted validation failure",
                                     "param": "body"}]
                else:
                    batch.status = "in_progress"
            elif batch.status == "in_progress":
                held = batch.outcome == "hold" and not self.released.is_set()
                if not held and batch.polls > self.steps:
                    self._finish(batch)
            return 200, self._view(batch)

    def _finish(self, batch: _Batch) -> None:
        lines = [json.loads(x) for x in self.files[batch.input_file_id][1].splitlines() if x.strip()]
        answer_upto = len(lines)
        every = 0
        if batch.outcome.startswith("expire:"):
            answer_upto = int(batch.outcome.split(":", 1)[1])
        elif batch.outcome.startswith("errors:"):
            every = int(batch.outcome.split(":", 1)[1])
        out, err = [], []
        for n, line in enumerate(lines[:answer_upto], 1):
            if every and n % every == 0:
                err.append(_line(line["custom_id"], 500, {"error": {"message": "scripted server error",
                                                                    "type": "server_error"}}))
                continue
            assert self.respond is not None
            reply = self.respond(line["body"], {})
            (out if reply.status == 200 else err).append(_line(line["custom_id"], reply.status, reply.body))
        for name, rows in (("output", out), ("error", err)):
            if rows:
                file_id = f"file-{len(self.files) + 1:04d}"
                self.files[file_id] = (f"{batch.id}_{name}.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
                setattr(batch, f"{name}_file_id", file_id)
        batch.completed, batch.failed = len(out), len(err)
        batch.status = "expired" if batch.outcome.startswith("expire:") else "completed"

    def _view(self, b: _Batch) -> dict[str, Any]:
        return {"id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": b.input_file_id,
                "completion_window": "24h", "status": b.status, "created_at": b.created_at,
                "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
                "errors": {"object": "list", "data": b.errors} if b.errors else None,
                "request_counts": {"total": b.total, "completed": b.completed, "failed": b.failed},
                "metadata": b.metadata}


def _line(custom_id: str, status: int, body: Any) -> dict[str, Any]:
    """An output (200) or error-file line as the OpenAI Batch API writes it."""
    return {"id": f"resp-{custom_id}", "custom_id": custom_id,
            "response": {"status_code": status, "request_id": f"req-{custom_id}", "body": body}, "error": None}


def run_batch_file(input_path: str, output_path: str, respond: Callable[[dict[str, Any], dict[str, str]], Any],
                   skip: int = 0) -> int:
    """Answer a batch input file as ``vllm run-batch -i IN -o OUT`` does: one output line
    per input line, in order (``{"id", "custom_id", "response": {"status_code", "request_id",
    "body"}, "error"}``; a failed request has ``body: null`` and the error message), through
    ``respond(body, headers) -> Reply``. The last ``skip`` lines are left out (an unfinished
    run). Returns the lines written."""
    with open(input_path, encoding="utf-8") as f:
        lines = [json.loads(x) for x in f if x.strip()]
    rows = []
    for line in lines[:len(lines) - skip]:
        reply = respond(line["body"], {})
        if reply.status == 200:
            rows.append({"id": f"vllm-{line['custom_id']}", "custom_id": line["custom_id"],
                         "response": {"status_code": 200, "request_id": f"vllm-batch-{line['custom_id']}",
                                      "body": reply.body}, "error": None})
        else:
            message = ((reply.body or {}).get("error") or {}).get("message", "error")
            rows.append({"id": f"vllm-{line['custom_id']}", "custom_id": line["custom_id"],
                         "response": {"status_code": reply.status, "request_id": f"vllm-batch-{line['custom_id']}",
                                      "body": None}, "error": message})
    with open(output_path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return len(rows)
