"""GRPO prompts of a built split (paper §6.1, App. D.1): one row per dialogue with the prober
prompt exactly as ``evaluate`` sends it (:meth:`ioa_synth.probing.probers.McqProber.prompt`
for the chosen ``--access``; a record of ``build --language`` with its language note,
:func:`ioa_synth.probing.language.in_case_language`) and the case id the reward needs.

- ``trl``: ``<split>.jsonl`` rows ``{"prompt": [system, user], "case_id", "split"}``
  (TRL's conversational prompt format; ``case_id`` reaches the reward as a keyword).
- ``verl``: ``<split>.parquet`` rows ``{"data_source": "ioa-suite", "prompt": [...],
  "ability", "reward_model": {"style": "rule", "ground_truth": case_id},
  "extra_info": {"case_id", "split", "index"}}`` (verl's RL dataset layout).

Given a train split (``DIR/train``) with ``DIR/val`` beside it, the validation prompts are
written too, by default (paper Table 18: GRPO validates on the 120 val dialogues).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioa_synth.evaluate.inputs import load_cases
from ioa_synth.probing.access import ACCESS_LEVELS
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.language import in_case_language
from ioa_synth.probing.probers import PROBERS
from ioa_synth.train.files import FORMATS_PROMPTS, ExportError, split_of, write_jsonl_atomic, write_parquet_atomic

DATA_SOURCE = "ioa-suite"
ABILITY = "hidden-disagreement-probing"


def prompt_rows(data: Path, cases: list[EvalCase], access: str = "public", fmt: str = "trl") -> list[dict[str, Any]]:
    """The rows of ``cases`` (read from ``data``) in the ``fmt`` layout.

    Raises:
        ExportError: unknown ``access`` or ``fmt``.
    """
    if access not in ACCESS_LEVELS:
        raise ExportError(f"--access must be one of {', '.join(ACCESS_LEVELS)} (got {access!r})")
    if fmt not in FORMATS_PROMPTS:
        raise ExportError(f"--format must be one of {', '.join(FORMATS_PROMPTS)} (got {fmt!r})")
    prober = PROBERS["mcq"]
    rows = []
    for i, case in enumerate(cases):
        messages = in_case_language(prober.prompt(case, access), case.language, "prober").messages  # as evaluate sends it
        split = split_of(data, case.case_id)
        if fmt == "trl":
            rows.append({"prompt": messages, "case_id": case.case_id, "split": split})
        else:
            rows.append({"data_source": DATA_SOURCE, "prompt": messages, "ability": ABILITY,
                         "reward_model": {"style": "rule", "ground_truth": case.case_id},
                         "extra_info": {"case_id": case.case_id, "split": split, "index": i}})
    return rows


def val_folder(data: Path) -> Path | None:
    """The validation split beside a train split: ``DIR/val`` for ``--data DIR/train`` when
    that folder exists, else ``None`` (paper §6.1: GRPO trains on the 1,200 train dialogues
    and validates on the 120 of val)."""
    data = Path(data)
    val = data.parent / "val"
    return val if data.name == "train" and val.is_dir() else None


def export_prompts(data: Path, out_dir: Path, access: str = "public", fmt: str = "trl",
                   with_val: bool = True) -> list[tuple[Path, int]]:
    """Write the prompts of every case under ``data`` to ``out_dir`` (``<split>.jsonl`` or
    ``<split>.parquet``, named after the cases' split, ``prompts`` when they mix splits) and,
    when ``with_val`` and ``data`` is a train split with a ``val`` folder beside it
    (:func:`val_folder`), the validation prompts as well (``val.jsonl``/``val.parquet``);
    return each file written and its row count. Every folder is read before anything is
    written.

    Raises:
        ioa_synth.evaluate.inputs.InputError: ``data`` (or its val folder) is not a folder of cases.
        ExportError: see :func:`prompt_rows`.
    """
    val = val_folder(data) if with_val else None
    files = []
    for folder in [data] + ([val] if val else []):
        cases = load_cases(folder)
        rows = prompt_rows(folder, cases, access, fmt)
        splits = {split_of(folder, c.case_id) for c in cases}
        stem = splits.pop() if len(splits) == 1 else "prompts"
        files.append(("prompts" if stem == "unknown" else stem, rows))
    write = write_jsonl_atomic if fmt == "trl" else write_parquet_atomic
    suffix = "jsonl" if fmt == "trl" else "parquet"
    return [(write(out_dir / f"{stem}.{suffix}", rows), len(rows)) for stem, rows in files]
