"""The catalog's calls (``llm_calls``) of any folder kind: filtered, paged and totalled in
SQL (``LIMIT``/``OFFSET``), never all loaded. A call's component is its role up to the
first ``:`` or ``|`` (``simulator:M1`` -> ``simulator``, ``prober|mcq:A`` -> ``prober``);
its cost is priced at the prices of the estimate the run recorded (:mod:`ioa_synth.runs.spend`),
else unknown."""

from __future__ import annotations

from typing import Any

from ioa_synth.llm.prices import Price, parse_price
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import latest_estimate

#: The component of a call, in SQL.
COMPONENT = "regexp_extract(role, '^[^:|]*')"
#: Columns a calls table shows (never ``request_json``'s headers: none are stored; no base URL).
COLUMNS = ("call_id, case_id, stage, role, attempt, try_index, model, prompt_tokens, completion_tokens, latency_ms, "
           "error, coalesce(via, 'live') AS via, created_at, " + COMPONENT + " AS component")
PAGE = 100


def prices(cat: Catalog) -> dict[str, Price | None]:
    """Price per component, from the estimate recorded last (empty when none)."""
    last = latest_estimate(cat)
    used = (last or {}).get("estimate", {}).get("assumptions", {}).get("prices_per_mtok", {}) if last else {}
    out: dict[str, Price | None] = {}
    for name, p in used.items():
        try:
            out[name] = parse_price(p, name) if p else None
        except ValueError:
            out[name] = None
    return out


def priced(rows: list[dict[str, Any]], table: dict[str, Price | None]) -> list[dict[str, Any]]:
    """``rows`` with ``cost`` (USD, ``None`` when the component has no price)."""
    for r in rows:
        price = table.get(r["component"])
        r["cost"] = None if price is None else price.cost(r["prompt_tokens"] or 0, r["completion_tokens"] or 0,
                                                           batch=r["via"] == "batch")
    return rows


def _where(filters: dict[str, str]) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if filters.get("component"):
        clauses.append(f"{COMPONENT} = ?")
        params.append(filters["component"])
    if filters.get("step", "").lstrip("-").isdigit():
        clauses.append("stage = ?")
        params.append(int(filters["step"]))
    if filters.get("status") == "ok":
        clauses.append("error IS NULL")
    elif filters.get("status") == "error":
        clauses.append("error IS NOT NULL")
    if filters.get("via"):
        clauses.append("coalesce(via, 'live') = ?")
        params.append(filters["via"])
    if filters.get("unit"):
        clauses.append("case_id = ?")
        params.append(filters["unit"])
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def calls_page(cat: Catalog, filters: dict[str, str], page: int = 1) -> dict[str, Any]:
    """One page of calls, newest first: ``{rows, total, pages, page, totals, choices}``;
    ``totals`` = calls, tokens in and out, latency and cost over every matching call."""
    where, params = _where(filters)
    table = prices(cat)
    (n,), = cat.execute(f"SELECT count(*) FROM llm_calls{where}", params)
    pages = max(1, -(-n // PAGE))
    page = min(max(1, page), pages)
    rows = priced(cat.query_dicts(f"SELECT {COLUMNS} FROM llm_calls{where} ORDER BY created_at DESC, call_id "
                                  f"LIMIT {PAGE} OFFSET {(page - 1) * PAGE}", params), table)
    sums = cat.query_dicts(f"SELECT {COMPONENT} AS component, coalesce(via, 'live') AS via, count(*) AS calls, "
                           "count(error) AS errors, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
                           "coalesce(sum(completion_tokens), 0) AS completion_tokens, "
                           f"coalesce(sum(latency_ms), 0) AS latency_ms FROM llm_calls{where} GROUP BY ALL ORDER BY 1, 2",
                           params)
    priced(sums, table)
    costs = [s["cost"] for s in sums]
    totals = {k: sum(s[k] for s in sums) for k in ("calls", "errors", "prompt_tokens", "completion_tokens", "latency_ms")}
    totals["cost"] = sum(costs) if costs and None not in costs else None
    choices = {"component": [r[0] for r in cat.execute(f"SELECT DISTINCT {COMPONENT} FROM llm_calls ORDER BY 1")],
               "step": [r[0] for r in cat.execute("SELECT DISTINCT stage FROM llm_calls ORDER BY 1")],
               "via": [r[0] for r in cat.execute("SELECT DISTINCT coalesce(via, 'live') FROM llm_calls ORDER BY 1")]}
    return {"rows": rows, "total": n, "pages": pages, "page": page, "by_component": sums, "totals": totals,
            "choices": choices}


def unit_calls(cat: Catalog, unit: str) -> list[dict[str, Any]]:
    """Every call of one unit (a build or evaluate case, a belief item, a team task run), in order."""
    return priced(cat.query_dicts(f"SELECT {COLUMNS} FROM llm_calls WHERE case_id = ? ORDER BY created_at, call_id",
                                  [unit]), prices(cat))
