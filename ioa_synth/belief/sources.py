"""Importers of the public item sources (§5): CounterFact JSON (``requested_rewrite``
records), PopQA TSV and item JSONL; SimpleQA CSV is in :mod:`.simpleqa`.

Each importer returns ``(drafts, dropped)``: :class:`~ioa_synth.belief.items.Draft` items
whose statements and seed the item writer still writes, and ``{reason: count}`` of the
records it dropped. Manipulated answers are chosen the paper's way; choices among several
candidates are seeded by the record's id, so an import is reproducible.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ioa_synth.belief.items import Draft, Imported, ItemsError, load_drafts, read_input
from ioa_synth.belief.matching import borrow_answer, mentions
from ioa_synth.belief.simpleqa import import_simpleqa
from ioa_synth.core.jsonl import json_problem

FORMATS = ("counterfact", "popqa", "simpleqa", "jsonl")

#: Questions for common CounterFact relations (Wikidata property id -> template on the subject).
COUNTERFACT_QUESTIONS: dict[str, str] = {
    "P17": "In which country is {s} located?", "P19": "Where was {s} born?", "P20": "Where did {s} die?",
    "P27": "Of which country is {s} a citizen?", "P30": "On which continent is {s} located?",
    "P36": "What is the capital of {s}?", "P37": "What is the official language of {s}?",
    "P101": "What is the field of work of {s}?", "P103": "What is the native language of {s}?",
    "P106": "What is the occupation of {s}?", "P127": "Who owns {s}?", "P131": "Where is {s} located?",
    "P136": "What genre of music does {s} play?", "P138": "After whom or what is {s} named?",
    "P140": "What is the religion of {s}?", "P159": "Where is the headquarters of {s}?",
    "P176": "Which company produces {s}?", "P178": "Which company developed {s}?",
    "P190": "Which city is a twin city of {s}?", "P264": "Which record label is {s} signed to?",
    "P276": "Where is {s} located?", "P407": "In which language is {s} written?",
    "P413": "What position does {s} play?", "P449": "On which network did {s} originally air?",
    "P463": "Which organization is {s} a member of?", "P495": "In which country did {s} originate?",
    "P641": "Which sport does {s} play?", "P740": "Where was {s} founded?",
    "P937": "In which city did {s} work?", "P1303": "Which instrument does {s} play?",
    "P1412": "Which language does {s} speak?", "P39": "Which position did {s} hold?",
}


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_input(path))
    except json.JSONDecodeError as exc:
        raise ItemsError(json_problem(path, exc)) from exc


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def import_counterfact(path: Path) -> Imported:
    """CounterFact: true object ``target_true``, manipulated answer ``target_new``; records
    whose subject contains either answer are dropped."""
    data = _load_json(path)
    if not isinstance(data, list):
        raise ItemsError(f"{path}: CounterFact must be a JSON list of records")
    drafts, dropped = [], Counter()
    for n, rec in enumerate(data):
        rw = rec.get("requested_rewrite") if isinstance(rec, dict) else None
        if not isinstance(rw, dict):
            raise ItemsError(f"{path}: record {n}: no requested_rewrite object")
        subject, prompt = _text(rw.get("subject")), _text(rw.get("prompt"))
        true, new = _text((rw.get("target_true") or {}).get("str")), _text((rw.get("target_new") or {}).get("str"))
        relation = _text(rw.get("relation_id")) or "unknown"
        if not (subject and prompt and true and new):
            raise ItemsError(f"{path}: record {n}: requested_rewrite needs subject, prompt, target_true.str, "
                             "target_new.str")
        if mentions(subject, [true]) or mentions(subject, [new]):
            dropped["subject contains an answer"] += 1
            continue
        template = COUNTERFACT_QUESTIONS.get(relation)
        question = (template.format(s=subject) if template
                    else f"Complete the statement: {prompt.replace('{}', subject)} ...?")
        case = rec.get("case_id", n)
        drafts.append(Draft(item_id=f"counterfact-{case}", source="counterfact", relation=relation, question=question,
                            true_answer=true, manipulated_answer=new))
    return drafts, dropped


def _aliases(value: str) -> list[str]:
    value = value.strip()
    if not value:
        return []
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return [value]
    return [str(x) for x in parsed] if isinstance(parsed, list) else [str(parsed)]


def import_popqa(path: Path) -> Imported:
    """PopQA TSV (``id``, ``prop``, ``obj``, ``question``, ``possible_answers``...): the
    manipulated answer is the answer of another question of the same relation; items
    whose true answer appears in the question are dropped."""
    rows = list(csv.DictReader(io.StringIO(read_input(path), newline=""), delimiter="\t"))
    need = {"id", "prop", "obj", "question", "possible_answers"}
    if not rows or not need <= set(rows[0]):
        raise ItemsError(f"{path}: PopQA TSV needs the columns {', '.join(sorted(need))}")
    by_relation: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for r in rows:
        by_relation[r["prop"]].append((r["obj"].strip(), _aliases(r["possible_answers"])))
    drafts, dropped = [], Counter()
    for r in rows:
        true, question, aliases = r["obj"].strip(), r["question"].strip(), _aliases(r["possible_answers"])
        names = [true, *aliases]
        if mentions(question, names):
            dropped["true answer appears in the question"] += 1
            continue
        pool = [p for p in by_relation[r["prop"]] if p[0] != true]
        picked = borrow_answer(question, names, pool, random.Random(f"popqa|{r['id']}"))
        if picked is None:
            dropped["no answer of the same relation to borrow"] += 1
            continue
        drafts.append(Draft(item_id=f"popqa-{r['id']}", source="popqa", relation=r["prop"], question=question,
                            true_answer=true, true_aliases=[a for a in aliases if a != true],
                            manipulated_answer=picked[0], manipulated_aliases=[a for a in picked[1] if a != picked[0]]))
    return drafts, dropped


def import_jsonl(path: Path) -> Imported:
    """Items in the toolkit's own JSONL layout; statements and seed may be missing."""
    return load_drafts(path), Counter()


def import_items(path: Path, fmt: str) -> Imported:
    """Import ``path`` in format ``fmt`` (one of :data:`FORMATS`).

    Raises:
        ItemsError: unreadable or malformed file, unknown format.
    """
    readers = {"counterfact": import_counterfact, "popqa": import_popqa, "simpleqa": import_simpleqa,
               "jsonl": import_jsonl}
    if fmt not in readers:
        raise ItemsError(f"unknown --format {fmt!r}; one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise ItemsError(f"{path}: {'is a directory; give the items file in it' if path.is_dir() else 'no such file'}")
    return readers[fmt](path)
