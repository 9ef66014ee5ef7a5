"""Reading evaluation inputs: every ``*.json`` case under ``--data``, in this toolkit's
record format or in the released IoA-Suite format (the paper's
record layout, App. B.4), as the lenient models of :mod:`ioa_synth.probing.cases`.

A field the protocol needs and the file lacks is never guessed: the whole input set is
refused with one error line naming the file and the field (:class:`InputError`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.probing.cases import EvalCase, EvalCaseFile
from ioa_synth.protocol.cells import DOMAINS, SPLITS, TASK_TYPES
from ioa_synth.evaluate.multiparty import multi_party_members, sides_problem
from ioa_synth.evaluate.series import SeriesInputError, probes
from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.jsonl import hidden, json_problem, jsonl_hint, read_problem
from ioa_synth.runs.folder_kinds import folder_kind, title as kind_title
from ioa_synth.runs.manifest import MANIFEST_FILE
from ioa_synth.text.languages import DEFAULT_LANGUAGE, UnknownLanguage, language_tag, supported_languages


class InputError(ValueError):
    """An unusable ``--data`` folder or case file; the message names the file and field."""


def _where(err: dict[str, Any]) -> str:
    return ".".join(str(x) for x in err["loc"])


def _cell(rel: Path, seed: dict[str, Any] | None) -> tuple[str, str]:
    seed = seed or {}
    domain = seed.get("domain") or next((p for p in rel.parts[:-1] if p in DOMAINS), None)
    stem_task = rel.stem.rsplit("_", 1)[0]
    task = seed.get("task_type") or (stem_task if stem_task in TASK_TYPES else None)
    return str(domain or "unknown"), str(task or "unknown")


def read_case(path: Path, rel: Path) -> EvalCase:
    """Read one case file: ``path`` as the user can open it (``--data`` as given joined with
    ``rel``, its path relative to ``--data``, which makes the case id).

    Raises (the message starts with ``path``):
        InputError: not UTF-8, not JSON, not an object, a missing or malformed field, members other
            than M1/M2 (or M1..MN, N = 3..6, whose points each name their sides), repeated MA ids,
            no turn, or a turn by an unknown speaker.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(read_problem(path, exc)) from exc
    try:  # as text first: json.loads(bytes) would take UTF-16 and call other encodings invalid JSON
        data = json.loads(decode_utf8(raw, path, InputError))
    except json.JSONDecodeError as exc:
        raise InputError(json_problem(path, exc)) from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: not an IoA case (the file is not a JSON object)")
    try:
        parsed = EvalCaseFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "missing":
            raise InputError(f"{path}: not an IoA case: missing field {_where(err)}") from exc
        raise InputError(f"{path}: field {_where(err)}: {err['msg'].removeprefix('Value error, ')}") from exc
    ids = sorted(m.id for m in parsed.profiles.members)
    if ids != ["M1", "M2"] and not multi_party_members(ids):
        raise InputError(f"{path}: field profiles.members: members must be M1 and M2 (got {ids})")
    ma_ids = [p.id for p in parsed.profiles.misalignment_points]
    if len(set(ma_ids)) != len(ma_ids):
        raise InputError(f"{path}: field profiles.misalignment_points: ids repeat ({ma_ids})")
    if (wrong := sides_problem(parsed.profiles)) is not None:  # a multi-party case: who holds which reading
        raise InputError(f"{path}: field {wrong}")
    if not parsed.dialogue.turns:
        raise InputError(f"{path}: field dialogue.turns: the dialogue has no turns (nothing to evaluate)")
    names = {m.id: m.name for m in parsed.profiles.members}
    for i, t in enumerate(parsed.dialogue.turns):
        if t.speaker_id not in names:
            raise InputError(f"{path}: field dialogue.turns.{i}.speaker_id: unknown speaker {t.speaker_id!r}")
        t.speaker_name = t.speaker_name or names[t.speaker_id]
    domain, task = _cell(rel, parsed.seed)
    try:
        lang = language_tag(parsed.language) if parsed.language is not None else None
    except UnknownLanguage:
        what = "is empty (leave the field out for English)" if not parsed.language.strip() else \
            f"no rules for {parsed.language!r}"
        raise InputError(f"{path}: field language: {what}; supported: {', '.join(supported_languages())}") from None
    return EvalCase(case_id=rel.with_suffix("").as_posix(), source_file=rel.as_posix(), domain=domain,
                    task_type=task, sha256=hashlib.sha256(raw).hexdigest(), profiles=parsed.profiles,
                    turns=parsed.dialogue.turns, language=None if lang == DEFAULT_LANGUAGE else lang)


