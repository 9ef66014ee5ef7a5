#!/usr/bin/env python
"""Benchmark of the embedded model's serving path: the toolkit's embedded endpoint against a
bare ``llama-server`` started by hand with the same flags, and N slots against one.

What runs
    The same fixed set of ``--requests`` stage-1 generator requests every time: the demo
    seeds' (``seeds/demo.jsonl``, cycled) real stage-1 prompts (about 1,500 tokens) with the
    scaffold plan's request schema as ``response_format`` ``json_schema``, ``--max-tokens``
    each (the reply is cut there: a stage-1 reply is longer), per-call seeds 0, 1, 2...

(a) toolkit: ``open_endpoints(["generator"])`` starts the embedded server (``EmbeddedServer``,
    N slots: ``--slots``, default :func:`ioa_synth.llm.local_model.embedded_slots`) and the
    requests go through ``LLMClient.complete_json`` on N threads (streamed, slot accounting).
(b) bare: ``llama-server`` started with ``subprocess``, the identical command line
    (``EmbeddedServer.command``) and environment (``server_env``); the request bodies (a)
    sent, posted by ``httpx`` on N threads, not streamed.
(c) toolkit with one slot, the requests one at a time.

Each run starts its own server and sends one small warm-up request first. Figure: completion
tokens (the server's usage counts) per wall-clock second from the first request to the last
reply. Target (``--check``): (a)/(b) >= 0.95, the median over ``--rounds`` (a, b) pairs.
Reported: (a)/(c), the aggregate gain of N slots over one, and each server's peak RSS. The
pairs run in turn toolkit first and bare first, so neither always meets a warmer machine.

Usage::

    .venv/bin/python scripts/bench_embedded.py --check                 # default model, 4 requests
    .venv/bin/python scripts/bench_embedded.py --model smollm2-135m --requests 8 --check

Run it on a quiet machine (one embedded server at a time: ``flock /tmp/ioa-embedded.lock``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ioa_synth.build.stages import PROFILES  # noqa: E402
from ioa_synth.llm import local_model as lm  # noqa: E402
from ioa_synth.llm.client import LLMCallError, LLMClient  # noqa: E402
from ioa_synth.llm.config import ToolkitConfig  # noqa: E402
from ioa_synth.llm.endpoints import open_endpoints  # noqa: E402
from ioa_synth.llm.llama_server import binary  # noqa: E402
from ioa_synth.llm.local_weights import default_local_model, model_path  # noqa: E402
from ioa_synth.protocol.plan_modes import stage1_request_schema  # noqa: E402
from ioa_synth.seeds.tuples import load_seed_file  # noqa: E402

RATIO_TARGET = 0.95


@dataclass
class Run:
    """One measured run: completion tokens, wall seconds, requests, server peak RSS (MiB)."""

    what: str
    slots: int
    tokens: int
    wall_s: float
    requests: int
    rss_mib: float
    client_cpu_s: float  # this process's CPU seconds during the run (the client's share of the cores)
    server_decode: float  # mean of the server's own per-request decoding tokens/s (its log's timings)

    @property
    def tok_s(self) -> float:
        return self.tokens / self.wall_s if self.wall_s else float("nan")

    def line(self) -> str:
        return (f"  {self.what:<8} {self.slots} slot(s): {self.tokens:5d} tokens in {self.wall_s:6.1f} s = "
                f"{self.tok_s:6.2f} tok/s ({self.requests} requests; server decoding {self.server_decode:.2f} tok/s "
                f"each; client CPU {self.client_cpu_s:.1f} s; server peak RSS {self.rss_mib:.0f} MiB)")


def stage1_requests(n: int) -> list[tuple[list[dict[str, str]], dict[str, Any]]]:
    """``n`` (messages, schema) pairs: the demo seeds' stage-1 generator requests, cycled."""
    seeds = load_seed_file(REPO / "seeds" / "demo.jsonl")
    out = []
    for i in range(n):
        seed = seeds[i % len(seeds)]
        prompt = PROFILES.render("generator", **PROFILES.generator_context(seed, None, None, None, "scaffold", None))
        out.append((prompt.messages, stage1_request_schema("scaffold", seed.seed_id, None)))
    return out


def peak_rss_mib(pid: int | None) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, TypeError):
        pass
    return float("nan")


def server_decode_rate(log_text: str, skip: int = 1) -> float:
    """Mean decoding tokens/s of the requests in a llama-server log, past the ``skip`` warm-up ones."""
    rates = [float(m) for m in re.findall(r"\|\s+eval time =.*?([\d.]+) tokens per second", log_text)][skip:]
    return statistics.mean(rates) if rates else float("nan")


