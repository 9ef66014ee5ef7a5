"""The provenance of a build, read from its catalog, for the dataset card: seed sources
and licences, models and settings per component, θ1/θ2, pass rates, discard reasons,
judge health, the type mix next to the paper's (Table 10), audit (App. B.3) and human
annotation agreement when present, the cases imported by ``build import`` (from where, under
which licence), and the near-duplicate check.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from ioa_synth.build.builddir import accepted_cases
from ioa_synth.build.dedup import DEFAULT_THRESHOLD, near_duplicates
from ioa_synth.build.importer import TABLE as IMPORTED_TABLE, has_table, imported_counts
from ioa_synth.build.passrates import judge_health, pass_rates
from ioa_synth.build.planted import type_mix_report
from ioa_synth.build.status import discards, ma_types
from ioa_synth.export.records import redistributable
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.runs.catalog import Catalog

#: What the card reports per component, from the fingerprinted setup of the runs.
SETTINGS = ("model", "temperature", "seed", "structured_output", "plan")


def seed_sources(catalog: Catalog, splits: list[str]) -> list[dict[str, Any]]:
    """Accepted cases per seed source and licence: ``[{source, license, cases, text}]``
    (``text``: title and abstract published, or referenced by id only)."""
    rows = catalog.execute(
        "SELECT s.source, s.seed_json FROM cases c JOIN seeds s ON s.seed_id = c.seed_id AND s.split = c.split "
        "WHERE c.status = 'accepted' AND list_contains(?, c.split)", [splits])
    counts: Counter = Counter()
    for source, seed_json in rows:
        licence = (json.loads(seed_json or "{}") or {}).get("license")
        counts[(source, licence)] += 1
    return [{"source": s, "license": lic or "unknown", "cases": n,
             "text": "title and abstract" if redistributable(lic) else "id only"}
            for (s, lic), n in sorted(counts.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))]


#: Files beside released records that state their licence, looked for in the import's folder
#: and up to :data:`LICENCE_LEVELS` folders above it (a data folder's repository).
LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING")
LICENCE_LEVELS = 3


def source_licence(folder: Path) -> dict[str, str | None]:
    """What states the licence of records imported from ``folder``: ``{"license", "file"}``,
    the Hub licence id of a dataset card (``README.md`` with a ``license:`` header, read with
    ``huggingface_hub``) or a licence file (``license`` then ``None``), in ``folder`` or up to
    :data:`LICENCE_LEVELS` folders above; both ``None`` when nothing says it (or the folder
    is gone)."""
    from huggingface_hub import DatasetCard

    for where in [folder, *folder.parents][:LICENCE_LEVELS + 1]:
        card = where / "README.md"
        # a README without a YAML header is no dataset card: not handed to huggingface_hub, which
        # logs a warning for it (through a handler that may outlive the stream it was given)
        if card.is_file() and card.read_text(encoding="utf-8", errors="replace").startswith("---"):
            try:
                licence = DatasetCard.load(card).data.license
            except Exception:  # noqa: BLE001 - a README that is not a dataset card states no licence
                licence = None
            if licence:
                return {"license": licence if isinstance(licence, str) else ", ".join(licence), "file": str(card)}
        for name in LICENCE_FILES:
            if (where / name).is_file():
                return {"license": None, "file": str(where / name)}
    return {"license": None, "file": None}


def imported_sources(catalog: Catalog, splits: list[str]) -> list[dict[str, Any]]:
    """Where the imported cases of ``splits`` came from, per ``build import`` run: ``[{"folder",
    "shown", "cases", "splits": {split: n}, "license", "license_file"}]``; ``folder`` is the
    common folder of the run's record files (as resolved at import), ``shown`` the part of it
    a card prints (from the folder above the one stating the licence, else its last three
    parts: a published card names no local home folder), ``license`` and ``license_file``
    (shown the same way) as :func:`source_licence` finds them now."""
    if not has_table(catalog):
        return []
    runs: dict[str, list[tuple[str, str]]] = {}
    for run_id, split, source in catalog.execute(
            f"SELECT run_id, split, source FROM {IMPORTED_TABLE} WHERE list_contains(?, split) ORDER BY source",
            [splits]):
        runs.setdefault(str(run_id), []).append((split, source))
    out: dict[str, dict[str, Any]] = {}
    for rows in runs.values():
        paths = [r[1] for r in rows]
        common = Path(os.path.commonpath(paths)) if len(paths) > 1 else Path(paths[0]).parent
        entry = out.setdefault(str(common), {"folder": str(common), "cases": 0, "splits": {}})
        entry["cases"] += len(rows)
        for split, _ in rows:
            entry["splits"][split] = entry["splits"].get(split, 0) + 1
    for entry in out.values():
        folder = Path(entry["folder"])
        found = source_licence(folder)
        entry["license"], entry["license_file"] = found["license"], found["file"]
        # shown from the folder that states the licence (else the last three parts): no local home path
        top = Path(found["file"]).parent if found["file"] else Path(*folder.parts[:-3] or folder.parts[:1])
        entry["shown"] = folder.relative_to(top.parent).as_posix() if top.parent != top else folder.as_posix()
        if found["file"]:
            entry["license_file"] = Path(found["file"]).relative_to(top.parent).as_posix()
    return [out[k] for k in sorted(out)]


def component_settings(catalog: Catalog) -> list[dict[str, Any]]:
    """Per command and component, the settings of its latest run: ``[{command, component, model, ...}]``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for command, fp_json in catalog.execute(
            "SELECT command, fingerprint_json FROM runs WHERE fingerprint_json IS NOT NULL ORDER BY started_at"):
        for name, comp in (json.loads(fp_json).get("components") or {}).items():
            out[(command, name)] = {"command": command, "component": name,
                                    **{k: comp.get(k) for k in SETTINGS}}
    return [out[k] for k in sorted(out)]


