"""``ioa-synth collab import-hiddenbench``: HiddenBench scenarios (paper §6.4, App. D.7;
65 hidden-profile tasks, 7 with three agents and 58 with four) converted into this
toolkit's hidden-profile scenarios (:class:`ioa_synth.collab.tasks.HiddenProfileTask`),
one per line, for ``collab run --bench hidden-profile --tasks``.

Input: a JSON document (a list of scenarios, or an object holding the list under
``scenarios``, ``tasks`` or ``data``) or JSONL (one scenario per line), UTF-8. Each
scenario is an object; of its fields the importer reads exactly these (the first present
name of each row; every other field is ignored):

==========  ==========================================  ==========================================
piece       field names, in the order tried              value
==========  ==========================================  ==========================================
id          ``id``, ``task_id``, ``scenario_id``         string or integer
shared      ``shared_information``, ``shared_info``,     string, or a list of strings (one line
            ``shared``                                   each)
private     ``hidden_information``,                      a list with one entry per agent, or an
            ``private_information``,                     object agent name -> entry (in its
            ``unshared_information``, ``private``        order); an entry is a string or a list
                                                         of strings (one line each); 3 or 4
question    ``question``, ``task``, ``decision``         string
options     ``options``, ``choices``,                    a list of strings (lettered A, B, ...
            ``possible_answers``                         in order) or an object ``A`` -> text
answer      ``correct_answer``, ``answer``,              an option's letter or its exact text
            ``correct_option``
agents      ``num_agents``, ``n_agents`` (optional)      integer; must equal the private entries
==========  ==========================================  ==========================================

The field names are this toolkit's reading of the release's description (shared
information, one block of hidden information per agent, the possible answers, the correct
one); a copy whose keys differ needs its keys renamed (the error line names the fields
tried). Output records keep ``source`` (``{"format": "hiddenbench", "file", "index"}``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.collab.tasks import LETTERS, HiddenProfileTask, task_id_problem
from ioa_synth.core.jsonl import json_problem, read_problem
from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.validation import first_problem

#: The field names read for each piece, first present wins (module docstring).
FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "task_id", "scenario_id"),
    "shared": ("shared_information", "shared_info", "shared"),
    "private": ("hidden_information", "private_information", "unshared_information", "private"),
    "question": ("question", "task", "decision"),
    "options": ("options", "choices", "possible_answers"),
    "answer": ("correct_answer", "answer", "correct_option"),
    "agents": ("num_agents", "n_agents"),
}
#: Keys of a JSON object that hold the list of scenarios.
LIST_KEYS = ("scenarios", "tasks", "data")


class HiddenBenchError(ValueError):
    """A HiddenBench file that cannot be converted (one line naming the file and scenario)."""


def _rows(path: Path, text: str) -> list[tuple[str, Any]]:
    """``[(where, scenario object)]`` of a JSON document or JSONL."""
    stripped = text.strip()
    if not stripped:
        raise HiddenBenchError(f"{path}: empty file; expected HiddenBench scenarios as JSON or JSONL")
    try:
        doc = json.loads(stripped)
    except json.JSONDecodeError as whole:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((f"{path}:{n}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    if not rows and not stripped.startswith("{"):
                        raise HiddenBenchError(json_problem(path, whole)) from None
                    raise HiddenBenchError(json_problem(f"{path}:{n}", exc, in_line=True)) from None
        return rows
    if isinstance(doc, dict):
        key = next((k for k in LIST_KEYS if k in doc), None)
        if key is None:
            return [(f"{path}: scenario 1", doc)]
        doc = doc[key]
        if not isinstance(doc, list):
            raise HiddenBenchError(f"{path}: \"{key}\" must be a list of scenarios")
    if not isinstance(doc, list):
        raise HiddenBenchError(f"{path}: expected a list of HiddenBench scenarios (JSON) or one per line (JSONL)")
    return [(f"{path}: scenario {i}", s) for i, s in enumerate(doc, 1)]


def _pick(obj: dict[str, Any], piece: str, where: str, required: bool = True) -> Any:
    for name in FIELDS[piece]:
        if name in obj and obj[name] is not None:
            return obj[name]
    if required:
        raise HiddenBenchError(f"{where}: no {piece} field (looked for {', '.join(FIELDS[piece])})")
    return None


def _text(value: Any, piece: str, where: str) -> str:
    """A string, or a list of strings joined one per line."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "\n".join(x.strip() for x in value if x.strip())
    raise HiddenBenchError(f"{where}: {piece} must be a string or a list of strings")


