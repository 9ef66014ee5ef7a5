"""IoA paper tables of the two field studies: live meetings (Tables 21, 22; paper §6.2,
App. D.5) from meeting session folders, and multi-agent collaboration (Tables 6, 23, 24;
paper §6.4) from ``collab run`` results folders.

The numbers are those of ``meeting report`` (:func:`ioa_synth.meetings.report.build_report`,
pooled over sessions as the paper) and ``collab report``
(:func:`ioa_synth.collab.report.build_report`). No model is called: pooled recall needs
``meeting report --merge-judge`` and is shown as "–" here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioa_synth.collab.report import ReportError, build_report as collab_report, read_records
from ioa_synth.meetings.report import RULES, build_report as meeting_report
from ioa_synth.meetings.session import Session, SessionError
from ioa_synth.reports.output import fmt
from ioa_synth.runs.manifest import ManifestError, read_manifest
from ioa_synth.typelabels.tables import meeting_types as per_type
from ioa_synth.tables.ioa_evaluate import type_labels
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

MEETING_COMMANDS = ("ioa-synth meeting import TRANSCRIPT --out SESSION; ioa-synth meeting probe SESSION "
                    "--detector NAME=CONFIG ...; ioa-synth meeting serve SESSION (participants answer and label)")
COLLAB_COMMAND = "ioa-synth collab run --bench bcb|hidden-profile --tasks TASKS --out RESULTS"


def _sessions(folders: list[Path], rule: str) -> dict[str, Any]:
    try:
        sessions = [Session(f) for f in folders]
    except SessionError as exc:
        raise TableError(str(exc)) from None
    seen: dict[str, Path] = {}
    for s in sessions:
        if s.session_id in seen:
            raise TableError(f"{s.folder} is the session {seen[s.session_id]} again; give each meeting once")
        seen[s.session_id] = s.folder
    try:
        return meeting_report(sessions, rule)
    except SessionError as exc:
        raise TableError(str(exc)) from None


def meeting_results(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-21: per detector, pooled over sessions: Valid per session, Validity (%), PR (%),
    Likert means (per participant), best-set votes and sessions won."""
    report = _sessions(folders["meeting"], "any")
    rows = [[name, fmt(d["validated_per_session"]), percent(d["validity_rate"]), percent(d["pooled_recall"]),
             fmt(d["discovery"]), fmt(d["willingness"]), str(d["best_votes"]), str(d["sessions_won"])]
            for name, d in report["across"]["detectors"].items()]
    n = len(report["sessions"])
    return PaperTable("ioa-21", f"Table 21: live meetings per detector ({n} sessions)",
                      ["detector", "Valid / session", "Validity (%)", "PR (%)", "discovery (1-5)",
                       "willingness (1-5)", "best-set votes", "sessions won"], rows,
                      ["Pooled over sessions as the paper (§6.2): Valid = validated / sessions, Validity = validated / "
                       "divergent, Likert per participant; rule 'any' (at least one valid label).",
                       "PR needs the merge judge: 'ioa-synth meeting report SESSIONS --merge-judge --out DIR'."])


