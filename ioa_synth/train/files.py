"""What the training exports share: the split of a case, atomic JSONL and parquet files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ioa_synth.protocol.cells import SPLITS
from ioa_synth.core.atomic import write_bytes_atomic, write_text_atomic

#: Row layouts of ``train sft`` (TRL's conversational formats) and ``train prompts``.
FORMATS_SFT: tuple[str, ...] = ("messages", "prompt-completion")
FORMATS_PROMPTS: tuple[str, ...] = ("trl", "verl")

#: Split folder names recognised in a case's path (the released data names the middle one "validation").
SPLIT_NAMES: tuple[str, ...] = (*SPLITS, "validation")


class ExportError(ValueError):
    """Input a training export cannot use; a one-line message naming the file or option."""


def split_of(data_dir: Path, case_id: str) -> str:
    """The split of a case: the last folder named like a split (:data:`SPLIT_NAMES`) in
    ``data_dir/case_id`` (``DIR/train`` + ``business/planning_003``, or ``DIR`` +
    ``train/business/planning_003``); ``"unknown"`` when none is."""
    parts = [p for p in (Path(data_dir) / case_id).parts[:-1] if p in SPLIT_NAMES]
    return parts[-1] if parts else "unknown"


def write_jsonl_atomic(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` as UTF-8 JSON lines, all or nothing."""
    return write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def write_parquet_atomic(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` (same keys; nested lists and structs allowed) as one parquet file, all
    or nothing (polars writes it to memory, then the bytes are renamed into place)."""
    import io

    import polars as pl

    buf = io.BytesIO()
    pl.DataFrame(rows).write_parquet(buf)
    return write_bytes_atomic(path, buf.getvalue())
