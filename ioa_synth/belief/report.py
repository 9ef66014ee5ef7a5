"""``ioa-synth belief report``: ``summary.json`` (one entry per condition
``"<model>|<source>|k=<k>"``, see :mod:`.metrics`) and ``curves.png`` (:mod:`.plots`)
from a results folder's conversation records. A partly finished run is reported as such:
each condition counts its ``finished`` and ``expected`` conversations, ``complete`` is
false, and :func:`partial_lines` names the conditions that miss conversations."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ioa_synth.belief.conversation import LABELLING, LEGACY_LABELLING
from ioa_synth.belief.metrics import condition_metrics
from ioa_synth.belief.plots import plot_curves
from ioa_synth.core.atomic import write_bytes_atomic, write_json_atomic
from ioa_synth.core.jsonl import read_json_records
from ioa_synth.runs.manifest import Manifest, ManifestError, read_manifest


class ReportError(ValueError):
    """A folder that holds no study results."""


#: What a conversation record holds at least (see docs/belief.md, Records).
RECORD_KEYS = ("item", "k", "agents", "turns", "probes")


def belief_manifest(out: Path) -> Manifest:
    """``out/run.json``, the manifest ``belief run`` wrote (:func:`ioa_synth.runs.manifest.read_manifest`).

    Raises:
        ReportError: no or an unreadable run.json, or one another command wrote (the
            message names the command: an evaluate results folder is not a study's).
    """
    try:
        return read_manifest(out, "belief")
    except ManifestError as exc:
        raise ReportError(str(exc)) from None


def run_labelling(out: Path) -> str:
    """How the run in ``out`` labelled private answers (run.json ``settings.labelling``:
    ``judge`` or ``prematch``; a run.json written before the mode was recorded used the
    string pre-match, :data:`~ioa_synth.belief.conversation.LEGACY_LABELLING`)."""
    mode = belief_manifest(out).settings.labelling
    return mode if mode in LABELLING else LEGACY_LABELLING


def read_conversations(out: Path) -> list[dict[str, Any]]:
    """Every conversation record under ``out/conversations`` (sorted by file name).

    Raises:
        ReportError: not a belief results folder (:func:`belief_manifest`), no
            conversation, or an unreadable record or one that is not a conversation.
    """
    belief_manifest(out)
    convs = read_json_records(sorted((out / "conversations").glob("*.json")), RECORD_KEYS, "conversation record",
                              ReportError)
    if not convs:
        raise ReportError(f"{out}: no finished conversation yet (conversations/ is empty)")
    return convs


def agent_model(out: Path) -> str:
    """The agents' model named in ``out/run.json`` (``components.agent.model``)."""
    agent = belief_manifest(out).components.get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    if model is None:
        raise ReportError(f"{out / 'run.json'} names no agent model (components.agent.model)")
    return str(model)


def condition_key(model: str, source: str, k: int) -> str:
    """A condition's key in ``summary.json``: ``"<model>|<source>|k=<k>"``."""
    return f"{model}|{source}|k={k}"


def expected_conversations(manifest: Manifest, convs: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    """``{(source, k): conversations}`` the run set out to make: run.json's
    ``expected_conversations`` (``{"<source>|k=<k>": n}``, written by ``belief run`` for its
    latest invocation); a run.json without it (an earlier release) gives every source's items
    seen in any record times every attacker count of ``settings.attackers``. Never fewer than
    are finished."""
    finished: dict[tuple[str, int], int] = defaultdict(int)
    items: dict[str, set[str]] = defaultdict(set)
    for conv in convs:
        finished[(conv["item"]["source"], int(conv["k"]))] += 1
        items[conv["item"]["source"]].add(conv["item"].get("item_id"))
    stored = (manifest.model_extra or {}).get("expected_conversations")
    expected: dict[tuple[str, int], int] = {}
    if isinstance(stored, dict):
        for key, n in stored.items():
            source, _, k = str(key).rpartition("|k=")
            if source and k.isdigit() and isinstance(n, int):
                expected[(source, int(k))] = n
    else:
        ks = [k for k in manifest.settings.attackers or [] if isinstance(k, int)]
        expected = {(source, k): len(ids) for source, ids in items.items() for k in ks}
    for key, n in finished.items():
        expected[key] = max(expected.get(key, 0), n)
    return expected


def summarize(out: Path) -> dict[str, Any]:
    """The ``summary.json`` content of ``out``: ``model``, ``complete`` (every expected
    conversation finished), ``conversations`` (``finished``, ``expected``) and
    ``conditions``, each with ``finished``/``expected`` conversations; a condition none of
    whose conversations finished is listed with null rates."""
    model = agent_model(out)
    convs = read_conversations(out)
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for conv in convs:
        groups[(conv["item"]["source"], int(conv["k"]))].append(conv)
    expected = expected_conversations(belief_manifest(out), convs)
    conditions = {}
    for source, k in sorted(expected):
        done = groups.get((source, k), [])
        entry = condition_metrics(done)
        conditions[condition_key(model, source, k)] = {"n_items": entry.pop("n_items"), "finished": len(done),
                                                       "expected": expected[(source, k)], **entry}
    total = {"finished": len(convs), "expected": sum(expected.values())}
    return {"model": model, "complete": total["finished"] >= total["expected"], "conversations": total,
            "conditions": conditions}


def partial_lines(summary: dict[str, Any]) -> list[str]:
    """Lines for the terminal naming each condition with unfinished conversations (none when
    the run is complete); its rates cover only its finished conversations."""
    if summary.get("complete", True):
        return []
    total = summary["conversations"]
    lines = [f"partial results: {total['finished']} of {total['expected']} conversations finished; "
             "the rates cover finished conversations only"]
    for key, e in summary["conditions"].items():
        if e["finished"] < e["expected"]:
            state = "missing" if e["finished"] == 0 else "partial"
            lines.append(f"  {key}: {state}, {e['finished']} of {e['expected']} conversations finished")
    return lines


def judge_check_lines(summary: dict[str, Any]) -> list[str]:
    """Lines for the terminal naming each condition with no attacker (``k=0``) whose FPI is
    above 0: nobody claimed the manipulated answer there, so a private answer labelled
    manipulated points at the belief judge (or an item whose answers are close, e.g. years),
    not at persuasion; ``belief agreement`` measures the labels against a second judge."""
    lines = [f"check: {key}: FPI {e['fpi']:.0%} with no attacker; nobody claimed the manipulated answer, "
             "so look at the belief judge's labels ('ioa-synth belief agreement')"
             for key, e in summary["conditions"].items()
             if key.endswith("|k=0") and isinstance(e.get("fpi"), (int, float)) and e["fpi"] > 0]
    return lines


def write_report(out: Path) -> dict[str, Any] | None:
    """Write ``summary.json`` and ``curves.png`` into ``out``; ``None`` when no conversation
    is finished yet."""
    try:
        summary = summarize(out)
    except ReportError:
        return None
    write_json_atomic(out / "summary.json", summary)
    write_bytes_atomic(out / "curves.png", plot_curves(summary))
    return summary


def _pct(v: Any) -> str:
    from ioa_synth.reports.output import fmt

    return fmt(v, percent=True)


def summary_table(summary: dict[str, Any]):
    """A rich table of the headline rates per condition."""
    from rich.table import Table

    cols = ("fpi", "initial_infection", "turn_infection", "public_endorsement", "public_correction",
            "truth_knower_correction")
    keys = list(summary["conditions"])
    models = {k.split("|", 1)[0] for k in keys}
    one_model = len(models) == 1 and all(k.count("|") == 2 for k in keys)
    # one model: named in the title, so the condition column (source, k) fits a terminal
    shown = {k: (k.split("|", 1)[1].replace("|", " ") if one_model else k) for k in keys}
    table = Table(title=f"belief study ({next(iter(models))})" if one_model else "belief study")
    table.add_column("condition", no_wrap=True)
    table.add_column("items", justify="right")
    for c in cols:
        table.add_column(c.replace("_", " "), justify="right")
    table.add_column("hidden infection", justify="right")
    for key, e in summary["conditions"].items():
        n, expected = e["n_items"], e.get("expected", e["n_items"])
        items = str(n) if n >= expected else f"{n} of {expected}"
        table.add_row(shown[key], items, *(_pct(e[c]) for c in cols), _pct(e["categories"]["hidden_infection"]))
    return table
