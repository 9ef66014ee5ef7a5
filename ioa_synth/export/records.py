"""Export records: the paper's record shape (``profiles`` and ``dialogue``, the released data files)
plus ``case_id``, ``domain``, ``task_type`` and ``seed``, with the features
``datasets.load_dataset`` reads them with.

A seed paper's title and abstract are published only when its licence allows
redistribution (:func:`redistributable`); otherwise the record names the paper by
``seed_id`` (and source, licence, DOI or URL when known) alone.
"""

from __future__ import annotations

import re
from typing import Any

from ioa_synth.protocol.multiparty import sides_of

#: Export split names of the build's splits (Hugging Face's conventional names).
SPLIT_NAMES = {"train": "train", "val": "validation", "test": "test"}

#: Licences whose text may be redistributed: CC0, public domain, CC BY and CC BY-SA. A
#: non-commercial or unknown licence (and arXiv's non-exclusive distribution licence when
#: it is the only one named) keeps the text out. arXiv's metadata, abstracts included, is
#: CC0, which the seed records state.
_OPEN = re.compile(r"\bCC0\b|public[- ]domain|publicdomain|\bCC[- ]BY\b(?![- ]?(NC|ND))|creativecommons\.org/licenses/by/"
                   r"|creativecommons\.org/licenses/by-sa/|\bCC[- ]BY[- ]SA\b", re.IGNORECASE)
_CLOSED = re.compile(r"\bNC\b|non-?commercial|by-nc", re.IGNORECASE)


def redistributable(licence: str | None) -> bool:
    """True when a seed's ``license`` lets the export publish its title and abstract."""
    text = licence or ""
    if _CLOSED.search(text) and not re.search(r"\bCC0\b", text):
        return False
    return bool(_OPEN.search(text))


def seed_record(seed: dict[str, Any]) -> dict[str, Any]:
    """The ``seed`` field of an export record (same keys in every record)."""
    licence = seed.get("license")
    text_ok = redistributable(licence)
    return {"seed_id": str(seed.get("seed_id") or ""), "source": str(seed.get("source") or ""),
            "license": None if licence is None else str(licence),
            "doi": seed.get("doi") if isinstance(seed.get("doi"), str) else None,
            "url": seed.get("url") if isinstance(seed.get("url"), str) else None,
            "title": seed.get("title") if text_ok else None,
            "abstract": seed.get("abstract") if text_ok else None,
            "text_redistributed": text_ok}


def export_record(case_id: str, domain: str, task_type: str, record: dict[str, Any]) -> dict[str, Any]:
    """One export line from an accepted build record; a record imported from the released
    data (``build import``) may lack a point's ``type`` (null), the outline (empty) and
    ``seed`` (all fields empty or null)."""
    profiles = record["profiles"]
    return {
        "case_id": case_id, "domain": domain, "task_type": task_type,
        "seed": seed_record(record.get("seed") or {}),
        "profiles": {
            "meeting_scenario": profiles["meeting_scenario"],
            "members": [{k: m[k] for k in ("id", "name", "role", "expertise", "background", "private_state",
                                           "hidden_assumptions")} for m in profiles["members"]],
            "misalignment_points": [_point(p) for p in profiles["misalignment_points"]],
            "conversation_outline": [{k: t[k] for k in ("turn", "speaker", "description", "ma_ids", *_met(t))}
                                     for t in profiles.get("conversation_outline") or []],
        },
        "dialogue": {"num_turns": record["dialogue"].get("num_turns", len(record["dialogue"]["turns"])),
                     "turns": [{k: t.get(k) if k == "speaker_name" else t[k]
                                for k in ("turn_idx", "speaker_id", "speaker_name", "inner_thought", "utterance",
                                          *_met(t))}
                               for t in record["dialogue"]["turns"]]},
    }


def _met(turn: dict[str, Any]) -> tuple[str, ...]:
    """``("meeting",)`` for a turn of a series of meetings (``build --meetings K``), else ``()``."""
    return ("meeting",) if "meeting" in turn else ()


def _point(p: dict[str, Any]) -> dict[str, Any]:
    """One misalignment point of an export record; a multi-party build's (``build
    --participants N``) keeps who holds each reading (``between``, ``neutral``)."""
    out = {k: p.get(k) if k == "type" else p[k] for k in ("id", "type", "topic", "surface_form",
                                                         "member_a_understanding", "member_b_understanding",
                                                         "why_undetected")}
    if "between" in p:
        out |= {"between": {"a": list(p["between"]["a"]), "b": list(p["between"]["b"])},
                "neutral": list(p.get("neutral") or [])}
    if "planted_in" in p:  # a series of meetings (build --meetings K): when it enters and comes to light
        out |= {"planted_in": p["planted_in"], "surfaces_in": p.get("surfaces_in")}
    return out


