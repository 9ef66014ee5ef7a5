"""Croissant 1.0 metadata (``croissant.json``) of an export, built with ``mlcroissant``.

One file object per split file (JSON lines, SHA-256) and one record set per split. The
record set reads ``case_id``, ``domain``, ``task_type``, the seed paper's fields, the
meeting scenario and the number of turns (nested objects as sub-fields, by JSON path).
The list-valued parts of a record (members, misalignment points, outline, turns) are
named in the descriptions and read with ``datasets.load_dataset``: mlcroissant 1.1's
JSON-path transform yields only the first match of a list.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

#: Top-level text columns: (name, description).
COLUMNS = (("case_id", "Case id: <split>/<domain>/<task_type>_<index>"), ("domain", "Domain of the seed tuple"),
           ("task_type", "Task type of the seed tuple (McGrath's group task circumplex)"))
#: Nested columns: (column, description, [(JSON path, data type name, description)]).
NESTED = (
    ("seed", "The seed paper; title and abstract are null when its licence forbids redistribution",
     [("seed_id", "TEXT", "Seed id (source:identifier)"), ("source", "TEXT", "Where the paper was found"),
      ("license", "TEXT", "Licence of the paper's metadata"), ("doi", "TEXT", "DOI, when known"),
      ("url", "TEXT", "Landing page, when known"), ("title", "TEXT", "Title (null when not redistributable)"),
      ("abstract", "TEXT", "Abstract (null when not redistributable)"),
      ("text_redistributed", "BOOL", "Whether title and abstract are published")]),
    ("profiles", "Meeting scenario; also members (public profile, private_state, hidden_assumptions), "
                 "misalignment_points (the planted hidden disagreements) and conversation_outline",
     [("meeting_scenario", "TEXT", "Context, agenda and expected outcome, in prose")]),
    ("dialogue", "Number of turns; also turns (turn_idx, speaker_id, speaker_name, inner_thought, utterance)",
     [("num_turns", "INTEGER", "Number of dialogue turns")]),
)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def croissant_metadata(folder: Path, split_files: dict[str, str], name: str, licences: list[str],
                       provenance: dict[str, Any], counts: tuple[int, int] = (1, 0)) -> dict[str, Any]:
    """The Croissant JSON-LD of the export in ``folder`` (``split_files``: split -> relative path;
    ``licences``: of the generated cases and of each imported source,
    :func:`ioa_synth.export.card.card_licences`; ``counts``: generated and imported cases,
    :func:`ioa_synth.export.card.case_counts`), described each as what they are."""
    import mlcroissant as mlc

    from ioa_synth import __version__

    ctx = mlc.Context()
    distribution, record_sets = [], []
    for split, rel in split_files.items():
        file_id = f"{split}-jsonl"

        def source(column: str, path: str | None = None) -> Any:
            transforms = [mlc.Transform(ctx=ctx, json_path=path)] if path else []
            return mlc.Source(ctx=ctx, file_object=file_id, extract=mlc.Extract(ctx=ctx, column=column),
                              transforms=transforms)

        distribution.append(mlc.FileObject(
            ctx=ctx, id=file_id, name=file_id, description=f"The {split} split, one case per line",
            content_url=rel, encoding_formats=["application/jsonlines"], sha256=_sha256(folder / rel)))
        fields = [mlc.Field(ctx=ctx, id=f"{split}/{col}", name=col, description=desc,
                            data_types=[mlc.DataType.TEXT], source=source(col)) for col, desc in COLUMNS]
        for col, desc, subs in NESTED:
            fields.append(mlc.Field(ctx=ctx, id=f"{split}/{col}", name=col, description=desc, sub_fields=[
                mlc.Field(ctx=ctx, id=f"{split}/{col}/{sub}", name=sub, description=sdesc,
                          data_types=[getattr(mlc.DataType, kind)], source=source(col, sub))
                for sub, kind, sdesc in subs]))
        record_sets.append(mlc.RecordSet(ctx=ctx, id=split, name=split, description=f"Cases of the {split} split",
                                         fields=fields))
    sources = sorted({r["source"] for r in provenance.get("seed_sources", [])})
    generated, imported = counts
    built = ("Two-person work meetings with planted hidden disagreements (illusion of alignment): "
             "profiles, misalignment points and dialogues with inner thoughts, each grounded in a "
             f"scholarly paper ({', '.join(sources) or 'no seed source recorded'}).")
    brought = (f"{imported} case(s) are IoA-Suite-format records imported with ioa-synth build import from "
               f"{', '.join(src['shown'] for src in provenance.get('imported_from', [])) or 'records'}, published as "
               "given (not generated or judged here) under their source's licence.")
    description = " ".join(([built] if generated or not imported else []) + ([brought] if imported else []))
    metadata = mlc.Metadata(
        ctx=ctx, name=name, conforms_to=[CONFORMS_TO], license=licences, url="https://huggingface.co/datasets",
        version="1.0.0", date_published=datetime.now(timezone.utc).replace(microsecond=0),
        cite_as=("Illusion of Alignment: Detecting Hidden Disagreement in Collaborative Dialogue (arXiv 2608.08210); "
                 f"cases {'built' if generated else 'imported'} with ioa-synth {__version__}"),
        description=description,
        keywords=["dialogue", "hidden disagreement", "illusion of alignment", "synthetic"], in_language=["en"],
        distribution=distribution, record_sets=record_sets)
    return metadata.to_json()
