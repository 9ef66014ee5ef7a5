"""Batch transports: a wave of chat-completions requests sent as one JSONL file, answered
hours later (half price at OpenAI, Together and others; offline with ``vllm run-batch``).

A request is a line ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}`` whose ``body`` is the very JSON a live request would POST; an answer is a line
``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``, the
shape both the OpenAI Batch API and ``vllm run-batch`` write (an error line has no body
and an ``error``: a string, or an object with ``message``/``code``).

- :class:`ProviderBatches`: the ``openai`` SDK's Files and Batches APIs
  (``files.create(purpose="batch")``, ``batches.create``, ``batches.retrieve``,
  ``batches.list``, ``files.content``). A provider takes at most :data:`MAX_REQUESTS`
  requests and :data:`MAX_BYTES` bytes per input file (:func:`split_lines`).
- :class:`FileBatches`: ``--batch-dir DIR``: the input is written to
  ``DIR/<wave>.input.jsonl``; whatever tool runs it writes ``DIR/<wave>.output.jsonl``.

Which requests make a wave, and how answers become stored calls, is the runs layer's
business (:mod:`ioa_synth.runs.batch`). A client in batch mode never sends a request: its
:class:`BatchSender` answers it from a finished batch or raises :class:`CallParked`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import openai

from ioa_synth.core.atomic import write_bytes_atomic

#: The route every line asks for (the batch's ``endpoint``).
BATCH_ROUTE = "/v1/chat/completions"
#: A provider's limits per input file (OpenAI Batch API: 50,000 requests, 200 MB).
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
#: Batch statuses after which nothing changes.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


class CallParked(BaseException):
    """A call of a batch-mode run has no answer yet: its request waits for the next wave
    (or is in a batch in flight). Raised through the capability's code like Ctrl-C is (a
    ``BaseException``: no ``except Exception`` of a case takes it for the case's failure)
    and caught by the wave driver, which parks the unit until its answer is stored."""


class BatchSender(Protocol):
    """What a client in batch mode asks instead of sending (:mod:`ioa_synth.runs.batch`)."""

    def answer(self, client: Any, payload: bytes, rec: Any, on_call: Any) -> Any:
        """The reply (decoded chat-completions JSON) of the request ``payload`` for try
        ``rec.try_index``; failed sends are reported to ``on_call``. Raises
        :class:`CallParked` while there is none."""


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: ``custom_id`` and the encoded JSON ``body``."""

    custom_id: str
    body: bytes

    def jsonl(self) -> bytes:
        """The input-file line, newline included (the body's bytes unchanged)."""
        head = json.dumps({"custom_id": self.custom_id, "method": "POST", "url": BATCH_ROUTE})
        return head[:-1].encode() + b', "body": ' + self.body + b"}\n"


def split_lines(lines: list[BatchLine], max_requests: int = MAX_REQUESTS,
                max_bytes: int = MAX_BYTES) -> list[list[BatchLine]]:
    """``lines`` cut, in order, into parts of at most ``max_requests`` lines and
    ``max_bytes`` bytes of input file each (a single larger line gets a part of its own)."""
    parts: list[list[BatchLine]] = []
    size = 0
    for line in lines:
        n = len(line.jsonl())
        if not parts or len(parts[-1]) >= max_requests or (parts[-1] and size + n > max_bytes):
            parts.append([])
            size = 0
        parts[-1].append(line)
        size += n
    return parts


@dataclass
class LineResult:
    """The answer to one line: ``data`` (the chat-completions body of a 200 reply) or
    ``error`` (one line of text) with the HTTP ``status`` when there was one and the
    error ``body`` as the provider gave it (for telling a setup error from a case's)."""

    custom_id: str
    data: dict[str, Any] | None = None
    status: int | None = None
    error: str | None = None
    body: Any = None


def _error_text(error: Any, status: int | None, body: Any) -> str:
    inner = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
    message = (inner.get("message") if isinstance(inner, dict) else None) or (error if isinstance(error, str) else None)
    message = " ".join(str(message or inner or "no reply").split())[:300]
    return f"batch line failed: HTTP {status}: {message}" if status else f"batch line failed: {message}"


