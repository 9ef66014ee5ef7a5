"""IoA paper tables of absolute P / R / F1 from ``ioa-synth evaluate`` results folders: the
main tables the paper's prompts make comparable (Tables 2, 3 and appendix Table 19) and the
prober training results and ablations (Table 5, §6.1 and §6.3).

Their exact row sets are not in the project's protocol notes, so each is a generic view: one
row per folder given (in that order; the first is the reference of the significance marks),
the P / R / F1 (%) and K columns and marks of ioa-1 (:func:`.ioa_evaluate.score_rows`), and a
row label made of the settings that differ between the folders (:func:`run_settings`: the
components' models, temperatures and request options, ``--mode``, ``--access``, the prompts'
digest, ``--rollouts``, the data, ...), so a reader sees what each row is. The settings every
row shares are named in a note. Table 5's label starts with the prober's model, the served
name of a trained checkpoint (docs/tables.md says how to name them).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ioa_synth.evaluate.analysis.results import Results
from ioa_synth.runs.manifest import ManifestError, read_manifest
from ioa_synth.tables.ioa_evaluate import EVALUATE, SCORE_NOTES, coverage_notes, prober_label, read_all, score_rows
from ioa_synth.tables.model import PaperTable
from ioa_synth.tables.registry import Needs, TableSpec, register

#: The components of an evaluate run, as run.json names them, and as a label names them.
COMPONENTS = (("prober", "prober"), ("simulator", "simulator"), ("validity_filter", "filter"))
#: Setting name of the prober's model (Table 5's labels start with it).
PROBER = "prober"


def prompts_setting(res: Results) -> str:
    """The prompts a run used: ``"<folder> <digest>"`` when templates were replaced by name
    (``--prompts DIR``; the folder's name), else ``"built-in <digest>"``; the digest is the
    first 8 hex of the sha256 over the run's template hashes (``fingerprint_parts.templates``),
    so edited prompts change it."""
    templates = res.run.fingerprint_parts.get("templates") or {}
    digest = hashlib.sha256(json.dumps(templates, sort_keys=True).encode()).hexdigest()[:8] if templates else "?"
    replaced = (res.run.model_extra or {}).get("prompts") or {}
    folders = set()
    for name, entry in replaced.items() if isinstance(replaced, dict) else ():
        file = Path(str((entry or {}).get("file", "")))
        depth = len(Path(name).parts)
        folders.add(file.parents[depth - 1].name if len(file.parents) >= depth else str(file))
    return f"{' + '.join(sorted(folders)) or 'built-in'} {digest}"


def _components(res: Results) -> tuple[dict[str, Any], str]:
    """run.json's components, and where the prober's questions come from: ``"generated"``, or
    ``"from <folder>"`` for a run with ``--questions-from FOLDER``, whose prober settings are
    then that folder's (its run.json; none when it cannot be read)."""
    components = dict(res.run.components)
    prober = components.get("prober") or {}
    source = prober.get("questions_from") or res.run.args.get("questions_from")
    if not source or prober.get("model"):
        return components, "generated"
    try:
        components["prober"] = read_manifest(source, "evaluate").components.get("prober") or {}
    except ManifestError:
        components["prober"] = {}
    return components, f"from {Path(str(source)).name}"


def run_settings(res: Results) -> dict[str, str]:
    """``{setting: value}`` of one evaluate run, as a label shows them (``"prober"`` →
    ``"qwen3-8b-grpo"``, ``"access"`` → ``"private"``): per component its model, temperature
    and request options (``run.json`` components), then ``--mode``, ``--access``, the prompts
    (:func:`prompts_setting`), the prober's questions (:func:`_components`), ``--rollouts``,
    ``--permute-seed``, the data folder, ``--sample`` with ``--seed``, ``--limit``. A value a
    folder does not record is ``"?"``."""
    components, questions = _components(res)
    out: dict[str, str] = {}
    for key, name in COMPONENTS:
        out[name] = str((components.get(key) or {}).get("model") or "?")
    settings, args = res.run.settings, res.run.args
    out |= {"mode": settings.mode, "access": settings.access, "prompts": prompts_setting(res), "questions": questions,
            "rollouts": str(settings.rollouts)}
    for key, name in COMPONENTS:
        comp = components.get(key) or {}
        out[f"{name} temperature"] = str(comp.get("temperature", "?"))
        options = comp.get("request_options")
        out[f"{name} options"] = json.dumps(options, sort_keys=True) if options else "none"
    out["permute seed"] = "none" if settings.permute_seed is None else str(settings.permute_seed)
    out["data"] = str(args.get("data") or "?")
    sample = args.get("sample")
    out["sample"] = "all" if sample is None else f"{sample} (seed {args.get('seed', '?')})"
    out["limit"] = "none" if args.get("limit") is None else str(args["limit"])
    return out


def _short_paths(values: list[str]) -> list[str]:
    """Paths cut to their last parts, as few as keep different paths apart (``/a/x/test``,
    ``/a/y/test`` → ``x/test``, ``y/test``)."""
    parts = [Path(v).parts for v in values]
    for n in range(1, max(len(p) for p in parts) + 1):
        tails = [str(Path(*p[-n:])) if p else "" for p in parts]
        if len(set(tails)) == len(set(values)):
            return tails
    return values


def differing(results: list[Results], skip: tuple[str, ...] = ()) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Per folder, the settings (:func:`run_settings`) whose values are not the same in every
    folder, and the settings all share; ``skip`` names settings left out of both."""
    settings = [run_settings(r) for r in results]
    data = _short_paths([s["data"] for s in settings])
    for s, d in zip(settings, data):
        s["data"] = d
    names = [n for n in settings[0] if n not in skip]
    varying = [n for n in names if len({s[n] for s in settings}) > 1]
    shared = {n: settings[0][n] for n in names if n not in varying}
    return [{n: s[n] for n in varying} for s in settings], shared


def _phrase(settings: dict[str, str]) -> str:
    """``"prober m; access private"``: each setting as its name then its value."""
    return "; ".join(f"{name} {value}" for name, value in settings.items())


def unique(labels: list[str], results: list[Results]) -> list[str]:
    """``labels`` with the folder's name added to each label that repeats."""
    return [f"{lab} ({r.path.name})" if labels.count(lab) > 1 else lab for lab, r in zip(labels, results)]


def setting_labels(results: list[Results]) -> tuple[list[str], dict[str, str]]:
    """One label per folder: its differing settings (:func:`differing`); the prober's model
    when nothing differs; the folder's name added where labels repeat. Also the shared settings."""
    diffs, shared = differing(results)
    labels = [_phrase(d) if d else prober_label(r) for d, r in zip(diffs, results)]
    return unique(labels, results), shared


def shared_note(shared: dict[str, str]) -> list[str]:
    return [f"Same in every row: {_phrase(shared)}."] if shared else []


def _absolute(table_id: str, title: str, folders: dict[str, list[Path]]) -> PaperTable:
    results = read_all(folders["evaluate"])
    labels, shared = setting_labels(results)
    return PaperTable(table_id, title, ["run", "dialogues", "P", "R", "F1", "K"], score_rows(results, labels),
                      SCORE_NOTES + ["Rows: the folders given, in that order; each row is labelled by the run "
                                     "settings that differ between them (run.json)."]
                      + shared_note(shared) + coverage_notes(results))


def main_table_2(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-2: absolute P / R / F1 (%) and K per folder, labelled by the differing settings."""
    return _absolute("ioa-2", "Table 2: absolute detection scores (P / R / F1, %)", folders)


def main_table_3(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-3: as :func:`main_table_2`."""
    return _absolute("ioa-3", "Table 3: absolute detection scores (P / R / F1, %)", folders)


def appendix_table_19(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-19: as :func:`main_table_2`."""
    return _absolute("ioa-19", "Table 19: absolute detection scores, appendix (P / R / F1, %)", folders)


def training_labels(results: list[Results]) -> tuple[list[str], dict[str, str]]:
    """Table 5's labels: the prober's model (a trained checkpoint's served name; the folder's
    name when none is recorded), then the other settings that differ, in brackets; the folder's
    name added where labels repeat. Also the settings all share (the prober's model aside)."""
    diffs, shared = differing(results, skip=(PROBER,))
    labels = []
    for res, diff in zip(results, diffs):
        model = (res.run.components.get("prober") or {}).get("model")
        head = str(model) if model else res.path.name
        labels.append(f"{head} ({_phrase(diff)})" if diff else head)
    return unique(labels, results), shared


def training_results(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-5: one row per trained prober or ablation (folder, in the order given; the first,
    e.g. the base model, is the marks' reference): P / R / F1 (%) and K, labelled by the
    prober's model and the other differing settings."""
    results = read_all(folders["evaluate"])
    labels, shared = training_labels(results)
    return PaperTable("ioa-5", "Table 5: prober training results and ablations (P / R / F1, %)",
                      ["prober", "dialogues", "P", "R", "F1", "K"], score_rows(results, labels),
                      SCORE_NOTES + ["Rows: the folders given, in that order; each is labelled by its prober's model "
                                     "as run.json records it (serve each checkpoint under a name that says its "
                                     "training, e.g. qwen3-8b-sft, qwen3-8b-grpo; docs/tables.md), then the other "
                                     "settings that differ."]
                      + shared_note(shared) + coverage_notes(results))


_ABSOLUTE = (Needs("evaluate", 1, None, "one per row (the first is the marks' reference)"),)
_CMD = EVALUATE + " (once per row: another prober, --mode, --access, --prompts DIR, ...)"
register(TableSpec("ioa-2", "Absolute P / R / F1 (second main table)", "IoA paper, Table 2", _ABSOLUTE, _CMD,
                   main_table_2))
register(TableSpec("ioa-3", "Absolute P / R / F1 (third main table)", "IoA paper, Table 3", _ABSOLUTE, _CMD,
                   main_table_3))
register(TableSpec("ioa-19", "Absolute P / R / F1 (appendix)", "IoA paper, Table 19", _ABSOLUTE, _CMD,
                   appendix_table_19))
register(TableSpec("ioa-5", "Prober training results and ablations (P / R / F1 / K)",
                   "IoA paper, Table 5 (§6.1, §6.3)",
                   (Needs("evaluate", 1, None, "one per trained prober or ablation (the first, e.g. the base model, "
                          "is the marks' reference)"),),
                   EVALUATE + " (once per checkpoint, each served under a name saying its training)",
                   training_results))
