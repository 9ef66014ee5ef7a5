"""``ioa-synth export``: write accepted cases of a build as a Hugging Face dataset folder:
``data/<split>.jsonl`` (train, validation, test), ``README.md`` (dataset card) and
``croissant.json``, and :data:`FILE_LIST` (each file's size and SHA-256). The folder is
written next to its destination and moved into place when complete, so a failed export
leaves no half-written folder. An existing destination is replaced only when it holds
nothing but the files its own file list names, unchanged: a file a user added or edited is
never deleted (the export is refused and nothing changes)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ioa_synth.build.builddir import open_catalog
from ioa_synth.build.record_files import record_file
from ioa_synth.core.errors import reason_of
from ioa_synth.build.dedup import DEFAULT_THRESHOLD
from ioa_synth.export import FILE_LIST
from ioa_synth.export.records import SPLIT_NAMES, export_record

#: The list of the files an export wrote (relative path -> ``{"bytes", "sha256"}``).


class ExportError(ValueError):
    """An export that cannot be written; the message says why."""


def split_records(catalog, split: str) -> list[dict[str, Any]]:
    """The export records of the accepted cases of ``split`` (build split name), by case id."""
    out = []
    for case_id, domain, task_type, path in catalog.execute(
            "SELECT case_id, domain, task_type, path FROM cases WHERE split = ? AND status = 'accepted' "
            "ORDER BY case_id", [split]):
        try:
            path = record_file(catalog, case_id)
            record = json.loads(path.read_text(encoding="utf-8"))
            out.append(export_record(case_id, domain, task_type, record))
        except (OSError, TypeError, ValueError, KeyError) as exc:
            raise ExportError(f"{case_id}: cannot read its record {path} ({reason_of(exc)})") from exc
    return out


def file_list(folder: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {"bytes", "sha256"}}`` of every file under ``folder`` but the list itself."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and not path.is_symlink() and rel != FILE_LIST:
            out[rel] = {"bytes": path.stat().st_size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return out


def check_replaceable(to: Path) -> None:
    """Refuse a destination that holds anything an earlier export did not write as it is now.

    Raises:
        ExportError: ``to`` is a file; or a non-empty folder without a readable
            :data:`FILE_LIST`, or with a file (or folder, or link) the list does not name, or
            a listed file whose content changed since.
    """
    if not to.exists() and not to.is_symlink():
        return
    if not to.is_dir() or to.is_symlink():
        raise ExportError(f"--to {to} exists and is not a folder; choose a new folder")
    if not any(to.iterdir()):
        return
    try:
        listed = json.loads((to / FILE_LIST).read_text(encoding="utf-8"))["files"]
        dict(listed)
    except (OSError, ValueError, TypeError, KeyError):
        raise ExportError(f"--to {to} holds files and is not an earlier export (no readable {FILE_LIST}); "
                          "choose a new folder") from None
    folders = {parent.as_posix() for rel in listed for parent in Path(rel).parents}
    for path in sorted(to.rglob("*")):
        rel = path.relative_to(to).as_posix()
        if rel == FILE_LIST or (path.is_dir() and not path.is_symlink() and rel in folders):
            continue
        if rel not in listed or path.is_symlink() or not path.is_file():
            problem = "was not written by the earlier export"
        elif hashlib.sha256(path.read_bytes()).hexdigest() != listed[rel].get("sha256"):
            problem = "changed since the earlier export"
        else:
            continue
        raise ExportError(f"--to {to}: {rel} {problem}; nothing was replaced (move it away or choose a new folder)")


def export_build(out_dir: Path, to: Path, splits: list[str], license: str = "cc-by-4.0",
                 threshold: float = DEFAULT_THRESHOLD, name: str | None = None) -> dict[str, Any]:
    """Export ``splits`` (build names: train, val, test) of the build in ``out_dir`` to the
    folder ``to``; return ``{"splits": {export name: cases}, "skipped": [empty splits], "path"}``.

    Raises:
        ExportError: no accepted case in the chosen splits, an unreadable record, a
            destination inside ``out_dir``, or one that holds something other than an
            earlier export.
        BuildDirError: ``out_dir`` is not a build directory.
    """
    from datasets import Dataset, disable_progress_bars

    from ioa_synth.export.card import card_licences, case_counts, dataset_card, default_name
    from ioa_synth.export.croissant import croissant_metadata
    from ioa_synth.export.provenance import provenance
    from ioa_synth.export.records import features, meeting_sizes, multi_party, series_lengths, with_series, with_sides

    to = Path(to)
    if to.resolve().is_relative_to(Path(out_dir).resolve()):
        # an export inside the build's records is read back as cases by evaluate and build import
        raise ExportError(f"--to {to}: inside the build directory {out_dir}; export to a folder of its own")
    check_replaceable(to)
    with open_catalog(out_dir, read_only=True) as cat:
        records = {s: split_records(cat, s) for s in splits}
        kept = [s for s in splits if records[s]]
        if not kept:
            raise ExportError(f"{out_dir}: no accepted case in split(s) {', '.join(splits)}")
        prov = provenance(cat, kept, threshold)
    pretty = name or default_name(prov, {SPLIT_NAMES[s]: len(records[s]) for s in kept})
    everyone = [r for s in kept for r in records[s]]
    sides, people = multi_party(everyone), meeting_sizes(everyone)  # build --participants N > 2: who holds what
    if sides:
        records = {s: [with_sides(r) for r in records[s]] for s in kept}
    lengths = series_lengths(everyone)  # build --meetings K > 1: when each point enters and comes to light
    series = max(lengths) > 1
    if series:
        records = {s: [with_series(r) for r in records[s]] for s in kept}
    disable_progress_bars()  # one summary line, no bars, on the command line
    try:
        to.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{to.name}.", dir=to.parent))
    except OSError as exc:
        raise ExportError(f"--to: cannot write {to}: {exc.strerror or exc}") from None
    mask = os.umask(0)
    os.umask(mask)
    tmp.chmod(0o777 & ~mask)  # mkdtemp makes it 0700; the published folder gets the user's usual mode
    try:
        files, sizes = {}, {}
        for s in kept:
            rel = f"data/{SPLIT_NAMES[s]}.jsonl"
            (tmp / "data").mkdir(exist_ok=True)
            Dataset.from_list(records[s], features=features(sides, series)).to_json(tmp / rel, lines=True, force_ascii=False)
            files[SPLIT_NAMES[s]], sizes[SPLIT_NAMES[s]] = rel, len(records[s])
        num_bytes = {name: (tmp / rel).stat().st_size for name, rel in files.items()}
        (tmp / "README.md").write_text(dataset_card(prov, files, sizes, license, pretty, num_bytes, people, sides,
                                                    lengths),
                                       encoding="utf-8")
        meta = croissant_metadata(tmp, files, pretty, card_licences(prov, sizes, license), prov,
                                  case_counts(prov, sizes))
        (tmp / "croissant.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (tmp / FILE_LIST).write_text(json.dumps({"written_by": "ioa-synth export", "files": file_list(tmp)},
                                                indent=2) + "\n", encoding="utf-8")
        check_replaceable(to)  # again: a file may have been added while the export was written
        if to.exists():
            old = to.with_name(f".{to.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            to.rename(old)
            tmp.rename(to)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(to)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"splits": sizes, "skipped": [s for s in splits if s not in kept], "path": str(to),
            "near_duplicates": prov["near_duplicates"]}


__all__ = ["ExportError", "FILE_LIST", "check_replaceable", "export_build", "file_list", "split_records"]
