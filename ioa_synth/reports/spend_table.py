"""Tables of an estimate (``ioa-synth estimate``) and of an estimate beside what was spent
(``ioa-synth status``), from the plain dicts of :mod:`ioa_synth.runs.spend`."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table


def _n(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:,.1f}"


def _usd(value: Any) -> str:
    return "no price" if value is None else f"${value:,.2f}" if value >= 1 else f"${value:,.4f}"


def estimate_table(est: dict[str, Any], title: str) -> Table:
    """Components x (calls, prompt tokens, completion tokens, cost, batch cost), and the total."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("component", "calls", "prompt tokens", "completion tokens", "cost", "batch cost"):
        table.add_column(col, justify="left" if col == "component" else "right", no_wrap=True)
    for name, c in est["components"].items():
        table.add_row(name, _n(c["calls"]), _n(c["prompt_tokens"]), _n(c["completion_tokens"]), _usd(c["cost"]),
                      _usd(c["batch_cost"]))
    t = est["total"]
    table.add_section()
    table.add_row("total", _n(t["calls"]), _n(t["prompt_tokens"]), _n(t["completion_tokens"]), _usd(t["cost"]),
                  _usd(t["batch_cost"]))
    return table


def spend_table(est: dict[str, Any], spent: dict[str, Any], title: str) -> Table:
    """The estimate and what was spent, side by side, per component and in total."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("component", no_wrap=True)
    for col in ("calls", "prompt tokens", "completion tokens", "cost"):
        table.add_column(f"{col}\nestimated", justify="right", no_wrap=True)
        table.add_column("spent", justify="right", no_wrap=True)
    names = list(est["components"]) + [n for n in spent["components"] if n not in est["components"]]
    rows = [(n, est["components"].get(n, {}), spent["components"].get(n, {})) for n in names]
    rows.append(("total", est["total"], spent["total"]))
    for i, (name, e, s) in enumerate(rows):
        if i == len(rows) - 1:
            table.add_section()
        batch = bool(est.get("assumptions", {}).get("batch"))
        cost = e.get("batch_cost") if batch else e.get("cost")
        table.add_row(name, _n(e.get("calls")), _n(s.get("calls")), _n(e.get("prompt_tokens")),
                      _n(s.get("prompt_tokens")), _n(e.get("completion_tokens")), _n(s.get("completion_tokens")),
                      _usd(cost) if e else "-", _usd(s.get("cost")) if s else "-")
    unmeasured = [k for k, v in est.get("assumptions", {}).get("completion_source", {}).items()
                  if str(v).startswith("max_tokens")]
    if unmeasured:  # a first run: nothing measured, so each call is counted at its cap
        table.caption = (f"estimated completion tokens of {', '.join(unmeasured)}: each call at its max_tokens, "
                         "nothing being measured yet (an upper bound; a pilot run measures them, docs/scale.md)")
    return table


def assumption_lines(est: dict[str, Any]) -> list[str]:
    """What the estimate assumed, one line each: tokenizers, rates and their sources (a
    collab run's figures: rounds, trigger shares, questions), completion tokens and where
    they come from."""
    a = est["assumptions"]
    lines = []
    for name, t in a.get("tokenizers", {}).items():
        lines.append(f"{name}: {t['model']}, prompts counted with {t['tokenizer']}"
                     + ("" if t["exact"] else f" ({t['note']})"))
    for stage, rates in a.get("pass_rates", {}).items():
        src = a.get("pass_rate_source", {}).get(stage, {})
        lines.append(f"{stage}: " + ", ".join(f"{k} {v:.2f} ({src.get(k, '')})" for k, v in rates.items()))
    sources = a.get("figures_source", {})
    for name, v in a.get("figures", {}).items():  # collab run: what the protocol walk assumed
        for of, x in (v.items() if isinstance(v, dict) else [("", v)]):
            src = sources.get(name, {}).get(of, "") if isinstance(v, dict) else sources.get(name, "")
            lines.append(f"{name}{' ' + of if of else ''}: {x:,.2f} ({src})")
    if a.get("labelling") == "prematch" or "judged_of" in a:  # string matching first: the answers the judge sees
        lines.append(f"belief labels: {a.get('judged_share', 1.0):.2f} of the {a.get('judged_of', 'private answers')} "
                     f"reach the judge ({a.get('judged_source', '')})")
    for kind, v in a.get("completion_tokens_per_call", {}).items():
        lines.append(f"{kind}: {v:,.0f} completion tokens per call ({a.get('completion_source', {}).get(kind, '')})")
    return lines