def warm_up(base_url: str, model: str) -> None:
    body = {"model": model, "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]}
    httpx.post(base_url + "/chat/completions", json=body, timeout=600).raise_for_status()


def toolkit_run(model: str, slots: int, requests: list, max_tokens: int) -> tuple[Run, list[bytes]]:
    """(a)/(c): the toolkit's embedded endpoint; returns the run and the bodies it sent."""
    os.environ[lm.SLOTS_ENV] = str(slots)
    cfg = ToolkitConfig.model_validate({"generator": {"content_retries": 0, "max_retries": 0, "timeout": 3600,
                                                      "request_options": {"max_tokens": max_tokens}}})
    records: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="bench-embedded-") as tmp, \
            open_endpoints(["generator"], cfg, model, log_dir=Path(tmp)) as eps:
        ep = eps["generator"]
        warm_up(ep.base_url, ep.model)
        client = LLMClient(ep)

        def one(i: int) -> None:
            messages, schema = requests[i]
            try:
                _, rec = client.complete_json(messages, schema, "stage1_profiles", lambda v: v, records.append, seed=i)
                records.append(rec)
            except LLMCallError:  # cut at max_tokens (finish_reason "length"): its record is stored
                pass

        start, cpu0 = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(slots) as pool:
            list(pool.map(one, range(len(requests))))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        server_pid = _server_pid(ep.base_url)
        rss = peak_rss_mib(server_pid)
        client.close()
        decode = server_decode_rate((Path(tmp) / "embedded-server.log").read_text(errors="replace"))
    tokens = sum(r.completion_tokens or 0 for r in records)
    bodies = [r.request_json.encode() for r in records]
    return Run("toolkit", slots, tokens, wall, len(records), rss, cpu, decode), bodies


def _server_pid(base_url: str) -> int | None:
    """The pid of the live embedded server answering ``base_url`` (for its peak RSS)."""
    port = base_url.rsplit(":", 1)[1].split("/", 1)[0]
    for srv in list(lm._LIVE):
        if str(srv.port) == port:
            return srv.pid
    return None


def bare_run(model: str, slots: int, bodies: list[bytes]) -> Run:
    """(b): llama-server started by hand with the toolkit's flags, the same bodies posted plainly."""
    srv = lm.EmbeddedServer(model, slots=slots)
    port = lm._free_port()
    cmd = srv.command(binary("llama-server"), model_path(model), port)
    base = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=lm.server_env())
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    if httpx.get(base + "/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("error: the bare llama-server did not start")
                time.sleep(0.25)
            warm_up(base, model)
            tokens: list[int] = []

            def one(body: bytes) -> None:
                sent = {k: v for k, v in json.loads(body).items() if k not in ("stream", "stream_options")}
                resp = httpx.post(base + "/chat/completions", json=sent, timeout=3600)
                resp.raise_for_status()
                tokens.append(resp.json()["usage"]["completion_tokens"])

            start, cpu0 = time.perf_counter(), time.process_time()
            with ThreadPoolExecutor(slots) as pool:
                list(pool.map(one, bodies))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
            rss = peak_rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
        log.seek(0)
        decode = server_decode_rate(log.read().decode(errors="replace"))
    return Run("bare", slots, sum(tokens), wall, len(tokens), rss, cpu, decode)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="smollm2-135m or qwen2.5-coder-1.5b (default: the best installed)")
    ap.add_argument("--requests", type=int, default=4, help="stage-1 requests per run (default 4)")
    ap.add_argument("--max-tokens", type=int, default=192, help="max_tokens of each request (default 192)")
    ap.add_argument("--slots", type=int, default=None, help="slots of runs (a) and (b) (default: embedded_slots())")
    ap.add_argument("--rounds", type=int, default=3,
                    help="(a, b) pairs, in turn (a) first and (b) first; the median ratio is checked (default 3)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when (a)/(b) < {RATIO_TARGET}")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    model = args.model or default_local_model()
    slots = args.slots or lm.embedded_slots()
    requests = stage1_requests(args.requests)
    load = os.getloadavg()
    print(f"bench_embedded: {model}, {args.requests} stage-1 requests x max_tokens {args.max_tokens}, "
          f"{slots} slots, {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    pairs: list[tuple[Run, Run]] = []
    bodies: list[bytes] = []
    for r in range(args.rounds):
        if r % 2 == 0 or not bodies:  # toolkit first in odd rounds, bare first (last round's bodies) in even ones
            tk, bodies = toolkit_run(model, slots, requests, args.max_tokens)
            bare = bare_run(model, slots, bodies)
        else:
            bare = bare_run(model, slots, bodies)
            tk, bodies = toolkit_run(model, slots, requests, args.max_tokens)
        pairs.append((tk, bare))
        print(f" round {r + 1}:\n{tk.line()}\n{bare.line()}\n  ratio toolkit/bare {tk.tok_s / bare.tok_s:.3f}",
              flush=True)
    one, _ = toolkit_run(model, 1, requests, args.max_tokens)
    print(f" one slot, one request at a time:\n{one.line()}")
    ratios = [tk.tok_s / bare.tok_s for tk, bare in pairs]
    ratio = statistics.median(ratios)
    median_tk = statistics.median(tk.tok_s for tk, _ in pairs)
    gain = median_tk / one.tok_s
    end = os.getloadavg()
    ok = ratio >= RATIO_TARGET
    print(f"toolkit/bare tokens/s: {ratio:.3f} (median of {', '.join(f'{x:.3f}' for x in ratios)}; "
          f"target >= {RATIO_TARGET}) {'OK' if ok else 'MISSED'}")
    print(f"aggregate tokens/s, {slots} slots vs 1: {median_tk:.2f} / {one.tok_s:.2f} = {gain:.2f}x")
    print(f"load average at the end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({
            "model": model, "requests": args.requests, "max_tokens": args.max_tokens, "slots": slots,
            "load_start": load, "load_end": end, "ratio": ratio, "ratios": ratios, "slots_gain": gain,
            "runs": [vars(x) | {"tok_s": x.tok_s} for pair in pairs for x in pair] + [vars(one) | {"tok_s": one.tok_s}],
        }, indent=1))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
