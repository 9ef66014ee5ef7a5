"""Run records (the ``runs`` table) and the fingerprint guard of a folder."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any, Callable

from ioa_synth import __version__
from ioa_synth.core.templates import overrides_record
from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.runs.fingerprint import component_view, describe_difference, fingerprint

class FingerprintMismatch(RuntimeError):
    """A component whose setup changed already has successful calls in the directory."""


def check_fingerprint(catalog: Catalog, description: dict[str, Any], commands: tuple[str, ...],
                      component_of: Callable[[str], str] = lambda role: role,
                      view: Callable[[dict[str, Any], str], dict[str, Any] | None] = component_view) -> str:
    """Return the fingerprint of ``description``; raise :class:`FingerprintMismatch`
    when a component of it differs from the setup that made successful calls of that
    component stored in the directory by one of ``commands``. A call's component is its tags'
    ``component``, else its role mapped by ``component_of`` (e.g. evaluate's ``simulator:M1`` ->
    ``simulator`` for calls stored without tags); ``view(stored description, component)`` reads a
    stored description of any version (default :func:`~ioa_synth.runs.fingerprint.component_view`).

    A component that never produced a result may be reconfigured (both setups stay in
    ``runs``); base URL and key are not compared (the same model on another host resumes).
    """
    rows = catalog.execute(
        "SELECT r.fingerprint_json, coalesce(c.tags->>'component', c.role) AS component, count(*) FROM llm_calls c "
        "JOIN runs r ON c.run_id = r.run_id WHERE c.error IS NULL AND r.fingerprint_json IS NOT NULL "
        "AND list_contains(?, r.command) GROUP BY ALL ORDER BY component", [list(commands)])
    changed: dict[str, tuple[int, list[str]]] = {}
    for fp_json, stored_role, n in rows:
        role = component_of(stored_role)
        new = description["components"].get(role)
        old = view(json.loads(fp_json), role)
        if new is None or old is None or old == new:
            continue
        count, diffs = changed.get(role, (0, describe_difference(old, new, f"{role}.")))
        changed[role] = (count + n, diffs)
    if changed:
        parts = [f"{n} successful {role} call(s) stored here were made with another setup ({'; '.join(diffs[:3])})"
                 for role, (n, diffs) in changed.items()]
        raise FingerprintMismatch(f"{catalog.out_dir}: {'; '.join(parts)}; restore those settings or use a new "
                                  "--out directory for a changed setup")
    return fingerprint(description)


def start_run(catalog: Catalog, command: str, args: dict[str, Any], description: dict[str, Any] | None) -> str:
    """Insert a ``runs`` row and return its id; ``args`` gain ``prompts`` (name -> file and
    sha256) when templates are replaced by name (``--prompts``)."""
    run_id = uuid.uuid4().hex[:12]
    if overrides_record():
        args = {**args, "prompts": overrides_record()}
    catalog.insert("runs", {
        "run_id": run_id, "command": command, "args_json": dumps(args),
        "fingerprint": fingerprint(description) if description else None,
        "fingerprint_json": dumps(description) if description else None,
        "toolkit_version": __version__, "started_at": _now(), "finished_at": None, "summary_json": None})
    return run_id


def finish_run(catalog: Catalog, run_id: str, summary: dict[str, Any]) -> None:
    """Record the end time and summary of a run."""
    catalog.execute("UPDATE runs SET finished_at = ?, summary_json = ? WHERE run_id = ?",
                    [_now(), dumps(summary), run_id])


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)
