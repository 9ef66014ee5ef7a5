"""``ioa-synth collab report``: Pass@1 per configuration (paper Table 6), trigger rate,
additional rounds and ΔPass@1 against ``discussion`` (Table 23), and paired tests between
configurations with the task as the unit: the paired bootstrap of
:func:`ioa_synth.stats.bootstrap.paired_bootstrap` (10,000 resamples, seed
20260516, two-sided p, 95% percentile interval) and the exact sign-flip permutation test of
:func:`ioa_synth.stats.permutation.sign_flip_test`.

``report.json``: ``{"bench", "models": {component: model}, "n_tasks", "tasks_per_config", "pass_at_1": {config: p},
"delta_vs_discussion": {config: d}, "trigger_rate": {config: r | null}, "extra_rounds":
{config: x | null}, "comparisons": {"A vs B": {"n", "diff", "ci", "p_bootstrap",
"p_permutation"}}, "tests"}``; rates are fractions, ``diff`` is B − A over the tasks both ran;
``models`` names each component's model as the folder's ``run.json`` does (``discusser``: the
team's agents; ``detector:NAME``: a detector).

``extra_rounds`` is the mean over a configuration's tasks of the re-discussion rounds each
ran (0 untriggered), Table 23's "additional rounds per task"; added views:
``extra_rounds_per_triggered`` (the same mean over triggered tasks only), ``cap_rate`` (the
share of triggered tasks whose re-discussion ran to the cap instead of ending on the stop
vote; ``null`` for records written before the stop vote existed) and ``max_extra_rounds``
(the run's cap, from ``run.json``; ``null`` when unknown).
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from statistics import fmean
from typing import Any

from ioa_synth.collab.records import RecordError, TaskRecord, record_path
from ioa_synth.collab.records import read_records as _read_typed
from ioa_synth.collab.team import PLAIN_CONFIGS
from ioa_synth.stats.bootstrap import CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap
from ioa_synth.stats.permutation import sign_flip_test

__all__ = ["ReportError", "build_report", "read_records", "record_path"]


class ReportError(ValueError):
    """A folder that holds no collaboration results (one line)."""


def read_records(out: Path) -> list[TaskRecord]:
    """Every task record under ``out/tasks`` (sorted by path), typed
    (:mod:`ioa_synth.collab.records`).

    Raises:
        ReportError: no record, or an unreadable one or one that is not a task record.
    """
    try:
        records = _read_typed(out)
    except RecordError as exc:
        raise ReportError(str(exc)) from None
    if not records:
        raise ReportError(f"{out}: no finished task yet (tasks/ is empty)")
    return records


def config_order(configs: set[str] | list[str]) -> list[str]:
    """``single``, ``discussion``, ``self-reflection``, then ``mcq:NAME`` in name order."""
    plain = [c for c in PLAIN_CONFIGS if c in configs]
    return plain + sorted(c for c in configs if c not in PLAIN_CONFIGS)


def _mean(values: list[float]) -> float | None:
    return round(fmean(values), 12) if values else None


def build_report(records: list[TaskRecord], bench: str | None = None,
                 models: dict[str, str] | None = None, max_extra_rounds: int | None = None) -> dict[str, Any]:
    """The report of ``records`` (see the module docstring); ``models``: component -> model
    (the manifest's components); ``max_extra_rounds``: the run's cap (its settings)."""
    by_config: dict[str, dict[str, TaskRecord]] = {}
    for rec in records:
        by_config.setdefault(rec.config, {})[rec.task_id] = rec
    configs = config_order(set(by_config))
    tasks = sorted({r.task_id for r in records})
    passed = {c: {t: float(r.passed) for t, r in by_config[c].items()} for c in configs}
    pass_at_1 = {c: _mean(list(passed[c].values())) for c in configs}
    intervenes = {c: c not in ("single", "discussion") for c in configs}
    trigger = {c: _mean([float(bool(r.triggered)) for r in by_config[c].values()]) if intervenes[c] else None
               for c in configs}
    extra = {c: _mean([float(r.extra_rounds) for r in by_config[c].values()]) if intervenes[c] else None
             for c in configs}
    fired = {c: [r for r in by_config[c].values() if r.triggered] if intervenes[c] else [] for c in configs}
    per_fired = {c: _mean([float(r.extra_rounds) for r in fired[c]]) if intervenes[c] else None for c in configs}
    cap_rate = {c: _mean([float(r.extra_end == "cap") for r in fired[c]])
                if intervenes[c] and all(r.has_extra_end() for r in fired[c]) else None for c in configs}
    comparisons = {}
    for a, b in combinations(configs, 2):
        both = sorted(set(passed[a]) & set(passed[b]))
        if not both:
            continue
        xa, xb = [passed[a][t] for t in both], [passed[b][t] for t in both]
        boot = paired_bootstrap(xa, xb)
        # one pair: both sign patterns are as extreme as the observed one, p = 1 exactly
        p_perm = sign_flip_test(xa, xb).p if len(both) > 1 else 1.0
        comparisons[f"{a} vs {b}"] = {"n": len(both), "diff": boot.diff,
                                      "ci": None if boot.ci_low is None else [boot.ci_low, boot.ci_high],
                                      "p_bootstrap": boot.p, "p_permutation": p_perm}
    delta: dict[str, float | None] = {}
    for c in configs:
        if "discussion" not in passed:
            delta[c] = None
        elif c == "discussion":
            delta[c] = 0.0
        else:
            key = f"discussion vs {c}" if f"discussion vs {c}" in comparisons else f"{c} vs discussion"
            comp = comparisons.get(key)
            delta[c] = None if comp is None else (comp["diff"] if key.startswith("discussion") else -comp["diff"])
    return {"bench": bench or (records[0].bench if records else None), "models": dict(models or {}),
            "n_tasks": len(tasks),
            "tasks_per_config": {c: len(by_config[c]) for c in configs}, "pass_at_1": pass_at_1,
            "delta_vs_discussion": delta, "trigger_rate": trigger, "extra_rounds": extra,
            "extra_rounds_per_triggered": per_fired, "cap_rate": cap_rate, "max_extra_rounds": max_extra_rounds,
            "comparisons": comparisons,
            "tests": {"unit": "task", "statistic": "mean per-task difference B - A of passed (0/1)",
                      "bootstrap": {"resamples": DEFAULT_RESAMPLES, "seed": DEFAULT_SEED, "confidence": CONFIDENCE,
                                    "p": "two-sided"},
                      "permutation": "paired sign-flip, exact up to 20 tasks, two-sided"}}


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "–"
    return f"{100 * v:+.1f}" if signed else f"{100 * v:.1f}"


def _p(v: float | None) -> str:
    return "–" if v is None else f"{v:.3g}"


def table_rows(report: dict[str, Any]) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """Rows of Table 6 (config, tasks, Pass@1 %), Table 23 (config, trigger rate %,
    additional rounds per task, ΔPass@1 vs discussion in points) and the comparisons."""
    t6 = [[c, str(report["tasks_per_config"][c]), _pct(report["pass_at_1"][c])] for c in report["pass_at_1"]]
    t23 = [[c, _pct(report["trigger_rate"][c]),
            "–" if report["extra_rounds"][c] is None else f"+{report['extra_rounds'][c]:.2f}",
            _pct(report["delta_vs_discussion"][c], signed=True)]
           for c in report["pass_at_1"] if c not in ("single", "discussion")]
    comp = [[k, str(v["n"]), _pct(v["diff"], signed=True),
             "–" if v["ci"] is None else f"[{_pct(v['ci'][0], True)}, {_pct(v['ci'][1], True)}]",
             _p(v["p_bootstrap"]), _p(v["p_permutation"])] for k, v in report["comparisons"].items()]
    return t6, t23, comp


HEADERS = (("configuration", "tasks", "Pass@1 (%)"),
           ("configuration", "trigger rate (%)", "additional rounds / task", "ΔPass@1 vs discussion"),
           ("A vs B", "tasks", "B − A (points)", "95% CI", "p (bootstrap)", "p (sign-flip)"))
TITLES = ("Table 6: Pass@1 per configuration", "Table 23: interventions against plain discussion",
          "Paired comparisons (task as unit)")


def models_line(report: dict[str, Any]) -> str:
    """``team: qwen3-8b; detector demo: gpt-5.4`` (``""`` when the report names no model)."""
    models = report.get("models") or {}
    parts = [f"team: {models['discusser']}"] if "discusser" in models else []
    parts += [f"{name.replace(':', ' ', 1)}: {m}" for name, m in sorted(models.items()) if name != "discusser"]
    return "; ".join(parts)


def tables(report: dict[str, Any]) -> list[Any]:
    """The report as rich tables (``collab report`` prints :func:`models_line` above them)."""
    from rich.table import Table

    out = []
    for title, header, rows in zip(TITLES, HEADERS, table_rows(report)):
        table = Table(title=f"{title} ({report['bench']}, {report['n_tasks']} tasks)" if out == [] else title)
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        out.append(table)
    return out


def markdown(report: dict[str, Any]) -> str:
    """``report.md``: the same tables in Markdown."""
    lines = [f"# Collaboration report ({report['bench']}, {report['n_tasks']} tasks)", ""]
    if models_line(report):
        lines += ["Models: " + "; ".join(f"{name} `{m}`" for name, m in sorted((report.get("models") or {}).items()))
                  + " (the team's agents are the discusser).", ""]
    for title, header, rows in zip(TITLES, HEADERS, table_rows(report)):
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows] or ["| " + " | ".join("–" for _ in header) + " |"]
        lines.append("")
    cap = report.get("max_extra_rounds")
    lines.append("Additional rounds per task: the re-discussion rounds after a triggered intervention, until every "
                 "agent's stop-vote says ready" + (f" or {cap} rounds (--max-extra-rounds)" if cap else " or the cap")
                 + ", averaged over all the configuration's tasks (0 where it did not fire).")
    lines.append("")
    lines.append("Rates are shares of tasks; comparisons pair the tasks both configurations ran (paired bootstrap, "
                 f"{DEFAULT_RESAMPLES:,} resamples, seed {DEFAULT_SEED}; exact sign-flip permutation). "
                 "Numbers from a small embedded model say nothing about the paper's claims.")
    return "\n".join(lines) + "\n"
