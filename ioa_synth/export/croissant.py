"""Croissant 1.0 metadata (``croissant.json``) of an export, built with ``mlcroissant``: one
file object per split file (JSON lines, SHA-256) and one record set per split whose fields
read the record's columns: ``case_id``, ``domain``, ``task_type`` as text and the nested
``seed``, ``profiles`` and ``dialogue`` objects as JSON text."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

#: Record columns: (name, description).
COLUMNS = (
    ("case_id", "Case id: <split>/<domain>/<task_type>_<index>"),
    ("domain", "Domain of the seed tuple"),
    ("task_type", "Task type of the seed tuple (McGrath's group task circumplex)"),
    ("seed", "The seed paper: seed_id, source, license, doi, url, title and abstract (null when the licence "
             "forbids redistribution), text_redistributed"),
    ("profiles", "meeting_scenario, members (public profile, private_state, hidden_assumptions), "
                 "misalignment_points (the planted hidden disagreements) and conversation_outline"),
    ("dialogue", "num_turns and turns (turn_idx, speaker_id, speaker_name, inner_thought, utterance)"),
)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def croissant_metadata(folder: Path, split_files: dict[str, str], name: str, license: str,
                       provenance: dict[str, Any]) -> dict[str, Any]:
    """The Croissant JSON-LD of the export in ``folder`` (``split_files``: split -> relative path)."""
    import mlcroissant as mlc

    ctx = mlc.Context()
    distribution, record_sets = [], []
    for split, rel in split_files.items():
        file_id = f"{split}-jsonl"
        distribution.append(mlc.FileObject(
            ctx=ctx, id=file_id, name=file_id, description=f"The {split} split, one case per line",
            content_url=rel, encoding_formats=["application/jsonlines"], sha256=_sha256(folder / rel)))
        fields = [mlc.Field(ctx=ctx, id=f"{split}/{col}", name=col, description=desc, data_types=[mlc.DataType.TEXT],
                            source=mlc.Source(ctx=ctx, file_object=file_id, extract=mlc.Extract(ctx=ctx, column=col)))
                  for col, desc in COLUMNS]
        record_sets.append(mlc.RecordSet(ctx=ctx, id=split, name=split, description=f"Cases of the {split} split",
                                         fields=fields))
    sources = sorted({r["source"] for r in provenance.get("seed_sources", [])})
    metadata = mlc.Metadata(
        ctx=ctx, name=name, conforms_to=[CONFORMS_TO], license=[license], url="https://huggingface.co/datasets",
        description=("Two-person work meetings with planted hidden disagreements (illusion of alignment): "
                     "profiles, misalignment points and dialogues with inner thoughts, each grounded in a "
                     f"scholarly paper ({', '.join(sources) or 'no seed source recorded'})."),
        keywords=["dialogue", "hidden disagreement", "illusion of alignment", "synthetic"], in_language=["en"],
        distribution=distribution, record_sets=record_sets)
    return metadata.to_json()
