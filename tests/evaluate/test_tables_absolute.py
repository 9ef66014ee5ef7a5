"""``ioa-synth table ioa-2 | ioa-3 | ioa-19 | ioa-5`` on evaluate folders made by real runs
against the scripted servers (App. E.1's three case studies, as test_tables_evaluate.py);
every expected cell is computed by hand below.

Per case, by the study the prober's server answers with (eval_helpers.py):
- case 1 with STUDY_1: P .8, R 1, F1 .8889, K 5; with STUDY_3: 0 / 0 / 0, K 12
- case 2 with STUDY_2: P .5, R .5, F1 .5, K 5; with STUDY_3: 0 / 0 / 0, K 12
- case 3 (STUDY_3 always): 0 / 0 / 0, K 12

So STUDY_1 + STUDY_2 (runs A and C): P (.8 + .5 + 0)/3 = 43.3, R 50.0, F1 (.8889 + .5)/3 =
46.3, K 22/3 = 7.3; STUDY_1 only: P .8/3 = 26.7, R 1/3 = 33.3, F1 .8889/3 = 29.6, K 29/3 =
9.7; STUDY_3 only: 0.0 / 0.0 / 0.0, K 12.0.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil

import polars as pl

from .eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study
from .test_acceptance import data  # noqa: F401  (the three cases, a fixture)
from .test_tables_evaluate import runs  # noqa: F401  (A: prober-a public; C: prober-c --access private)

NAME = "evaluate/prober_mcq.jinja2"
SCORES = {"dialogues": "3", "P": "43.3", "R": "50.0", "F1": "46.3", "K": "7.3"}


def table(cli, *args) -> tuple[list[dict[str, str]], str]:
    """The rows (CSV) and the Markdown notes of ``table *args``."""
    res = cli("table", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    md = cli("table", *args, "--format", "md").stdout
    return pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts(), md


def digest(folder) -> str:
    """The prompts' digest by hand: sha256 over run.json's template hashes, first 8 hex."""
    templates = json.loads((folder / "run.json").read_text())["fingerprint_parts"]["templates"]
    return hashlib.sha256(json.dumps(templates, sort_keys=True).encode()).hexdigest()[:8]


def test_absolute_tables_label_rows_by_what_differs(cli, trio, runs, data, tmp_path):  # noqa: F811
    a, c = runs
    # A and C differ in the prober's model and --access only: the labels say just that
    rows, md = table(cli, "ioa-2", a, c)
    assert rows == [{"run": "prober prober-a; access public", **SCORES},
                    {"run": "prober prober-c; access private", **SCORES}]
    assert "Same in every row: simulator simulator-model; filter validity_filter-model; mode mcq;" in md
    assert f"prompts built-in {digest(a)}; questions generated; rollouts 1;" in md and "data test;" in md

    # a run with an edited prober template from a folder 'paper-prompts': the prompts differ
    trio(Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}), models={"prober": "prober-a"})
    prompts = tmp_path / "paper-prompts"
    assert cli("prompts", "export", prompts, "--only", NAME).exit_code == 0
    path = prompts / NAME
    path.write_text(path.read_text(encoding="utf-8").replace("{% endblock %}", "\nAsk plainly.{% endblock %}"),
                    encoding="utf-8")
    edited = tmp_path / "edited"
    assert cli("evaluate", "--data", data, "--out", edited, "--prompts", prompts).exit_code == 0
    assert digest(edited) != digest(a)
    rows, md = table(cli, "ioa-3", a, edited)
    assert rows == [{"run": f"prompts built-in {digest(a)}", **SCORES},
                    {"run": f"prompts paper-prompts {digest(edited)}", **SCORES}]
    assert rows[0]["run"] != rows[1]["run"] and "Same in every row: prober prober-a;" in md

    # one folder: nothing differs, the row is named by its prober (as ioa-1)
    rows, md = table(cli, "ioa-19", c)
    assert rows == [{"run": "prober-c", **SCORES}] and md.startswith("## Table 19")
    # the same setup twice: the folders' names tell the rows apart
    copy = shutil.copytree(a, tmp_path / "again")
    rows, _ = table(cli, "ioa-2", a, copy)
    assert [r["run"] for r in rows] == ["prober-a (A)", "prober-a (again)"]

    res = cli("table", "ioa-19", a, tmp_path / "nowhere")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "not a folder" in res.stderr


def test_training_table_rows_are_the_served_checkpoints(cli, trio, data, tmp_path):  # noqa: F811
    # three checkpoints served under names saying their training; the GRPO one also ran with
    # three rollouts, so its label says so
    outs = []
    for name, study, extra in (("qwen3-8b", Study(STUDY_3), ()),
                               ("qwen3-8b-sft", Study(STUDY_3, {"STUDY1": STUDY_1}), ()),
                               ("qwen3-8b-sft-grpo", Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}),
                                ("--rollouts", "3"))):
        trio(study, models={"prober": name})
        outs.append(tmp_path / name)
        res = cli("evaluate", "--data", data, "--out", outs[-1], *extra)
        assert res.exit_code == 0, res.output
    rows, md = table(cli, "ioa-5", *outs)
    # 3 dialogues: GRPO's F1 differences (.8889, .5, 0) are all <= 0 in (1/3)^3 of the
    # resamples, p ~ 2 * .037 > .05: no mark
    assert rows == [
        {"prober": "qwen3-8b (rollouts 1)", "dialogues": "3", "P": "0.0", "R": "0.0", "F1": "0.0", "K": "12.0"},
        {"prober": "qwen3-8b-sft (rollouts 1)", "dialogues": "3", "P": "26.7", "R": "33.3", "F1": "29.6", "K": "9.7"},
        {"prober": "qwen3-8b-sft-grpo (rollouts 3)", **SCORES}]
    assert md.startswith("## Table 5") and "Same in every row: simulator simulator-model;" in md
    rows, _ = table(cli, "ioa-5", outs[0], outs[1])  # nothing but the prober differs: the served names alone
    assert [r["prober"] for r in rows] == ["qwen3-8b", "qwen3-8b-sft"]
    # a folder whose run.json records no prober model (an older release): its name stands in
    old = shutil.copytree(outs[1], tmp_path / "sft-old")
    manifest = json.loads((old / "run.json").read_text())
    del manifest["components"]["prober"]["model"]
    (old / "run.json").write_text(json.dumps(manifest))
    rows, _ = table(cli, "ioa-5", outs[0], old)
    assert [r["prober"] for r in rows] == ["qwen3-8b", "sft-old"] and rows[1]["F1"] == "29.6"
