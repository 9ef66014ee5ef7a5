"""IoA paper tables of the settings the runs use rather than their results: the build judges'
rubric criteria and θ thresholds (Table 7, App. B; optionally with one build's judged scores)
and the models with their thinking settings (Table 15).

- ``ioa-7`` reads the rubric in force (:func:`ioa_synth.protocol.rubric.load_rubric`, the one
  definition of the criteria, scales and θ1/θ2 that the judges' prompts, schemas and gates
  use); given a build directory, it adds per criterion that build's judged items, mean score
  and θ pass rates at the first attempt and after regeneration
  (:func:`ioa_synth.build.passrates.pass_rates`, what ``status`` shows).
- ``ioa-15`` reads a ``--settings`` models file (:func:`ioa_synth.llm.config.load_config`, the
  reader every command uses; default ``configs/paper-models.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ioa_synth.build.builddir import BuildDirError, open_catalog
from ioa_synth.build.fingerprint import BUILD_COMMANDS, build_component_view, rubric_identity
from ioa_synth.build.passrates import pass_rates
from ioa_synth.llm.config import COMPONENTS, ComponentConfig, ConfigError, ToolkitConfig, load_config
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, SettingsFile, TableError, TableSpec, register

#: The repository's settings files (a checkout's ``configs/``; an installed wheel has none).
CONFIGS = Path(__file__).resolve().parents[2] / "configs"

#: What each component is in the papers (ioa-15's second column).
ROLES = {
    "generator": "generators G_participants, G_dialogue (§3)",
    "judge": "build judges J_participants, J_dialogue (§3)",
    "audit_judge": "cross-family audit judge (App. B.3)",
    "prober": "prober (§4)",
    "simulator": "participant simulator (§4)",
    "validity_filter": "validity filter (§4)",
    "merge_judge": "live meetings' merge judge (§6.2)",
    "discusser": "collaboration agents (§6.4)",
    "type_judge": "disagreement-type judge (App. B.5)",
    "item_writer": "belief study: item writer",
    "screener": "belief study: screener",
    "agent": "belief study: chat-room agents",
    "belief_judge": "belief study: belief judge",
    "stance_judge": "belief study: stance judge",
}

#: The split whose scores ioa-7 shows when the build has it (the paper's audited split).
SPLIT = "test"


def mean(value: float | None) -> str:
    """A mean score with two decimals; ``None`` (a mean over nothing) -> ``"–"``."""
    return "–" if value is None else f"{value:.2f}"


def thinking(block: ComponentConfig) -> str:
    """What a component's ``request_options`` set about thinking: ``reasoning_effort``
    (``none`` is "off"), ``extra_body``'s ``chat_template_kwargs.enable_thinking`` and its
    ``reasoning``/``thinking`` keys; ``"provider default"`` when none is set."""
    opts = block.request_options or {}
    said = []
    effort = opts.get("reasoning_effort")
    if effort is not None:
        said.append("off (reasoning_effort none)" if effort == "none" else f"reasoning_effort {effort}")
    body = opts.get("extra_body") or {}
    enable = (body.get("chat_template_kwargs") or {}).get("enable_thinking")
    if enable is not None:
        said.append(f"{'on' if enable else 'off'} (enable_thinking {json.dumps(enable)})")
    for key in ("reasoning_effort", "reasoning", "thinking", "thinking_config", "thinking_budget"):
        if key in body:
            said.append(f"extra_body.{key} {json.dumps(body[key], sort_keys=True)}")
    return "; ".join(said) or "provider default"


def temperature(block: ComponentConfig, component: str) -> str:
    """The temperature a component sends: ``"0.7"``, ``"0.7 (default)"`` when the block does
    not set it, ``"not sent"`` for ``null``."""
    value = block.effective_temperature(component)
    shown = "not sent" if value is None else f"{value:g}"
    return shown if "temperature" in block.model_fields_set else f"{shown} (default)"


def read_models(path: Path, option: str = "--settings") -> ToolkitConfig:
    """``path`` read as a models config; its error as a one-line :class:`TableError`."""
    try:
        return load_config(path)
    except ConfigError as exc:
        raise TableError(f"{option} {exc}") from None


def models_table(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-15: one row per component the config file sets (in the toolkit's component order):
    its role in the papers, model, temperature and thinking setting."""
    (path,) = folders["models"]
    config = read_models(path)
    given = [c for c in COMPONENTS if c in config.model_fields_set]
    if not given:
        raise TableError(f"--settings {path}: sets no component (a models config has blocks such as "
                         "\"prober\": {\"model\": ...})")
    rows = []
    for name in given:
        block = config.component(name)
        rows.append([name, ROLES.get(name, name), block.model or "– (the endpoint's own)", temperature(block, name),
                     thinking(block)])
    return PaperTable("ioa-15", "Table 15: models and thinking settings",
                      ["component", "role", "model", "temperature", "thinking"], rows,
                      [f"From {path} (the components it sets; endpoints and keys come from the environment).",
                       "Thinking: what the block's request_options send (reasoning_effort none = off); 'provider "
                       "default' when they set none. The paper's models are configs/paper-models.json; the GRPO "
                       "reward's models are in ioa-18 (configs/paper-reward.json)."])


