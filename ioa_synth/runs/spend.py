"""What a run will cost and what it cost: the estimate's shape (``estimate --json``), the
measurements it is built on, and the spending ``status`` puts beside it.

An estimate is a list of :class:`CallKind` (one per kind of call of the plan: a stage and
role, with the expected number of calls and tokens) folded per component into the
contract ``{"components": {NAME: {"calls", "prompt_tokens", "completion_tokens", "cost",
"batch_cost"}}, "total": {...}, "assumptions": {...}}`` (costs in USD, ``None`` without a
price). A run records the estimate it starts from in ``estimates``; :func:`spent` sums
the calls stored since, per component, priced live or batch as they went.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ioa_synth.llm.prices import Price
from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.runs.recorder import now_utc

#: Keys of a component's (and the total's) figures, in the contract's order.
FIGURES = ("calls", "prompt_tokens", "completion_tokens", "cost", "batch_cost")
#: The table of recorded estimates (a runs-layer table, :data:`ioa_synth.runs.schema.RUNS_TABLES`).
ESTIMATES_TABLE = "estimates"


#: Cases whose prompts an estimate renders and counts at most (evenly spread over the plan).
COUNTED_CASES = 400


def sampled(cases: list, limit: int = COUNTED_CASES) -> list:
    """At most ``limit`` of ``cases``, evenly spread (all of them when there are fewer)."""
    if len(cases) <= limit:
        return list(cases)
    step = len(cases) / limit
    return [cases[int(i * step)] for i in range(limit)]


@dataclass
class CallKind:
    """Expected calls of one kind (``label``, e.g. ``stage 1 judge``) of ``component``:
    ``calls`` and the mean ``prompt`` and ``completion`` tokens of one call."""

    component: str
    label: str
    calls: float
    prompt: float
    completion: float


@dataclass
class Measured:
    """Means of the calls stored in a catalog, per ``(stage, role)``: completion and prompt
    tokens of a successful call (``None`` when no call of it is stored), and how many failed
    tries each successful call took (content retries, failed sends)."""

    completion: dict[tuple[int, str], float] = field(default_factory=dict)
    prompt: dict[tuple[int, str], float] = field(default_factory=dict)
    retries: dict[tuple[int, str], float] = field(default_factory=dict)
    calls: dict[tuple[int, str], int] = field(default_factory=dict)


def measure_setups(catalog: Catalog | None, setups: Mapping[str, Any],
                   roles: Callable[[str], str] = lambda role: role) -> Measured:
    """:func:`measure` with each component's own token counter (``setups[component].counter``,
    its ``text`` and ``messages``); a component without a setup is counted at four characters
    a token (text) and not at all (messages)."""
    return measure(catalog, lambda c, t: setups[c].counter.text(t) if c in setups else len(t) // 4,
                   lambda c, m: setups[c].counter.messages(m) if c in setups else 0, roles=roles)


def measure(catalog: Catalog | None, count_text: Callable[[str, str], int], count_messages: Callable[[str, list], int],
            roles: Callable[[str], str] = lambda role: role) -> Measured:
    """:class:`Measured` over ``catalog``'s ``llm_calls`` (an empty one without a catalog).
    Replies without usage (the embedded server's streamed replies) are counted with
    ``count_text(component, text)`` / ``count_messages(component, messages)``;
    ``roles`` maps a role to its component."""
    out = Measured()
    if catalog is None:
        return out
    rows = catalog.query_dicts(
        "SELECT stage, role, count(*) FILTER (WHERE error IS NULL) AS ok, count(*) FILTER (WHERE error IS NOT NULL) "
        "AS failed, avg(completion_tokens) FILTER (WHERE error IS NULL) AS completion, "
        "avg(prompt_tokens) FILTER (WHERE error IS NULL) AS prompt FROM llm_calls GROUP BY ALL")
    for r in rows:
        key = (r["stage"], r["role"])
        if not r["ok"]:
            continue
        out.calls[key] = r["ok"]
        out.retries[key] = r["failed"] / r["ok"]
        comp = roles(r["role"])
        if r["completion"] is None or r["prompt"] is None:
            sample = catalog.execute("SELECT response_text, request_json FROM llm_calls WHERE error IS NULL AND "
                                     "stage = ? AND role = ? LIMIT 200", [r["stage"], r["role"]])
            if r["completion"] is None:
                r["completion"] = sum(count_text(comp, t or "") for t, _ in sample) / len(sample)
            if r["prompt"] is None:
                r["prompt"] = sum(count_messages(comp, json.loads(q).get("messages") or []) for _, q in sample) / \
                    len(sample)
        out.completion[key], out.prompt[key] = float(r["completion"]), float(r["prompt"])
    return out


def fold(kinds: list[CallKind], prices: dict[str, Price | None], assumptions: dict[str, Any]) -> dict[str, Any]:
    """The estimate contract from ``kinds`` (see the module docstring); ``prices`` per component."""
    comps: dict[str, dict[str, Any]] = {}
    for k in kinds:
        c = comps.setdefault(k.component, {"calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0})
        c["calls"] += k.calls
        c["prompt_tokens"] += k.calls * k.prompt
        c["completion_tokens"] += k.calls * k.completion
    for name, c in comps.items():
        price = prices.get(name)
        c["cost"] = price.cost(c["prompt_tokens"], c["completion_tokens"]) if price else None
        c["batch_cost"] = price.cost(c["prompt_tokens"], c["completion_tokens"], batch=True) if price else None
    used = {name: (p.model_dump() if p is not None else None) for name, p in prices.items()}
    return {"components": {n: _rounded(c) for n, c in comps.items()}, "total": _rounded(total(comps)),
            "assumptions": assumptions | {"prices_per_mtok": used, "calls_by_kind": [
                {"component": k.component, "kind": k.label, "calls": round(k.calls, 2),
                 "prompt_tokens_per_call": round(k.prompt, 1), "completion_tokens_per_call": round(k.completion, 1)}
                for k in kinds]}}


def total(comps: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The sums of the components' figures (a cost is ``None`` when any component has none)."""
    out: dict[str, Any] = {}
    for f in FIGURES:
        values = [c.get(f) for c in comps.values()]
        out[f] = None if f.endswith("cost") and (not values or any(v is None for v in values)) else \
            sum(v or 0 for v in values)
    return out


def _rounded(c: dict[str, Any]) -> dict[str, Any]:
    return {"calls": round(c["calls"], 1), "prompt_tokens": round(c["prompt_tokens"]),
            "completion_tokens": round(c["completion_tokens"]),
            "cost": None if c["cost"] is None else round(c["cost"], 6),
            "batch_cost": None if c["batch_cost"] is None else round(c["batch_cost"], 6)}


def record_estimate(catalog: Catalog, run_id: str, command: str, plan: dict[str, Any],
                    estimate: dict[str, Any], created_at: Any = None) -> None:
    """Keep the estimate a run starts from (``status`` shows it beside what was spent since
    ``created_at``, default now: an estimate made while the run's first calls are out is
    dated before them). An estimate of no call is not kept (:func:`nothing_left`)."""
    if nothing_left(estimate):
        return
    catalog.record([(ESTIMATES_TABLE, {"run_id": run_id, "command": command, "created_at": created_at or now_utc(),
                                       "plan_json": dumps(plan), "estimate_json": dumps(estimate)})])


def latest_estimate(catalog: Catalog) -> dict[str, Any] | None:
    """``{"created_at", "command", "plan", "estimate"}`` of the estimate recorded last, or ``None``."""
    tables = {t for (t,) in catalog.execute("SELECT table_name FROM information_schema.tables")}
    if ESTIMATES_TABLE not in tables:
        return None
    rows = catalog.query_dicts(f"SELECT * FROM {ESTIMATES_TABLE} ORDER BY created_at DESC LIMIT 1")
    if not rows:
        return None
    r = rows[0]
    return {"created_at": r["created_at"], "command": r["command"], "plan": json.loads(r["plan_json"]),
            "estimate": json.loads(r["estimate_json"])}


def spent(catalog: Catalog, since: Any, component_of: Callable[[str], str], prices: dict[str, Price | None]
          ) -> dict[str, Any]:
    """What the calls stored since ``since`` cost, in the estimate's shape: every try
    counts (failed ones too: they are billed), batch calls at the batch price."""
    rows = catalog.query_dicts(
        "SELECT role, coalesce(via, 'live') AS via, count(*) AS calls, coalesce(sum(prompt_tokens), 0) AS p, "
        "coalesce(sum(completion_tokens), 0) AS c FROM llm_calls WHERE created_at >= ? GROUP BY ALL", [since])
    comps: dict[str, dict[str, Any]] = {}
    for r in rows:
        name = component_of(r["role"])
        c = comps.setdefault(name, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
        c["calls"] += r["calls"]
        c["prompt_tokens"] += r["p"]
        c["completion_tokens"] += r["c"]
        price = prices.get(name)
        c["cost"] = None if price is None or c["cost"] is None else \
            c["cost"] + price.cost(r["p"], r["c"], batch=r["via"] == "batch")
    for c in comps.values():
        c["batch_cost"] = None
    return {"components": comps, "total": total(comps)}


def spend_report(catalog: Catalog, component_of: Callable[[str], str]) -> dict[str, Any] | None:
    """The estimate recorded last beside what the calls stored since then cost (at the
    estimate's prices): ``{"estimated_at", "command", "plan", "estimate", "spent"}``, or
    ``None`` when no run recorded an estimate."""
    from ioa_synth.llm.prices import parse_price

    last = latest_estimate(catalog)
    if last is None:
        return None
    used = last["estimate"].get("assumptions", {}).get("prices_per_mtok", {})
    prices = {name: parse_price(p, name) if p else None for name, p in used.items()}
    return {"estimated_at": str(last["created_at"]), "command": last["command"], "plan": last["plan"],
            "estimate": last["estimate"], "spent": spent(catalog, last["created_at"], component_of, prices)}


def record_run_estimate(catalog: Catalog, run_id: str, command: str,
                        estimate: tuple[dict[str, Any], Callable[[Catalog], dict[str, Any] | None]] | None) -> None:
    """Record the estimate a run of ``command`` starts from, for ``status``. ``estimate`` is
    ``(plan, make)``: ``plan`` the run's arguments that decide what it will do (JSON-able),
    ``make(catalog)`` the estimate (the contract of :func:`fold`) or ``None`` when it cannot
    be made. Nothing is recorded (``make`` is not called) without ``estimate`` or when the
    estimate recorded last is of the same ``plan`` (:func:`should_record`), nor an estimate
    of no call (:func:`record_estimate`)."""
    if estimate is None or not should_record(catalog, estimate[0]):
        return
    made = estimate[1](catalog)
    if made is not None:
        record_estimate(catalog, run_id, command, estimate[0], made)


#: Arguments of a run that do not change what it does (how it sends its calls), left out of its plan.
NOT_PLAN = ("workers", "batch", "batch_dir", "sample_cases")


def run_plan(args: dict[str, Any], paths: tuple[str, ...]) -> dict[str, Any]:
    """The plan of a run (what decides what it will do) from its recorded ``args``: without
    :data:`NOT_PLAN`, and each of ``paths`` (file arguments, as typed) made absolute, so that
    the same file named another way ("seeds/demo.jsonl", "/home/me/p/seeds/demo.jsonl") is
    the same plan: a resumed run keeps the estimate its job started from."""
    return {k: (str(Path(v).resolve()) if k in paths and isinstance(v, str) else v)
            for k, v in args.items() if k not in NOT_PLAN}


def nothing_left(made: dict[str, Any]) -> bool:
    """True when an estimate counts no call: the run found nothing to do (a finished folder
    run again), and the estimate its job started from stays the one ``status`` shows."""
    return not (made.get("total") or {}).get("calls")


def should_record(catalog: Catalog, plan: dict[str, Any]) -> bool:
    """Whether a run of ``plan`` records its estimate: not when the estimate recorded last
    is of the same plan (a resumed run keeps the estimate its job started from)."""
    last = latest_estimate(catalog)
    return last is None or last["plan"] != json.loads(dumps(plan))
