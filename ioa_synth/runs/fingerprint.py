"""Versioned fingerprints of a build's setup, one per LLM component: model, sampling
and request settings, the templates the component renders and (judges) the rubric. It
keys resume — a component may not change once it has successful calls stored in a
directory (:func:`ioa_synth.runs.run_rows.check_fingerprint`) — and is stored with every
run. Base URL and API key are not part of it: the same model moved to another host or
port resumes). Modelled on NeMo DataDesigner's ``fingerprint.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ioa_synth.core.templates import all_template_hashes
from ioa_synth.protocol.gates import load_gates
from ioa_synth.protocol.plan import PLAN_VERSION
from ioa_synth.protocol.rubric import load_rubric, rubric_sha256

#: 2: per-component descriptions without base URL (1: one description with base URLs).
FINGERPRINT_VERSION = 2

#: Roles whose calls the rubric shapes (scores against its dimensions and thresholds).
JUDGE_ROLES = ("judge", "audit_judge")


def _templates_of(component: str, templates: dict[str, str]) -> dict[str, str]:
    """The templates ``component`` renders: ``*generator*`` for the generator, ``*judge*``
    for the judges, all of them for other components."""
    word = "judge" if component in JUDGE_ROLES else component
    mine = {k: v for k, v in templates.items() if word in k.rsplit("/", 1)[-1]}
    return mine or dict(templates)


def component_description(component: str, identity: dict[str, Any], templates: dict[str, str],
                          rubric: dict[str, Any]) -> dict[str, Any]:
    """What is fingerprinted for one component: ``identity`` (model, seed base, temperature,
    structured output, request options; no base URL), its templates, for judges the rubric and
    for the generator the content-gate thresholds (``ioa_synth.protocol.gates``) and the
    version of the case plan (``ioa_synth.protocol.plan``)."""
    desc = {k: v for k, v in identity.items() if k != "base_url"}
    desc["templates"] = _templates_of(component, templates)
    if component in JUDGE_ROLES:
        desc["rubric"] = rubric
    if component == "generator":
        desc["gates"] = load_gates().model_dump(mode="json")  # the content gates admit or reject its output
        desc["case_plan"] = PLAN_VERSION  # the plan's schema constants shape what it writes
    return desc


def setup_description(endpoints: dict[str, Any]) -> dict[str, Any]:
    """The fingerprinted facts: ``endpoints`` maps component -> ``Endpoint``;
    ``{"fingerprint_version": 2, "components": {name: component_description}}``."""
    templates = all_template_hashes()
    rubric = {"version": load_rubric().version, "sha256": rubric_sha256()}
    return {
        "fingerprint_version": FINGERPRINT_VERSION,
        "components": {name: component_description(name, ep.identity(), templates, rubric)
                       for name, ep in sorted(endpoints.items())},
    }


def component_view(description: dict[str, Any], component: str) -> dict[str, Any] | None:
    """The description of ``component`` inside a stored setup description of any
    version (version 1 kept base URLs, templates and rubric at the top level); ``None``
    when that setup had no such component."""
    comp = (description.get("components") or {}).get(component)
    if comp is None:
        return None
    if description.get("fingerprint_version", 1) >= 2:
        return comp
    return component_description(component, comp, description.get("templates") or {}, description.get("rubric") or {})


def fingerprint(description: dict[str, Any]) -> str:
    """Short stable hash (16 hex chars) of a setup description (or part of one)."""
    blob = json.dumps(description, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def describe_difference(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Paths (``judge.model``...) whose values differ between two descriptions."""
    diffs: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        path = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += describe_difference(a, b, path + ".")
        elif a != b:
            diffs.append(f"{path}: {a!r} -> {b!r}")
    return diffs