def load_cases(data_dir: Path) -> list[EvalCase]:
    """Every ``*.json`` case under ``data_dir`` (recursively), sorted by relative path, a series
    of meetings as one probe per meeting (:func:`~ioa_synth.evaluate.series.probes`); hidden
    files and folders (``.name``, e.g. the file list an ``ioa-synth export`` folder keeps) are skipped.

    Raises:
        InputError: ``data_dir`` is not a folder, holds no ``*.json`` file, holds cases in
            folders of two or more splits (``test/``, ``val/``: a run scores one split), or
            any file is not a case (the first such file is named; no case is returned).
    """
    if not data_dir.is_dir():
        raise InputError(f"--data {data_dir} is not a folder")
    kind = folder_kind(data_dir, open_catalog=False)
    if kind not in (None, "build"):
        raise InputError(f"--data {data_dir} is {kind_title(kind)}, not a folder of cases (<domain>/<task_type>_NNN.json)"
                         f"{jsonl_hint(data_dir)}")
    paths = sorted((p for p in data_dir.rglob("*.json")  # a build directory's manifest is no case
                    if not hidden(p, data_dir) and p != data_dir / MANIFEST_FILE),
                   key=lambda p: p.relative_to(data_dir).as_posix())
    if not paths and kind == "build":  # a build that accepted nothing (yet): say so, and where cases go
        raise InputError(f"--data {data_dir} is a build directory with no accepted case (see ioa-synth status --out "
                         f"{data_dir}); evaluate reads accepted cases from one split folder, e.g. --data "
                         f"{data_dir / 'test'}")
    if not paths:
        raise InputError(f"--data {data_dir} holds no *.json case{jsonl_hint(data_dir)}")
    splits = sorted({p.relative_to(data_dir).parts[0] for p in paths} & set(SPLITS))
    if len(splits) > 1:
        raise InputError(f"--data {data_dir} holds cases of {len(splits)} splits ({', '.join(s + '/' for s in splits)}); "
                         f"give one split's folder, e.g. --data {data_dir / splits[0]}")
    return [probe for p in paths for probe in _probes(read_case(p, p.relative_to(data_dir)), p)]


def _probes(case: EvalCase, path: Path) -> list[EvalCase]:
    """``case``, or its probes after each meeting of a series (:mod:`ioa_synth.evaluate.series`)."""
    try:
        return probes(case)
    except SeriesInputError as exc:
        raise InputError(f"{path}: field {exc}") from None


def pick_cases(cases: list[EvalCase], limit: int | None, sample: int | None = None, seed: int = 0) -> list[EvalCase]:
    """The cases to evaluate out of ``cases`` (by path): the first ``limit``, or a sample of
    ``sample`` stratified by cell (domain, task type) drawn with ``seed``
    (:func:`~ioa_synth.protocol.sample.stratified_sample`; paper App. C.1 uses a random
    30-case sample), or all of them.

    Raises:
        ioa_synth.protocol.sample.SampleError: ``sample`` above the number of cases."""
    from ioa_synth.protocol.sample import stratified_sample

    if sample is not None:
        return stratified_sample(cases, lambda c: (c.domain, c.task_type), sample, seed)
    return cases[:limit] if limit else cases
