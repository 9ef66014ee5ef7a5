"""The one check that a run's setup may run in a folder, parametrised by the capability:
stored results are never mixed with results of another setup.

Two rules, the second optional:

- a component (model, sampling, request options, its templates) may be reconfigured until
  it has successful calls stored here by one of the capability's ``commands``
  (:func:`ioa_synth.runs.run_rows.check_fingerprint`);
- the capability's ``protocol`` part of the setup (templates, inputs, settings: whatever its
  ``protocol(description)`` returns) may change only while no result is stored: it is
  compared with the setup of every run of the first command that stored a successful call
  and, once ``results_stored(catalog)``, with the folder's manifest (``run.json``).

Any such check is made before a run starts anything: :func:`~ioa_synth.runs.context.open_run`
first runs it on the endpoints as they will be (:func:`check_before_start`: no embedded
server started, no endpoint contacted), and a capability that calls
:func:`check_folder_first` before opening its catalog for writing leaves a refused folder's
``catalog.duckdb`` untouched.

Usage::

    CHECK = SetupCheck(commands=("evaluate",), component_of=component_of,
                       protocol=lambda d: {k: v for k, v in d.items() if k != "components"},
                       results_stored=stored_results("records", "**/*.json"))
    with open_run(catalog, "evaluate", components, config, kind="evaluate", describe=..., check=CHECK): ...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import duckdb

from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.endpoints import EndpointSource, planned_endpoints
from ioa_synth.runs.catalog import CATALOG_FILE, Catalog, CatalogLocked, CatalogUnusable
from ioa_synth.runs.fingerprint import describe_difference
from ioa_synth.runs.manifest import MANIFEST_FILE, ManifestError, read_manifest
from ioa_synth.runs.run_rows import FingerprintMismatch, check_fingerprint
from ioa_synth.runs.schema import TableSet

#: ``describe(endpoints) -> description`` and ``check(catalog, description)``, as
#: :func:`ioa_synth.runs.context.open_run` takes them.
Describe = Callable[[Mapping[str, Endpoint]], dict[str, Any]]
Check = Callable[[Catalog, dict[str, Any]], Any]


class SetupChanged(FingerprintMismatch):
    """The folder holds results of another setup (the message names what changed), or its
    ``run.json`` cannot be read while results are stored; a changed component raises the
    parent :class:`~ioa_synth.runs.run_rows.FingerprintMismatch`."""


def _itself(role: str) -> str:
    return role


def _nothing_stored(catalog: Catalog) -> bool:
    return False


def stored_results(records: str, pattern: str = "*.json", *, calls: bool = False) -> Callable[[Catalog], bool]:
    """``results_stored`` of a capability whose results are files matching ``pattern`` (a
    glob, ``**`` for any depth) under the output folder's ``records`` directory and, with
    ``calls``, also any successful model call in its catalog (a run whose calls feed records
    written later: belief's conversations, collab's tasks)."""

    def stored(catalog: Catalog) -> bool:
        if calls and catalog.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0]:
            return True
        return any((catalog.out_dir / records).glob(pattern))

    return stored


@dataclass(frozen=True)
class SetupCheck:
    """``check(catalog, description)`` for :func:`ioa_synth.runs.context.open_run`.

    Attributes:
        commands: the commands whose successful calls fix a component's setup (the first
            is the command that writes the folder's results).
        component_of: the component of an ``llm_calls.role`` (``simulator:M1`` -> ``simulator``).
        protocol: the part of a setup description that may not change once results are
            stored; ``None``: components only.
        results_stored: whether the folder holds results (records, conversations, calls).
        also_changed: ``also_changed(old, new) -> [what changed]`` on two whole
            descriptions, for parts ``protocol`` leaves out (compared alike).
    """

    commands: tuple[str, ...]
    component_of: Callable[[str], str] = _itself
    protocol: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    results_stored: Callable[[Catalog], bool] = _nothing_stored
    also_changed: Callable[[dict[str, Any], dict[str, Any]], list[str]] | None = None

    def __call__(self, catalog: Catalog, description: dict[str, Any]) -> str:
        """Return the fingerprint of ``description``.

        Raises:
            FingerprintMismatch: a component with stored successful calls changed.
            SetupChanged: the protocol part changed on a folder that holds results, or
                ``run.json`` is missing or unreadable while results are stored.
        """
        fp = check_fingerprint(catalog, description, commands=self.commands, component_of=self.component_of)
        if self.protocol is None:
            return fp
        for old in self._stored(catalog):
            a, b = self.protocol(old), self.protocol(description)
            diffs = describe_difference(a, b) if a != b else []
            if self.also_changed is not None:
                diffs += self.also_changed(old, description)
            if diffs:
                raise SetupChanged(f"{catalog.out_dir} holds results of another setup ({'; '.join(diffs[:3])}); "
                                   "use a new --out for a changed setup")
        return fp

    def _stored(self, catalog: Catalog) -> list[dict[str, Any]]:
        """The setups results stored here were made with: those of the runs of the first
        command with successful calls, and the manifest's once results are stored."""
        rows = catalog.execute(
            "SELECT DISTINCT r.fingerprint_json FROM llm_calls c JOIN runs r ON c.run_id = r.run_id "
            "WHERE c.error IS NULL AND r.command = ? AND r.fingerprint_json IS NOT NULL", [self.commands[0]])
        stored = [json.loads(fp) for (fp,) in rows]
        if self.results_stored(catalog):
            try:
                manifest = read_manifest(catalog.out_dir)
            except ManifestError:
                manifest = None
            if manifest is None or "fingerprint_parts" not in manifest.model_fields_set:
                raise SetupChanged(f"{catalog.out_dir / MANIFEST_FILE} is missing or unreadable but results are "
                                   "stored here; use a new --out")
            stored.append(manifest.fingerprint_parts)
        return stored