def convert(obj: Any, where: str, file: str, index: int) -> dict[str, Any]:
    """One scenario as a hidden-profile record (checked by :class:`HiddenProfileTask`).

    Raises:
        HiddenBenchError: a field is missing or of the wrong shape, or the scenario breaks a
            hidden-profile rule (3-4 agents, 2-6 options, the answer one of them).
    """
    if not isinstance(obj, dict):
        raise HiddenBenchError(f"{where}: a scenario must be a JSON object")
    sid = _pick(obj, "id", where)
    if not isinstance(sid, (str, int)) or isinstance(sid, bool) or not str(sid).strip():
        raise HiddenBenchError(f"{where}: id must be a non-empty string or an integer")
    where = f"{where} ({sid})"
    if (problem := task_id_problem(str(sid).strip())) is not None:
        raise HiddenBenchError(f"{where}: {problem}")
    private = _pick(obj, "private", where)
    blocks = list(private.values()) if isinstance(private, dict) else private
    if not isinstance(blocks, list):
        raise HiddenBenchError(f"{where}: private information must be a list (one entry per agent) or an object")
    blocks = [_text(b, "each agent's private information", where) for b in blocks]
    agents = _pick(obj, "agents", where, required=False)
    if agents is not None and agents != len(blocks):
        raise HiddenBenchError(f"{where}: {agents} agents but {len(blocks)} private information entries")
    options = _pick(obj, "options", where)
    if isinstance(options, list) and all(isinstance(x, str) for x in options) and len(options) <= len(LETTERS):
        options = dict(zip(LETTERS, (x.strip() for x in options)))
    if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
        raise HiddenBenchError(f"{where}: options must be a list of strings (at most {len(LETTERS)}) or an object "
                           "letter -> text")
    answer = _pick(obj, "answer", where)
    if isinstance(answer, str) and answer.strip() not in options:
        answer = next((k for k, v in options.items() if v.strip() == answer.strip()), answer)
    record = {"task_id": str(sid).strip(), "shared": _text(_pick(obj, "shared", where), "shared information", where),
              "private": blocks, "question": _text(_pick(obj, "question", where), "question", where),
              "options": options, "answer": answer.strip() if isinstance(answer, str) else answer,
              "source": {"format": "hiddenbench", "file": file, "index": index}}
    try:
        HiddenProfileTask.model_validate(record)
    except ValidationError as exc:
        field, msg = first_problem(exc)
        raise HiddenBenchError(f"{where}: {field + ': ' if field else ''}{msg}") from None
    return record


def import_hiddenbench(path: Path) -> list[dict[str, Any]]:
    """Every scenario of ``path`` converted, in file order.

    Raises:
        HiddenBenchError: unreadable, not UTF-8, not JSON/JSONL, no scenario, a scenario that
            cannot be converted, or a repeated id.
    """
    if not path.is_file():
        raise HiddenBenchError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        text = decode_utf8(path.read_bytes(), path, HiddenBenchError)
    except OSError as exc:
        raise HiddenBenchError(read_problem(path, exc)) from None
    records, seen = [], set()
    for i, (where, obj) in enumerate(_rows(path, text), 1):
        rec = convert(obj, where, path.name, i)
        if rec["task_id"] in seen:
            raise HiddenBenchError(f"{where}: id {rec['task_id']!r} repeats")
        seen.add(rec["task_id"])
        records.append(rec)
    if not records:
        raise HiddenBenchError(f"{path}: no scenario")
    return records


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    """The output file: one record per line, UTF-8."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