def series_lengths(records: list[dict[str, Any]]) -> list[int]:
    """The numbers of meetings of the export ``records``' cases (each once, ascending): ``[1]``
    for the paper's single meetings; a series (``build --meetings K``) counts the meetings its
    turns name."""
    return sorted({max((t.get("meeting", 1) for t in r["dialogue"]["turns"]), default=1) for r in records})


def with_series(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the series fields on every point and turn, for an export that has them:
    a single meeting is a series of one (``planted_in`` 1, ``surfaces_in`` null, ``meeting`` 1)."""
    profiles, dialogue = record["profiles"], record["dialogue"]
    points = [{"planted_in": 1, "surfaces_in": None} | p for p in profiles["misalignment_points"]]
    outline = [t | {"meeting": t.get("meeting", 1)} for t in profiles["conversation_outline"]]
    turns = [t | {"meeting": t.get("meeting", 1)} for t in dialogue["turns"]]
    return record | {"profiles": profiles | {"misalignment_points": points, "conversation_outline": outline},
                     "dialogue": dialogue | {"turns": turns}}


def meeting_sizes(records: list[dict[str, Any]]) -> list[int]:
    """The numbers of members of the export ``records`` (each once, ascending): ``[2]`` for
    the paper's two-person cases."""
    return sorted({len(r["profiles"]["members"]) for r in records})


def multi_party(records: list[dict[str, Any]]) -> bool:
    """True when a record of ``records`` is a meeting of more than two people or names its
    points' sides: the export then has the ``between`` and ``neutral`` features."""
    return any(len(r["profiles"]["members"]) > 2 or any("between" in p for p in r["profiles"]["misalignment_points"])
               for r in records)


def with_sides(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with ``between`` and ``neutral`` on every point, for an export that has
    them: a two-person point holds ``a = [M1]``, ``b = [M2]``, nobody neutral
    (:func:`~ioa_synth.protocol.multiparty.sides_of`)."""
    points = []
    for p in record["profiles"]["misalignment_points"]:
        sides = sides_of(p)
        points.append(p | {"between": {"a": sides["a"], "b": sides["b"]}, "neutral": sides["neutral"]})
    return record | {"profiles": record["profiles"] | {"misalignment_points": points}}


def features(sides: bool = False, series: bool = False):
    """The ``datasets.Features`` of an export record; ``sides``: each point's ``between``
    (``{"a": [ids], "b": [ids]}``) and ``neutral`` (``[ids]``), for a multi-party export;
    ``series``: each point's ``planted_in`` and ``surfaces_in`` (meetings, 1-based; null: never)
    and each outline and dialogue turn's ``meeting``, for a series of meetings."""
    from datasets import Features, Sequence, Value

    text = Value("string")
    met = {"meeting": Value("int32")} if series else {}
    return Features({
        "case_id": text, "domain": text, "task_type": text,
        "seed": {"seed_id": text, "source": text, "license": text, "doi": text, "url": text, "title": text,
                 "abstract": text, "text_redistributed": Value("bool")},
        "profiles": {
            "meeting_scenario": text,
            "members": [{"id": text, "name": text, "role": text, "expertise": text, "background": text,
                         "private_state": text, "hidden_assumptions": Sequence(text)}],
            "misalignment_points": [{"id": text, "type": text, "topic": text, "surface_form": text,
                                     "member_a_understanding": text, "member_b_understanding": text,
                                     "why_undetected": text,
                                     **({"between": {"a": Sequence(text), "b": Sequence(text)},
                                         "neutral": Sequence(text)} if sides else {}),
                                     **({"planted_in": Value("int32"), "surfaces_in": Value("int32")}
                                        if series else {})}],
            "conversation_outline": [{"turn": Value("int32"), "speaker": text, "description": text,
                                      "ma_ids": Sequence(text), **met}],
        },
        "dialogue": {"num_turns": Value("int32"),
                     "turns": [{"turn_idx": Value("int32"), "speaker_id": text, "speaker_name": text,
                                "inner_thought": text, "utterance": text, **met}]},
    })
