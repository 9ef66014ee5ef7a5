"""The prober templates live in ioa_synth/probing and keep their names ``evaluate/<file>``:
importing ioa_synth.probing alone (as collab and meetings do) makes them renderable without
loading ioa_synth.evaluate, and with evaluate imported the ``evaluate/`` namespace is the one
the release's results folders name in their setup fingerprints."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests" / "fixtures" / "folders_r0" / "data" / "law" / "planning_000.json"
PACKAGED = ROOT / "ioa_synth" / "probing" / "templates"
PROBER_TEMPLATES = ("evaluate/_macros.jinja2", "evaluate/prober_ambiguity_mcq.jinja2",
                    "evaluate/prober_ambiguity_select.jinja2", "evaluate/prober_direct.jinja2",
                    "evaluate/prober_mcq.jinja2")

#: Run in a fresh interpreter: only ioa_synth.probing is imported, and the mcq prober's
#: first prompt of a case (read with the probing package's own case model) is rendered.
ONLY_PROBING = """
import json, sys
from pathlib import Path
from ioa_synth.core.templates import template_names
from ioa_synth.probing.cases import EvalCase, EvalCaseFile
from ioa_synth.probing.probers import McqProber, first_prompt

parsed = EvalCaseFile.model_validate_json(Path(sys.argv[1]).read_bytes())
case = EvalCase(case_id="law/planning_000", source_file="law/planning_000.json", domain="law", task_type="planning",
                sha256="0" * 64, profiles=parsed.profiles, turns=parsed.dialogue.turns)
prompt = first_prompt(McqProber.template, case, "public")
print(json.dumps({"evaluate": sorted(m for m in sys.modules if m.split(".")[:2] == ["ioa_synth", "evaluate"]),
                  "names": [n for n in template_names() if n.startswith("evaluate/")],
                  "messages": prompt.messages, "sha256": prompt.template_sha256}))
"""


def test_importing_probing_alone_renders_the_prober_templates_without_evaluate():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", ONLY_PROBING, str(CASE)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout)
    assert got["evaluate"] == []  # ioa_synth.evaluate was not imported
    assert got["names"] == list(PROBER_TEMPLATES)
    system, user = got["messages"]
    assert system["role"] == "system" and system["content"]
    assert user["role"] == "user" and "spoken line 1 about the ticket backlog" in user["content"]
    assert got["sha256"] == hashlib.sha256((PACKAGED / "prober_mcq.jinja2").read_bytes()).hexdigest()


def test_the_evaluate_namespace_keeps_the_names_of_the_release_s_fingerprints():
    import ioa_synth.evaluate  # noqa: F401 - registers the simulator's and the filter's templates too
    from ioa_synth.core.templates import all_template_hashes, template_renders

    hashes = all_template_hashes("evaluate")
    run = json.loads((ROOT / "tests" / "fixtures" / "folders_r0" / "evaluate" / "run.json").read_text())
    released = run["fingerprint_parts"]["templates"]
    assert set(released) <= set(hashes) and list(hashes) == sorted(hashes)
    for name in PROBER_TEMPLATES:  # the probers' files are those of ioa_synth/probing/templates
        assert hashes[name] == hashlib.sha256((PACKAGED / name.split("/", 1)[1]).read_bytes()).hexdigest()
    assert template_renders("evaluate/prober_mcq.jinja2") == "prober (also collab and meeting detectors)"
    assert template_renders("evaluate/simulator.jinja2") == "simulator"
