"""Run records and the fingerprint guard of a build directory."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any

from ioa_synth import __version__
from ioa_synth.store.catalog import Catalog, dumps
from ioa_synth.store.fingerprint import describe_difference, fingerprint

#: Commands whose setup must match the directory's (they write build calls and scores).
BUILD_COMMANDS = ("build", "regenerate")


class FingerprintMismatch(RuntimeError):
    """The setup differs from the one recorded in the directory."""


def check_fingerprint(catalog: Catalog, description: dict[str, Any]) -> str:
    """Return the fingerprint of ``description``; raise :class:`FingerprintMismatch` naming
    what changed if the directory was built with a different setup."""
    fp = fingerprint(description)
    rows = catalog.execute(
        "SELECT fingerprint, fingerprint_json FROM runs WHERE list_contains(?, command) ORDER BY started_at LIMIT 1",
        [list(BUILD_COMMANDS)])
    if rows and rows[0][0] != fp:
        diffs = describe_difference(json.loads(rows[0][1]), description)
        raise FingerprintMismatch(
            f"{catalog.out_dir} was built with another setup (fingerprint {rows[0][0]}, now {fp}): "
            f"{'; '.join(diffs[:4])}; use a new --out directory for a changed setup")
    return fp


def start_run(catalog: Catalog, command: str, args: dict[str, Any], description: dict[str, Any] | None) -> str:
    """Insert a ``runs`` row and return its id."""
    run_id = uuid.uuid4().hex[:12]
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