def _judged_rubrics(folder: Path) -> set[str]:
    """The sha256 of every rubric the build's judge runs were fingerprinted with."""
    found = set()
    with open_catalog(folder, read_only=True) as cat:
        rows = cat.execute("SELECT fingerprint_json FROM runs WHERE list_contains(?, command) AND fingerprint_json IS NOT NULL",
                           [list(BUILD_COMMANDS)])
    for (blob,) in rows:
        judge = build_component_view(json.loads(blob), "judge") or {}
        if (judge.get("rubric") or {}).get("sha256"):
            found.add(judge["rubric"]["sha256"])
    return found


def _build_scores(folder: Path) -> tuple[str | None, dict[str, Any], set[str]]:
    """(split shown, its ``pass_rates`` entry, rubric digests judged with) of a build directory."""
    try:
        with open_catalog(folder, read_only=True) as cat:
            rates = pass_rates(cat)
        judged = _judged_rubrics(folder)
    except BuildDirError as exc:
        raise TableError(str(exc)) from None
    if not rates:
        return None, {}, judged
    split = SPLIT if SPLIT in rates else sorted(rates)[0]
    return split, rates[split], judged


def judge_criteria(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-7: one row per rubric criterion of θ1 (J_participants, per MA point) and θ2
    (J_dialogue, per dialogue): scale, θ, the question the judge answers and the level
    definitions (``[3] ... [2] ...``). With a build directory, per criterion of one split (test when there, else
    the first): items judged at the first attempt, mean score at the first and the final
    attempt, and the share meeting θ at each (%); a row per stage for θ as a whole (cases)."""
    rubric = load_rubric()
    build = (folders.get("build") or [None])[0]
    split, rates, judged = _build_scores(build) if build is not None else (None, {}, set())
    columns = ["stage", "judge", "criterion", "scale", "θ", "question", "levels"]
    if build is not None:
        columns += ["n", "mean (first)", "mean (final)", "meets θ first attempt (%)", "meets θ after regeneration (%)"]
    rows = []
    for st in rubric.stages:
        theta = rubric.threshold(st.stage)
        judge = f"J_{st.name} (per {st.unit.replace('_', ' ')})"
        stage_rates = rates.get(f"stage{st.stage}") or {}
        for d in st.dimensions:
            row = [str(st.stage), judge, d.name, f"{d.min}-{d.max}", f"≥ {theta[d.name]}" if d.name in theta else "–",
                   d.question, " ".join(f"[{s}] {d.levels[str(s)]}" for s in d.scores)]
            if build is not None:
                r = (stage_rates.get("dimensions") or {}).get(d.name) or {}
                row += [str(r.get("items_first", 0)), mean(r.get("mean_first")), mean(r.get("mean_final")),
                        percent(r.get("first_attempt")), percent(r.get("after_regeneration"))]
            rows.append(row)
        if build is not None:
            rows.append([str(st.stage), judge, f"all ({st.theta.replace('theta_', 'θ')})", "–", "every criterion",
                         "–", "–", str(stage_rates.get("cases", 0)), "–", "–",
                         percent(stage_rates.get("first_attempt")), percent(stage_rates.get("after_regeneration"))])
    notes = [f"Rubric {rubric.version} (ioa_synth/protocol/rubric.json; level wording is this toolkit's own): an "
             "item passes its stage when it meets θ on every criterion (θ1: every MA point; θ2: the dialogue); a "
             "stage failing θ is regenerated once with the judge's feedback, then discarded (IoA paper, App. B)."]
    if build is not None:
        if split is None:
            notes.append(f"{build}: no build-judge verdict yet (an imported build has none; a build has one once "
                         "a stage is judged): its cells are '–'.")
        else:
            notes.append(f"{build}, {split} split, build judge only: n = items judged at the first attempt (MA "
                         "points, dialogues; cases in an 'all' row); means on the criterion's scale at each case's "
                         "first and final attempt; 'ioa-synth status --out BUILD' shows every split.")
        if judged - {rubric_identity()["sha256"]}:
            notes.append(f"{build} was judged with another rubric than the one in force (its judge's fingerprint): "
                         "the θ shown are today's.")
    title = "Table 7: judge criteria of the build loop (θ1, θ2)"
    return PaperTable("ioa-7", title + (f", {split} split of {build.name}" if split else ""), columns, rows, notes)


register(TableSpec("ioa-7", "Judge criteria of the build loop (θ1, θ2)", "IoA paper, Table 7 (App. B)",
                   (Needs("build", 0, 1, "optional: adds its judged scores and θ pass rates per criterion"),),
                   "none (the rubric in force); a build directory from 'ioa-synth build'", judge_criteria))
register(TableSpec("ioa-15", "Models and thinking settings", "IoA paper, Table 15", (),
                   "none (configs/paper-models.json, or --settings FILE)", models_table,
                   settings=(SettingsFile("models", (".json",), CONFIGS / "paper-models.json", "a models config (.json)"),)))
