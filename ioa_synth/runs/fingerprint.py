"""Versioned fingerprints of a run's setup, one description per LLM component: model,
sampling and request settings, plus the parts the capability adds (the templates the
component renders, for a build judge the rubric...). It keys resume — a component may not
change once it has successful calls stored in a folder
(:func:`ioa_synth.runs.run_rows.check_fingerprint`) — and is stored with every run. Base URL
and API key are not part of it: the same model moved to another host or port resumes.
Modelled on NeMo DataDesigner's ``fingerprint.py``.

Each capability builds its own description from these helpers (the build's is
:func:`ioa_synth.build.fingerprint.build_setup_description`) and passes it to
:func:`~ioa_synth.runs.context.open_run` as ``describe``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Mapping

#: 2: per-component descriptions without base URL (1: one description with base URLs).
FINGERPRINT_VERSION = 2

#: ``part(component, identity) -> description`` of one component (:func:`describe_components`).
ComponentPart = Callable[[str, dict[str, Any]], dict[str, Any]]
#: ``upgrade(component, stored, description) -> description``: a component of a version-1
#: description in today's form (:func:`component_view`).
Upgrade = Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]


def component_identity(identity: Mapping[str, Any]) -> dict[str, Any]:
    """An endpoint's ``identity()`` (model, seed, temperature, structured output, request
    options...) without its base URL, in its own key order."""
    return {k: v for k, v in identity.items() if k != "base_url"}


def templates_rendered(templates: Mapping[str, str], word: str) -> dict[str, str]:
    """The templates (name -> sha256) whose file name contains ``word`` (``judge`` picks
    ``build/stage1_judge.jinja2``...), or all of them when none does."""
    mine = {k: v for k, v in templates.items() if word in k.rsplit("/", 1)[-1]}
    return mine or dict(templates)


def describe_components(endpoints: Mapping[str, Any], part: ComponentPart) -> dict[str, Any]:
    """``{"fingerprint_version": 2, "components": {name: part(name, identity)}}`` over
    ``endpoints`` (component -> ``Endpoint``) in name order."""
    return {
        "fingerprint_version": FINGERPRINT_VERSION,
        "components": {name: part(name, ep.identity()) for name, ep in sorted(endpoints.items())},
    }


def identity_description(endpoints: Mapping[str, Any]) -> dict[str, Any]:
    """The plainest description: each component's :func:`component_identity` (the
    default ``describe`` of :func:`~ioa_synth.runs.context.open_run`)."""
    return describe_components(endpoints, lambda name, identity: component_identity(identity))


def component_view(description: dict[str, Any], component: str, upgrade: Upgrade | None = None
                   ) -> dict[str, Any] | None:
    """The description of ``component`` inside a stored setup description of any
    version; ``None`` when that setup had no such component. A version-1 description
    (base URLs in the components, shared parts at the top level) is brought to today's
    form by ``upgrade`` (the capability's), or else by dropping the base URL."""
    comp = (description.get("components") or {}).get(component)
    if comp is None:
        return None
    if description.get("fingerprint_version", 1) >= 2:
        return comp
    return upgrade(component, comp, description) if upgrade is not None else component_identity(comp)


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