def build_arguments(catalog: Catalog) -> dict[str, Any]:
    """The ``--type-mix`` values and dedup thresholds the build runs used."""
    mixes, dedup = set(), set()
    for (args_json,) in catalog.execute("SELECT args_json FROM runs WHERE command = 'build'"):
        args = json.loads(args_json or "{}")
        mixes.add(args.get("type_mix") or "paper")
        if args.get("dedup"):
            dedup.add(args["dedup"])
    return {"type_mix": sorted(mixes), "dedup_thresholds": sorted(dedup)}


def _audits(catalog: Catalog, splits: list[str]) -> list[dict[str, Any]]:
    from ioa_synth.build.audit import ROLE, audit_report

    out = []
    for split in splits:
        models = [m for m, in catalog.execute(
            "SELECT DISTINCT s.judge_model FROM scores s JOIN cases c USING (case_id) WHERE s.judge_role = ? "
            "AND c.split = ? ORDER BY 1", [ROLE, split])]
        if models:
            cases = accepted_cases(catalog, split)
            out += [audit_report(catalog, split, m, cases) for m in models]
    return out


def _annotations(catalog: Catalog, splits: list[str]) -> list[dict[str, Any]]:
    from ioa_synth.annotate.report import annotated_splits, annotation_report

    return [annotation_report(catalog, s) for s in annotated_splits(catalog) if s in splits]


def provenance(catalog: Catalog, splits: list[str], threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """Everything the card states about the build of ``splits`` (build split names)."""
    rubric = load_rubric()
    pairs = near_duplicates(catalog, threshold)
    mine = [p for p in pairs if p.split_a in splits and p.split_b in splits]
    return {
        "seed_sources": seed_sources(catalog, splits),
        "components": component_settings(catalog),
        "build_arguments": build_arguments(catalog),
        "theta": {f"theta_{s}": rubric.threshold(s) for s in (1, 2)},
        "pass_rates": {s: v for s, v in pass_rates(catalog).items() if s in splits},
        "discards": {s: v for s, v in discards(catalog).items() if s in splits},
        "judge_health": judge_health(catalog),
        "ma_types": {s: v for s, v in ma_types(catalog).items() if s in splits},
        "type_mix": {s: v for s, v in type_mix_report(catalog).items() if s in splits},
        "audit": _audits(catalog, splits),
        "annotation": _annotations(catalog, splits),
        "imported": {s: n for s, n in imported_counts(catalog).items() if s in splits},
        "imported_from": imported_sources(catalog, splits),
        "near_duplicates": {"threshold": threshold, "pairs": len(mine),
                            "cross_split": sum(p.cross_split for p in mine),
                            "examples": [{"a": p.a, "b": p.b, "similarity": round(p.similarity, 3)} for p in mine[:10]]},
    }
