"""The study folders for the viewer: a belief run's conversations, a collab run's task
records and a live-meeting session (its ``private/`` folder is never read but for the
real names to blank out of every page: see :func:`real_names`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ioa_synth.view.read.folders import read_json_file


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file())


# -- belief ------------------------------------------------------------------------------

def belief_list(folder: Path) -> list[dict[str, Any]]:
    """Each finished conversation: ``{name, item, k, agents, fpi}`` (``fpi``: share of benign
    agents labelled ``manipulated`` at the last probe step)."""
    out = []
    for path in _files(folder, "conversations/*.json"):
        data = read_json_file(path)
        if not isinstance(data, dict):
            continue
        conv = belief_conversation(data)
        out.append({"name": path.stem, "item": data.get("item", {}), "k": data.get("k"),
                    "agents": data.get("agents", []), "fpi": conv["fpi"]})
    return out


def belief_conversation(data: dict[str, Any]) -> dict[str, Any]:
    """A conversation by round: ``rounds`` = ``[{round, turns, probes}]`` where ``probes`` are
    the private answers after that round (step = round; step 0 before any round comes
    first as round 0), each with its judge label; ``fpi`` as in ``belief_list``."""
    agents = {a["id"]: a for a in data.get("agents", [])}
    probes: dict[int, list[dict[str, Any]]] = {}
    for p in data.get("probes", []):
        probes.setdefault(p.get("step", 0), []).append({**p, "who": agents.get(p.get("agent"), {})})
    turns: dict[int, list[dict[str, Any]]] = {}
    for t in data.get("turns", []):
        turns.setdefault(t.get("round", 0), []).append({**t, "who": agents.get(t.get("agent"), {})})
    rounds = [{"round": r, "turns": sorted(turns.get(r, []), key=lambda t: t.get("position", 0)),
               "probes": probes.get(r, [])} for r in sorted(set(turns) | set(probes))]
    benign = [a for a in agents.values() if a.get("role") == "benign"]
    last = max(probes, default=None)
    infected = [p for p in probes.get(last, []) if p.get("label") == "manipulated" and p.get("variant", "default") == "default"]
    fpi = len(infected) / len(benign) if benign and last is not None else None
    return {"rounds": rounds, "fpi": fpi, "agents": list(agents.values())}


# -- collab ------------------------------------------------------------------------------

def collab_list(folder: Path) -> list[dict[str, Any]]:
    """Each task run: ``{name, task_id, config, passed, triggered}``; ``name`` is the file's
    path under ``tasks/`` without ``.json`` (``<task_id>__<config>``)."""
    out = []
    for path in _files(folder, "tasks/**/*.json"):
        data = read_json_file(path)
        if isinstance(data, dict):
            name = str(path.relative_to(folder / "tasks"))[: -len(".json")]
            out.append({"name": name, "task_id": data.get("task_id"), "config": data.get("config"),
                        "passed": data.get("passed"), "triggered": data.get("triggered"),
                        "check": (data.get("check") or {}).get("status")})
    return out


def collab_record(folder: Path, name: str) -> dict[str, Any] | None:
    """The record ``tasks/<name>.json`` (``name`` as :func:`collab_list` gives it), or ``None``."""
    path = folder / "tasks" / f"{name}.json"
    if name not in {r["name"] for r in collab_list(folder)}:
        return None
    data = read_json_file(path)
    return data if isinstance(data, dict) else None


# -- meeting -----------------------------------------------------------------------------

def real_names(folder: Path) -> list[str]:
    """The real names of a session's participants (``private/names.json``; each name and its
    words), longest first, so that a page can blank them out should one appear. Read here
    only; ``private/`` is never served."""
    data = read_json_file(folder / "private" / "names.json")
    names = set()
    for full in (data or {}):
        if isinstance(full, str) and full.strip():
            names.add(full.strip())
            names.update(w for w in re.split(r"\s+", full) if len(w) > 1)
    return sorted(names, key=len, reverse=True)


def meeting(folder: Path) -> dict[str, Any]:
    """A session by pseudonym: ``{participants, turns, sets, answers, labels}``: the
    pseudonymised transcript, the blinded question sets, each participant's page-1 answers
    and page-2 labels and survey (by pseudonym)."""
    session = read_json_file(folder / "session.json") or {}
    who = {p["id"]: p.get("pseudonym", p["id"]) for p in session.get("participants", [])}
    answers = {who.get(p.stem, p.stem): (read_json_file(p) or {}).get("answers", {}) for p in _files(folder, "answers/*.json")}
    labels = {who.get(p.stem, p.stem): read_json_file(p) or {} for p in _files(folder, "labels/*.json")}
    sets = (read_json_file(folder / "sets.json") or {}).get("sets", {})
    turns = [{**t, "who": who.get(t.get("speaker"), t.get("speaker"))} for t in session.get("turns", [])]
    return {"participants": who, "turns": turns, "sets": sets, "answers": answers, "labels": labels}


# -- other kinds (an export's dataset folder, a reward catalog) ---------------------------------

def other(folder: Path, kind: str) -> dict[str, Any]:
    """``{files, card}``: an export's data files (name, bytes, JSONL lines) and its dataset
    card (``README.md``) as text; nothing for other kinds."""
    if kind != "export":
        return {"files": [], "card": None}
    files = []
    for path in _files(folder, "data/**/*"):
        lines = None
        if path.suffix == ".jsonl":
            with path.open("rb") as f:
                lines = sum(1 for _ in f)
        files.append({"name": str(path.relative_to(folder)), "size": path.stat().st_size, "lines": lines})
    card = folder / "README.md"
    return {"files": files, "card": card.read_text(encoding="utf-8", errors="replace") if card.is_file() else None}
