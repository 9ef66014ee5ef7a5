"""One versioned fingerprint of a build's setup: models, endpoints, sampling settings,
templates and rubric. It keys resume (a DIR is only resumed by the same setup) and is
stored with every run. Modelled on NeMo DataDesigner's ``fingerprint.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ioa_synth.llm.prompts import all_template_hashes
from ioa_synth.protocol.rubric import load_rubric, rubric_sha256

FINGERPRINT_VERSION = 1


def setup_description(endpoints: dict[str, Any]) -> dict[str, Any]:
    """The fingerprinted facts: ``endpoints`` maps component -> ``Endpoint``."""
    return {
        "fingerprint_version": FINGERPRINT_VERSION,
        "components": {name: ep.identity() for name, ep in sorted(endpoints.items())},
        "templates": all_template_hashes(),
        "rubric": {"version": load_rubric().version, "sha256": rubric_sha256()},
    }


def fingerprint(description: dict[str, Any]) -> str:
    """Short stable hash (16 hex chars) of a setup description."""
    blob = json.dumps(description, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def describe_difference(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Paths (``components.judge.model``...) whose values differ between two descriptions."""
    diffs: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        path = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += describe_difference(a, b, path + ".")
        elif a != b:
            diffs.append(f"{path}: {a!r} -> {b!r}")
    return diffs