def read_results(text: bytes, source: str) -> tuple[dict[str, LineResult], int]:
    """The answers in an output or error file (``source`` names it in messages):
    ``({custom_id: LineResult}, unreadable_lines)``. A line that is not JSON (a file still
    being written ends in half a line) or has no ``custom_id`` is counted, not raised."""
    out: dict[str, LineResult] = {}
    bad = 0
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            cid = line["custom_id"]
        except (ValueError, TypeError, KeyError):
            bad += 1
            continue
        response = line.get("response") if isinstance(line.get("response"), dict) else {}
        status, body = response.get("status_code"), response.get("body")
        if line.get("error") is None and status in (None, 200) and isinstance(body, dict) and "choices" in body:
            out[str(cid)] = LineResult(str(cid), data=body, status=200)
        else:
            error = line.get("error")
            out[str(cid)] = LineResult(str(cid), status=status, error=_error_text(error, status, body),
                                       body=body if body is not None else error)
    return out, bad


@dataclass
class BatchState:
    """A batch as the provider reports it."""

    batch_id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL


def _state(batch: Any) -> BatchState:
    counts = batch.request_counts
    errors = [f"line {e.line}: {e.message}" if e.line is not None else str(e.message)
              for e in ((batch.errors.data or []) if batch.errors is not None else [])]
    return BatchState(batch.id, batch.status, batch.input_file_id, batch.output_file_id, batch.error_file_id,
                      counts.total if counts else 0, counts.completed if counts else 0,
                      counts.failed if counts else 0, errors)


class ProviderBatches:
    """An endpoint's Batch API through the ``openai`` SDK (its own retries: these are a
    few control calls per wave, not the hot path).

    Args:
        base_url / api_key: the endpoint's.
        max_retries / timeout: the SDK's settings for each control call.

    Every method raises ``openai.APIError`` as the SDK does.
    """

    def __init__(self, base_url: str, api_key: str, max_retries: int = 5, timeout: float = 600.0) -> None:
        self.base_url = base_url
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout)

    def upload(self, name: str, data: bytes) -> str:
        """Upload an input file (``purpose="batch"``) and return its file id."""
        return self._client.files.create(file=(name, data, "application/jsonl"), purpose="batch").id

    def create(self, input_file_id: str, metadata: dict[str, str]) -> BatchState:
        """Start a batch of the file ``input_file_id`` (24 h window)."""
        return _state(self._client.batches.create(input_file_id=input_file_id, endpoint=BATCH_ROUTE,
                                                  completion_window="24h", metadata=metadata))

    def find(self, input_file_id: str) -> BatchState | None:
        """The batch made from ``input_file_id``, if one was (a run killed between creating
        a batch and storing its id finds it here instead of submitting again)."""
        for batch in self._client.batches.list(limit=100):
            if batch.input_file_id == input_file_id:
                return _state(batch)
        return None

    def retrieve(self, batch_id: str) -> BatchState:
        """The batch's current status and counts."""
        return _state(self._client.batches.retrieve(batch_id))

    def results(self, state: BatchState) -> tuple[dict[str, LineResult], int]:
        """The answers of a finished batch: its output file, then its error file."""
        out: dict[str, LineResult] = {}
        bad = 0
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                found, unreadable = read_results(self._client.files.content(file_id).content, file_id)
                out.update({k: v for k, v in found.items() if k not in out})
                bad += unreadable
        return out, bad

    def close(self) -> None:
        self._client.close()


class FileBatches:
    """``--batch-dir DIR``: a wave's input is written to ``DIR/<wave>.input.jsonl`` and its
    answers read from ``DIR/<wave>.output.jsonl`` (``vllm run-batch -i IN -o OUT --model M``
    writes that file)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def input_path(self, wave: str) -> Path:
        return self.folder / f"{wave}.input.jsonl"

    def output_path(self, wave: str) -> Path:
        return self.folder / f"{wave}.output.jsonl"

    def write(self, wave: str, lines: list[BatchLine]) -> Path:
        """Write the input file (atomically); an existing file with other content is not
        overwritten (another run's wave).

        Raises:
            FileExistsError: ``DIR/<wave>.input.jsonl`` holds other requests.
            OSError: the folder cannot be written.
        """
        path = self.input_path(wave)
        data = b"".join(line.jsonl() for line in lines)
        if path.exists():
            if path.read_bytes() == data:
                return path
            raise FileExistsError(f"{path} exists and holds other requests (another run's wave?); "
                                  "use a --batch-dir of its own for each build or results folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        return write_bytes_atomic(path, data)

    def results(self, wave: str) -> tuple[dict[str, LineResult], int] | None:
        """The answers in ``DIR/<wave>.output.jsonl``, or ``None`` while it does not exist."""
        path = self.output_path(wave)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        return read_results(data, str(path))