def meeting_rules(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-22: Valid per session and Validity (%) per detector under each validation rule."""
    reports = {rule: _sessions(folders["meeting"], rule) for rule in RULES}
    names = list(reports["any"]["across"]["detectors"])
    rows = []
    for name in names:
        cells = [name]
        for rule in RULES:
            d = reports[rule]["across"]["detectors"][name]
            cells += [fmt(d["validated_per_session"]), percent(d["validity_rate"])]
        rows.append(cells)
    columns = ["detector"] + [f"{h} ({rule})" for rule in RULES for h in ("Valid", "Validity %")]
    return PaperTable("ioa-22", "Table 22: validated disagreements under each validation rule", columns, rows,
                      ["any: at least one participant labels the question valid; majority: more than half; "
                       "unanimous: all. Pooled over sessions, so Valid / Validity (divergent questions per session) "
                       "is the same under every rule."])


def meeting_types(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-20: validated disagreements (rule any) per type (rows) and detector (columns),
    pooled over sessions, types from the ``label-types`` folder of the sessions."""
    report = _sessions(folders["meeting"], "any")
    types = per_type(report, type_labels(folders))
    names = types["detectors"]
    rows = [[r["type"], *(str(r[n]) for n in names), str(r["all"])] for r in types["rows"]]
    notes = ["Validated disagreements (rule any), pooled over sessions, by the type 'label-types' judged."]
    if types["unlabelled"]:
        notes.append(f"{types['unlabelled']} validated disagreements have no label: run label-types on the sessions again.")
    return PaperTable("ioa-20", "Table 20: validated meeting disagreements per type", ["type", *names, "all"], rows,
                      notes)


def team_model(folder: Path) -> str:
    """The discussers' model of a ``collab run`` folder (its ``run.json``), ``"?"`` when none is recorded."""
    try:
        manifest = read_manifest(folder, "collab")
    except ManifestError as exc:
        raise TableError(str(exc)) from None
    return str((manifest.components.get("discusser") or {}).get("model") or "?")


def _collab(folders: dict[str, list[Path]], by_team: bool = False) -> dict[Any, dict[str, Any]]:
    """``{bench: collab report}`` (``by_team``: ``{(team model, bench): report}``), one folder per key."""
    out: dict[Any, dict[str, Any]] = {}
    for folder in folders["collab"]:
        try:
            report = collab_report(read_records(folder))
        except ReportError as exc:
            raise TableError(str(exc)) from None
        bench = str(report["bench"])
        key = (team_model(folder), bench) if by_team else bench
        if key in out:
            what = f"{key[0]} team on {bench}" if by_team else bench
            raise TableError(f"{folder}: a second {what} folder; give one collab folder per "
                             f"{'team model and ' if by_team else ''}benchmark")
        out[key] = report
    return out


def _configs(reports: dict[str, dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for r in reports.values():
        seen += [c for c in r["pass_at_1"] if c not in seen]
    return seen


def collab_pass(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-6: Pass@1 (%) per configuration (rows) and benchmark (columns)."""
    reports = _collab(folders)
    rows = [[c, *(percent(r["pass_at_1"].get(c)) for r in reports.values())] for c in _configs(reports)]
    return PaperTable("ioa-6", "Table 6: Pass@1 (%) of a team per configuration",
                      ["configuration", *(f"{b} ({r['n_tasks']} tasks)" for b, r in reports.items())], rows,
                      ["Pass@1: share of tasks whose final answer passes (collab report)."])


def collab_interventions(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-23: per intervention, trigger rate (%), additional rounds per task and ΔPass@1 vs discussion (points), per bench."""
    reports = _collab(folders)
    configs = [c for c in _configs(reports) if c not in ("single", "discussion")]
    rows = []
    for c in configs:
        cells = [c]
        for r in reports.values():
            extra = r["extra_rounds"].get(c)
            cells += [percent(r["trigger_rate"].get(c)), "–" if extra is None else f"+{extra:.2f}",
                      percent(r["delta_vs_discussion"].get(c), signed=True)]
        rows.append(cells)
    columns = ["configuration"] + [f"{h} ({b})" for b in reports for h in ("trigger %", "extra rounds", "ΔPass@1")]
    return PaperTable("ioa-23", "Table 23: interventions against plain discussion", columns, rows,
                      ["ΔPass@1 in points against 'discussion' over the tasks both ran (collab report)."])


def stronger_teams(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-24: Pass@1 (%) per team model and configuration (rows) and benchmark (columns)."""
    reports = _collab(folders, by_team=True)
    teams = list(dict.fromkeys(team for team, _ in reports))
    benches = list(dict.fromkeys(bench for _, bench in reports))
    rows = []
    for team in teams:
        mine = {b: reports[(team, b)] for b in benches if (team, b) in reports}
        rows += [[team, c, *(percent(mine[b]["pass_at_1"].get(c)) if b in mine else "–" for b in benches)]
                 for c in _configs(mine)]
    return PaperTable("ioa-24", "Table 24: Pass@1 (%) of stronger teams per configuration",
                      ["team model", "configuration", *benches], rows,
                      ["Team model: the discussers' model in each folder's run.json; Pass@1 as in Table 6."])


register(TableSpec("ioa-6", "Pass@1 of a Qwen3-8B team per configuration", "IoA paper, Table 6 (§6.4)",
                   (Needs("collab", 1, 2, "one per benchmark (BCB-Hard, HiddenBench)"),), COLLAB_COMMAND, collab_pass))
register(TableSpec("ioa-21", "Live meetings per detector (Valid, Validity, PR, Likert, best set)",
                   "IoA paper, §6.2 / App. D.5 (Table 21)", (Needs("meeting", 1, None, "one per finished session"),),
                   MEETING_COMMANDS, meeting_results))
register(TableSpec("ioa-20", "Validated meeting disagreements per type", "IoA paper, Table 20 (App. D.5)",
                   (Needs("meeting", 1, None, "one per finished session"),
                    Needs("label-types", 1, 1, "the types judged of those sessions")),
                   MEETING_COMMANDS + "; ioa-synth label-types SESSION... --out LABELS", meeting_types))
register(TableSpec("ioa-22", "Live meetings under the validation rules (any / majority / unanimous)",
                   "IoA paper, App. D.5 (Table 22)", (Needs("meeting", 1, None, "one per finished session"),),
                   MEETING_COMMANDS, meeting_rules))
register(TableSpec("ioa-24", "Pass@1 of stronger teams (e.g. Qwen3-30B-A3B, GPT-5.4) per configuration",
                   "IoA paper, Table 24 (§6.4)", (Needs("collab", 1, None, "one per team model and benchmark"),),
                   COLLAB_COMMAND + " --config TEAM.json (once per team model)", stronger_teams))
register(TableSpec("ioa-23", "Interventions: trigger rate, additional rounds, ΔPass@1", "IoA paper, Table 23 (App. D.8)",
                   (Needs("collab", 1, 2, "one per benchmark (BCB-Hard, HiddenBench)"),), COLLAB_COMMAND,
                   collab_interventions))
