"""The build's setup description (its fingerprint parts) and the check that keys resume
of a build directory (``build``, ``regenerate``; ``audit`` records it).

Per component (:mod:`ioa_synth.runs.fingerprint` for the generic parts): its identity
(model, seed, temperature, structured output, request options, the generator's plan
mode; no base URL), the build templates it renders (the generator its ``*generator*``
ones and, under the scaffold plan, the ``*scaffold*`` ones, the judges their ``*judge*`` ones), for the judges the rubric (version and sha256,
App. B.2) and for the generator the content-gate thresholds
(:mod:`ioa_synth.protocol.gates`) and the version of the case plan
(:mod:`ioa_synth.protocol.plan`). The description of a setup stays byte-identical
across releases unless one of those parts changes (a test keeps it so): a build
directory made by an earlier release resumes.
"""

from __future__ import annotations

from typing import Any, Mapping

from ioa_synth.build.prompts import CAPABILITY, LANGUAGE_NOTE, MULTI_CAPABILITY, SERIES_CAPABILITY
from ioa_synth.core.templates import all_template_hashes
from ioa_synth.protocol.gate_languages import gates_for
from ioa_synth.protocol.gates import load_gates
from ioa_synth.protocol.gates_multi import multi_gate_settings
from ioa_synth.protocol.plan_multi import MULTI_PLAN_VERSION
from ioa_synth.protocol.series import SERIES_PLAN_VERSION
from ioa_synth.protocol.plan_modes import plan_version
from ioa_synth.protocol.rubric import load_rubric, rubric_sha256
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.fingerprint import component_identity, component_view, describe_components, templates_rendered
from ioa_synth.runs.run_rows import check_fingerprint
from ioa_synth.text.languages import DEFAULT_LANGUAGE, language_tag

#: Commands whose setup must match the directory's (they write build calls and scores).
BUILD_COMMANDS = ("build", "regenerate")

#: Roles whose calls the rubric shapes (scores against its dimensions and thresholds).
JUDGE_ROLES = ("judge", "audit_judge")


def component_description(component: str, identity: dict[str, Any], templates: Mapping[str, str],
                          rubric: dict[str, Any]) -> dict[str, Any]:
    """What is fingerprinted for one build component: ``identity`` (without base URL), the
    templates it renders, for judges the ``rubric`` and for the generator the content-gate
    thresholds and the case plan's version."""
    desc = component_identity(identity)
    desc["templates"] = templates_rendered(templates, "judge" if component in JUDGE_ROLES else component)
    if component in JUDGE_ROLES:
        desc["rubric"] = rubric
    if component == "generator":
        desc["gates"] = load_gates().model_dump(mode="json")  # the content gates admit or reject its output
        desc["case_plan"] = plan_version(identity.get("plan"))  # the plan's rules shape what it writes
        if identity.get("plan") == "scaffold":  # its stage 2 renders the two-pass templates too
            desc["templates"] |= {k: v for k, v in templates.items() if "scaffold" in k.rsplit("/", 1)[-1]}
    return desc


def rubric_identity() -> dict[str, Any]:
    """``{"version", "sha256"}`` of the rubric in force."""
    return {"version": load_rubric().version, "sha256": rubric_sha256()}


def build_setup_description(endpoints: Mapping[str, Any], participants: int = 2,
                            language: str | None = None, meetings: int = 1) -> dict[str, Any]:
    """The fingerprinted facts of a build run: ``endpoints`` maps component -> ``Endpoint``;
    ``{"fingerprint_version": 2, "components": {name: component_description}}``. The
    ``describe`` of ``build``, ``regenerate`` and ``audit``. With ``participants`` above 2
    each component also lists the meeting size and the multi-party templates it renders,
    and the generator the multi-party plan and gates (:func:`multi_party_parts`); two
    people describe themselves exactly as before. A build in another ``language`` than
    English (:func:`in_language_description`) describes itself with it; an English one
    exactly as before the option existed. A series of ``meetings`` above 1 adds
    :func:`series_parts`; one meeting describes itself as before."""
    templates = all_template_hashes(CAPABILITY)
    rubric = rubric_identity()

    def part(name: str, identity: dict[str, Any]) -> dict[str, Any]:
        desc = in_language_description(component_description(name, identity, templates, rubric), name, language,
                                       templates)
        desc = desc | multi_party_parts(name, participants) if participants != 2 else desc
        return desc | series_parts(name, meetings) if meetings != 1 else desc

    return describe_components(endpoints, part)


def series_parts(component: str, meetings: int) -> dict[str, Any]:
    """What a series of meetings adds to ``component``'s description: ``meetings``, the
    ``build_series/`` note's sha256 (``series_templates``; every component renders it) and,
    for the generator, the series plan's version (``series_plan``)."""
    out: dict[str, Any] = {"meetings": meetings, "series_templates": all_template_hashes(SERIES_CAPABILITY)}
    if component == "generator":
        out["series_plan"] = SERIES_PLAN_VERSION
    return out


def multi_party_parts(component: str, participants: int) -> dict[str, Any]:
    """What a multi-party build adds to ``component``'s description: ``participants``, the
    ``build_multi/`` templates it renders (``multi_templates``) and, for the generator,
    the multi-party plan's version and gate settings."""
    multi = all_template_hashes(MULTI_CAPABILITY)
    out: dict[str, Any] = {"participants": participants,
                           "multi_templates": templates_rendered(multi, "judge" if component in JUDGE_ROLES
                                                                 else component)}
    if component == "generator":
        out |= {"multi_plan": MULTI_PLAN_VERSION, "multi_gates": multi_gate_settings()}
    return out


def in_language_description(desc: dict[str, Any], component: str, language: str | None,
                            templates: Mapping[str, str]) -> dict[str, Any]:
    """``desc`` of ``component`` for a build in ``language``: English (or ``None``) leaves it
    as it is; another language adds ``language`` (its registry tag) and the language note's
    sha256 to every component, and gives the generator that language's gate thresholds
    (:func:`~ioa_synth.protocol.gate_languages.gates_for`)."""
    tag = language_tag(language)
    if tag == DEFAULT_LANGUAGE:
        return desc
    desc = dict(desc, language=tag, templates=dict(desc["templates"], **{LANGUAGE_NOTE: templates[LANGUAGE_NOTE]}))
    if component == "generator":
        desc["gates"] = gates_for(tag).model_dump(mode="json")
    return desc


def _upgrade_v1(component: str, stored: dict[str, Any], description: dict[str, Any]) -> dict[str, Any]:
    """A component of a version-1 build description (templates and rubric at the top level)."""
    return component_description(component, stored, description.get("templates") or {},
                                 description.get("rubric") or {})


def build_component_view(description: dict[str, Any], component: str) -> dict[str, Any] | None:
    """The description of ``component`` in a stored build setup description of any version
    (:func:`ioa_synth.runs.fingerprint.component_view`)."""
    return component_view(description, component, _upgrade_v1)


def check_build_setup(catalog: Catalog, description: dict[str, Any]) -> str:
    """The ``check`` of ``build`` and ``regenerate``: the fingerprint of ``description``,
    or :class:`~ioa_synth.runs.run_rows.FingerprintMismatch` when a component that has
    successful build calls stored here changed."""
    return check_fingerprint(catalog, description, commands=BUILD_COMMANDS, view=build_component_view)