def check_before_start(catalog: Catalog, components: list[str], config: ToolkitConfig, local_model: str | None,
                       *, describe: Describe, check: Check, sources: dict[str, EndpointSource] | None = None,
                       partial: bool = False) -> None:
    """Run ``check`` on the setup a run of ``components`` (and ``sources``) will have,
    described from the endpoints :func:`~ioa_synth.llm.endpoints.planned_endpoints` makes
    without starting the embedded server or contacting any endpoint.

    A remote component without ``model`` in the config is known only once its endpoint
    lists its models: then nothing is checked here (the check made once the endpoints are
    open covers it), unless ``partial``: ``check`` takes a description without such
    components and compares the rest (a :class:`SetupCheck` does: a component it is not
    given is not compared, and the protocol part is).

    Raises:
        what ``check`` raises (a changed setup); LocalModelError, ConfigError as
        :func:`~ioa_synth.llm.endpoints.planned_endpoints`.
    """
    planned = planned_endpoints(components, config, local_model, sources)
    if partial or set(planned) == set(components) | set(sources or {}):
        check(catalog, describe(planned))


def check_folder_first(out_dir: Path, tables: Sequence[TableSet], components: list[str], config: ToolkitConfig,
                       local_model: str | None, *, describe: Describe, check: SetupCheck | Check,
                       sources: dict[str, EndpointSource] | None = None) -> None:
    """:func:`check_before_start` (``partial``: ``check`` must take a description without the
    components whose model is not known yet, as a :class:`SetupCheck` does) on ``out_dir``'s
    catalog opened read-only, for a capability to call before it opens the catalog for
    writing: a refused resume then leaves ``catalog.duckdb`` byte for byte as it was (a
    writable open brings the catalog's views up to date, and DuckDB rewrites the file on
    close). Nothing is checked when there is no catalog yet or it cannot be read now (locked
    by another run, damaged): the writable open says why.

    Raises:
        as :func:`check_before_start`.
    """
    if not (Path(out_dir) / CATALOG_FILE).is_file():
        return
    try:
        catalog = Catalog(out_dir, read_only=True, tables=tables)
    except (CatalogLocked, CatalogUnusable, FileNotFoundError, duckdb.Error):
        return
    try:
        check_before_start(catalog, components, config, local_model, describe=describe, check=check, sources=sources,
                           partial=True)
    finally:
        catalog.close()
