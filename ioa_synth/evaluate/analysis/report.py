"""``ioa-synth report RESULTS --by domain|task_type|type`` : the standard
breakdown of one evaluate run, written under ``RESULTS/reports/`` as ``report_<by>.json``,
``report_<by>.md`` and ``report_<by>.png``.

- ``domain`` / ``task_type``: per group, dialogues and mean P, R, F1, K, |B| (means of
  per-dialogue values, paper §4.2); the chart shows F1 per group.
- ``type``: recall per disagreement type over all MAs (paper Table 12); F1 is not defined per
  MA type, so the chart shows recall.

Every grouping also gives the Category-C reasons and, for a run with ``--rollouts`` k > 1,
the simulator's stability (paper App. C.1, Table 13): the share of rollouts agreeing with the
modal answer, per participant (P1 = ``M1``, P2 = ``M2``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ioa_synth.evaluate.analysis import tables
from ioa_synth.evaluate.analysis.consistency import rollout_agreement
from ioa_synth.evaluate.analysis.render import Table, bar_chart_png, markdown_document
from ioa_synth.evaluate.analysis.results import C_REASONS, Results
from ioa_synth.evaluate.series import series_summary
from ioa_synth.reports.output import fmt, report_files, reports_dir
from ioa_synth.core.atomic import write_all_atomic
from ioa_synth.text.plural import plural


class ReportError(ValueError):
    """A results folder with nothing to report (one-line message)."""


def build_report(results: Results, by: str, type_of: Callable[[str, str], str | None] | None = None
                 ) -> dict[str, Any]:
    """The report of ``results`` grouped ``by`` (one of :data:`tables.GROUPINGS`), JSON-ready:
    ``{results, by, overall: {cases, precision, recall, f1, mean_k, mean_b}, groups: [...],
    c_breakdown, stability}``; ``stability`` is ``None`` for one rollout, else ``{rollouts,
    participants: {M1..MN: {answers, picks, agreeing, agreement}}}``
    (:func:`~.consistency.rollout_agreement`); groups are ``{group, cases, precision, recall,
    f1, mean_k, mean_b}`` or, for ``type``, ``{group, hit, total, recall}`` (``type_of``: type
    labels, see :func:`tables.type_recall`); with series probes (``build --meetings K``) also
    ``by_meeting`` and ``by_age`` (:func:`~ioa_synth.evaluate.series.series_summary`). Raises ``ValueError`` for an unknown ``by`` and
    :class:`ReportError` when no case was scored."""
    if by not in tables.GROUPINGS:
        raise ValueError(f"--by must be one of {', '.join(tables.GROUPINGS)} (got {by!r})")
    scored = list(results.scored.values())
    if not scored:
        raise ReportError(f"{results.path}: no scored case to report ({len(results.failed)} failed)")
    if by == "type":
        groups = [{"group": t} | v for t, v in tables.type_recall(scored, type_of).items()]
    else:
        groups = tables.group_means(scored, by)
    k = results.run.settings.rollouts
    stability = {"rollouts": k, "participants": rollout_agreement(scored)} if k > 1 else None
    return {"results": results.describe(), "by": by, "overall": tables.means(scored), "groups": groups,
            "c_breakdown": tables.c_breakdown(scored), "stability": stability} | series_summary(scored)


def report_tables(report: dict[str, Any]) -> list[Table]:
    """The tables of a :func:`build_report` result: the grouped table, then Category C."""
    by, overall = report["by"], report["overall"]
    if by == "type":
        rows = [[g["group"], str(g["total"]), str(g["hit"]), fmt(g["recall"], percent=True)] for g in report["groups"]]
        hit, total = sum(g["hit"] for g in report["groups"]), sum(g["total"] for g in report["groups"])
        rows.append(["all", str(total), str(hit), fmt(hit / total if total else None, percent=True)])
        main = Table("Recall per disagreement type (Table 12)", ["type", "MAs", "hit", "recall"], rows)
    else:
        def row(name: str, g: dict[str, Any]) -> list[str]:
            return [name, str(g["cases"]), *(fmt(g[m], percent=True) for m in ("precision", "recall", "f1")),
                    fmt(g["mean_k"]), fmt(g["mean_b"])]

        rows = [row(g["group"], g) for g in report["groups"]] + [row("all", overall)]
        main = Table(f"Scores per {by.replace('_', ' ')} (means over dialogues)",
                     [by, "dialogues", "P", "R", "F1", "K", "|B|"], rows)
    c = report["c_breakdown"]
    ctab = Table("Category-C questions by reason (§E.2)", ["reason", "n", "share"],
                 [[r.replace("_", " "), str(c[r]["count"]), fmt(c[r]["share"], percent=True)] for r in C_REASONS])
    out = [main, ctab]
    st = report.get("stability")
    if st:
        out.append(Table(f"Simulator stability (Table 13): {st['rollouts']} rollouts agreeing with the modal answer",
                         ["participant", "answers", "rollout picks", "agreeing", "agreement"],
                         [[f"P{i} ({who})", str(v["answers"]), str(v["picks"]), str(v["agreeing"]),
                           fmt(v["agreement"], percent=True)]
                          for i, (who, v) in enumerate(st["participants"].items(), start=1)]))
    if report.get("by_meeting"):
        out.append(Table("A series of meetings: after each meeting (recall: points hit / points live then)",
                         ["after meeting", "probes", "P", "R", "F1", "live", "hit"],
                         [[k, str(g["probes"]), fmt(g["precision"], percent=True), fmt(g["recall"], percent=True),
                           fmt(g["f1"], percent=True), str(g["live"]), str(g["hit"])]
                          for k, g in report["by_meeting"].items()]))
        out.append(Table("A series of meetings: recall by MA age (meetings since it was planted)",
                         ["age", "live", "hit", "recall"],
                         [[a, str(g["live"]), str(g["hit"]), fmt(g["recall"], percent=True)]
                          for a, g in report["by_age"].items()]))
    return out


def intro_lines(report: dict[str, Any]) -> list[str]:
    """Lines describing the run under report."""
    d = report["results"]
    lines = [f"results: {d['path']} (mode {d['mode']}, access {d['access']}, rollouts {d['rollouts']}, "
             f"permute seed {'none' if d['permute_seed'] is None else d['permute_seed']})",
             f"{plural(d['scored'], 'scored dialogue')}, {d['failed']:,} failed (failed dialogues are left out)"]
    if d["complete"] is False:
        lines.append("the run is incomplete (summary.json: complete = false)")
    if "types" in report:  # report --types: judged type labels (label-types)
        t = report["types"]
        lines.append(f"MA types judged by 'label-types' ({t['labels']}): {t['labelled_cases']:,} of "
                     f"{t['cases']:,} scored dialogues labelled")
    return lines


def write_report_files(results: Results, report: dict[str, Any]) -> list[Path]:
    """Write ``RESULTS/reports/report_<by>.{json,md,png}`` all or none (a failure, e.g. a
    full disk, leaves the earlier files of every name as they were); return the paths."""
    by = report["by"]
    name = f"report_{by}"
    files = report_files(results.path, name, report)
    doc = markdown_document(f"Evaluation report by {by.replace('_', ' ')}", intro_lines(report), report_tables(report))
    files[reports_dir(results.path) / f"{name}.md"] = doc.encode("utf-8")
    groups = report["groups"]
    if by == "type":
        values, ylabel, counts = [g["recall"] for g in groups], "recall", [g["total"] for g in groups]
        title = "Recall per disagreement type (n = MAs"
    else:
        values, ylabel, counts = [g["f1"] for g in groups], "F1 (mean over dialogues)", [g["cases"] for g in groups]
        title = f"F1 per {by.replace('_', ' ')} (n = dialogues"
    title += f")\n{report['results']['mode']}, access {report['results']['access']}"
    files[reports_dir(results.path) / f"{name}.png"] = bar_chart_png(title, [g["group"] for g in groups], values,
                                                                     ylabel, counts)
    return write_all_atomic(files)
