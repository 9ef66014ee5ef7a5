"""What a ``train sft`` folder holds, per split and cell (the warm-start subset of the IoA
paper, §6.1 and Table 17: 300 training dialogues of a frontier prober, Category-C questions
removed).

Read from ``sft.jsonl`` alone (the one file ``train sft`` writes, :mod:`.sft`): each row's
``case_id`` (``<domain>/<task_type>_<index>``, PROTOCOL §2, gives the cell), ``split``,
``n_removed_c`` and ``teacher``, and the questions of its assistant turn (``messages``'
last turn, or ``completion``'s first). Dialogues the export dropped (no question left) and
the MAs of each dialogue are not in the file, so they are not counted here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ioa_synth.core.jsonl import iter_jsonl
from ioa_synth.protocol.cells import DOMAINS, SPLITS, TASK_TYPES
from ioa_synth.train.files import SPLIT_NAMES

#: The file ``train sft`` writes into its ``--out`` folder (what makes a folder of kind ``sft``).
SFT_FILE = "sft.jsonl"


class SftFolderError(ValueError):
    """An ``sft.jsonl`` that is not ``train sft``'s: one line naming ``path:line``."""


@dataclass(frozen=True)
class SftRow:
    """One dialogue of the warm-start data: its case id, split, cell, the questions kept in
    its assistant turn, the Category-C questions removed and the teacher model."""

    case_id: str
    split: str
    domain: str
    task_type: str
    questions: int
    removed_c: int
    teacher: str


def is_sft_folder(path: Path) -> bool:
    """Whether ``path`` holds ``train sft``'s output (the folder-kind marker)."""
    return (Path(path) / SFT_FILE).is_file()


def cell_of(case_id: str) -> tuple[str, str]:
    """``(domain, task_type)`` of a case id (``business/troubleshooting_010`` ->
    ``("business", "troubleshooting")``); ``"unknown"`` for a part that names none."""
    parts = case_id.split("/")
    domain = next((p for p in parts[:-1] if p in DOMAINS), "unknown")
    task = parts[-1].rsplit("_", 1)[0]
    return domain, task if task in TASK_TYPES else "unknown"


def _assistant(row: dict[str, Any]) -> Any:
    turns = row.get("completion") if "completion" in row else row.get("messages")
    if not isinstance(turns, list) or not turns or not isinstance(turns[-1], dict):
        return None
    turn = turns[0] if "completion" in row else turns[-1]
    return turn.get("content") if turn.get("role") == "assistant" else None


def read_sft(folder: Path) -> list[SftRow]:
    """The rows of ``folder/sft.jsonl``, in file order.

    Raises:
        SftFolderError: no such file, a line that is not JSON, a row without ``case_id``,
            ``split`` or an assistant turn holding a question set (``{"questions": [...]}``),
            or no row at all.
    """
    path = Path(folder) / SFT_FILE
    if not path.is_file():
        raise SftFolderError(f"{folder}: no {SFT_FILE} here (the --out of 'ioa-synth train sft')")
    rows = []
    for n, row in iter_jsonl(path, SftFolderError):
        where = f"{path}:{n}"
        if not isinstance(row, dict) or not isinstance(row.get("case_id"), str) or not isinstance(row.get("split"), str):
            raise SftFolderError(f"{where}: not a 'train sft' row (no case_id or split)")
        content = _assistant(row)
        try:
            questions = json.loads(content)["questions"] if isinstance(content, str) else None
        except (json.JSONDecodeError, KeyError, TypeError):
            questions = None
        if not isinstance(questions, list):
            raise SftFolderError(f"{where}: the assistant turn holds no question set ({{\"questions\": [...]}})")
        removed = row.get("n_removed_c", 0)
        domain, task = cell_of(row["case_id"])
        rows.append(SftRow(row["case_id"], row["split"], domain, task, len(questions),
                           removed if isinstance(removed, int) else 0, str(row.get("teacher") or "unknown")))
    if not rows:
        raise SftFolderError(f"{path}: no row")
    return rows


def _order(values: tuple[str, ...]) -> dict[str, int]:
    return {v: i for i, v in enumerate(values)}


def cell_summary(rows: list[SftRow]) -> list[dict[str, Any]]:
    """One dict per (split, domain, task type) present, in the protocol's order (splits
    train, val, test; domains and task types as PROTOCOL §2; unknown last): ``split``,
    ``domain``, ``task_type``, ``dialogues``, ``questions`` (kept, summed), ``mean_questions``
    (per dialogue) and ``removed_c`` (summed)."""
    import polars as pl

    frame = pl.DataFrame([r.__dict__ for r in rows])
    agg = frame.group_by("split", "domain", "task_type").agg(
        pl.len().alias("dialogues"), pl.col("questions").sum(), pl.col("questions").mean().alias("mean_questions"),
        pl.col("removed_c").sum())
    splits, domains, tasks = _order(tuple(dict.fromkeys((*SPLITS, *SPLIT_NAMES)))), _order(DOMAINS), _order(tuple(TASK_TYPES))
    out = agg.to_dicts()
    out.sort(key=lambda r: (splits.get(r["split"], len(splits)), r["split"], domains.get(r["domain"], len(domains)),
                            tasks.get(r["task_type"], len(tasks))))
    return out
