"""``ioa-synth table`` for the settings tables of the IoA paper: the build judges' criteria and
θ (ioa-7, Table 7) from the rubric in force and, optionally, a build made against a scripted
judge; the models and thinking settings (ioa-15, Table 15) and the GRPO settings with the
reward's models (ioa-18, Table 18) from configs/ or files given with --config. Expected cells
are worked out by hand below."""

from __future__ import annotations

import io
import json

import duckdb
import polars as pl
import pytest
from ioa_helpers import build, one_line_error

from ioa_synth.protocol.rubric import rubric_sha256


def table(cli, *args) -> list[dict[str, str]]:
    res = cli("table", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()


def test_ioa7_lists_the_rubric_criteria_with_their_theta(cli):
    rows = {r["criterion"]: r for r in table(cli, "ioa-7")}
    # θ1 = subtlety 3, specificity 2, believability 2; θ2 = naturalness 3, implicitness 3, coverage 2,
    # profile_consistency 3 (PROTOCOL §3-§4), each the top of its scale
    assert list(rows) == ["subtlety", "specificity", "believability", "naturalness", "implicitness", "coverage",
                          "profile_consistency"]
    assert (rows["subtlety"]["stage"], rows["subtlety"]["scale"], rows["subtlety"]["θ"]) == ("1", "1-3", "≥ 3")
    assert (rows["coverage"]["stage"], rows["coverage"]["scale"], rows["coverage"]["θ"]) == ("2", "1-2", "≥ 2")
    assert rows["specificity"]["judge"].startswith("J_participants (per misalignment point)")
    assert rows["implicitness"]["judge"] == "J_dialogue (per dialogue)"
    assert rows["implicitness"]["levels"].startswith("[3] ") and "[1] " in rows["implicitness"]["levels"]
    assert "n" not in rows["subtlety"]  # no build given: no score columns


def test_ioa7_with_a_build_adds_its_judged_scores(cli, endpoint, seeds_file, tmp_path):
    # tests/build/test_status.py's build, one worker so the script hits cases in order: case 1 fails stage 1
    # twice (discarded), case 2 fails it once, cases 3-4 pass; case 4's dialogue fails once.
    # A low stage-1 verdict gives subtlety 1 to both MA points, a low stage-2 one naturalness 1.
    endpoint({"stage1_judge": ["low", "low", "low"], "stage2_judge": ["ok", "ok", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(4), out)
    rows = {r["criterion"]: r for r in table(cli, "ioa-7", out)}
    sub = rows["subtlety"]
    # first attempts: 8 points, cases 1-2 at 1 and cases 3-4 at 3: (4 * 1 + 4 * 3) / 8 = 2.00, 4/8 meet θ;
    # final attempts: case 1 still 1 (2 points), the others 3: (2 + 6 * 3) / 8 = 2.50, 6/8
    assert (sub["n"], sub["mean (first)"], sub["mean (final)"]) == ("8", "2.00", "2.50")
    assert (sub["meets θ first attempt (%)"], sub["meets θ after regeneration (%)"]) == ("50.0", "75.0")
    assert (rows["specificity"]["mean (first)"], rows["specificity"]["meets θ first attempt (%)"]) == ("2.00", "100.0")
    nat = rows["naturalness"]  # dialogues of cases 2-4: 3, 3, 1 first (7/3), all 3 after regeneration
    assert (nat["n"], nat["mean (first)"], nat["mean (final)"], nat["meets θ first attempt (%)"]) == \
        ("3", "2.33", "3.00", "66.7")
    # θ as a whole: stage 1, 2 of 4 cases at once, 3 of 4 in the end; stage 2, 2 of 3, then 3 of 3
    s1, s2 = rows["all (θ1)"], rows["all (θ2)"]
    assert (s1["n"], s1["meets θ first attempt (%)"], s1["meets θ after regeneration (%)"]) == ("4", "50.0", "75.0")
    assert (s2["n"], s2["meets θ first attempt (%)"], s2["meets θ after regeneration (%)"]) == ("3", "66.7", "100.0")
    md = cli("table", "ioa-7", out, "--format", "md").stdout
    assert "test split" in md and "another rubric" not in md
    # a build judged under an earlier rubric (its judge's fingerprint names another digest) is said to be
    sha = rubric_sha256()
    with duckdb.connect(str(out / "catalog.duckdb")) as con:
        con.execute("UPDATE runs SET fingerprint_json = replace(fingerprint_json, ?, ?)", [sha, "0" * 64])
    md = cli("table", "ioa-7", out, "--format", "md").stdout
    assert "judged with another rubric than the one in force" in md


def test_ioa7_refuses_two_builds_and_other_folders(cli, tmp_path):
    one_line_error(cli("table", "ioa-7", tmp_path), "a folder of no known kind; ioa-7 needs 0-1 ×")
    res = cli("table", "ioa-7", "--settings", tmp_path / "x.json")
    one_line_error(res, "ioa-7 reads no settings file (--settings)")


def test_ioa15_from_the_paper_models_file(cli):
    rows = {r["component"]: r for r in table(cli, "ioa-15")}
    assert list(rows) == ["generator", "judge", "audit_judge", "prober", "simulator", "validity_filter"]
    assert (rows["judge"]["model"], rows["judge"]["temperature"], rows["judge"]["thinking"]) == \
        ("gpt-5.4", "0.3", "off (reasoning_effort none)")
    assert (rows["simulator"]["model"], rows["simulator"]["temperature"], rows["simulator"]["thinking"]) == \
        ("gemini-3-flash-preview", "0.2", "provider default")
    assert rows["audit_judge"]["role"] == "cross-family audit judge (App. B.3)"


def test_ioa15_from_a_given_config(cli, tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({
        "_comment": "a Qwen3 prober with thinking off and a judge whose temperature is not sent",
        "prober": {"model": "qwen3-8b", "request_options": {"extra_body": {"chat_template_kwargs":
                                                                            {"enable_thinking": False}}}},
        "judge": {"model": "gpt-5.4", "temperature": None, "request_options": {"reasoning_effort": "high"}},
        "type_judge": {}}))
    rows = {r["component"]: r for r in table(cli, "ioa-15", "--settings", path)}
    assert list(rows) == ["judge", "prober", "type_judge"]  # the toolkit's order of components
    # the prober's temperature is not in the file: its default, 0.7, said to be one
    assert (rows["prober"]["temperature"], rows["prober"]["thinking"]) == ("0.7 (default)", "off (enable_thinking false)")
    assert (rows["judge"]["temperature"], rows["judge"]["thinking"]) == ("not sent", "reasoning_effort high")
    assert (rows["type_judge"]["model"], rows["type_judge"]["temperature"]) == ("– (the endpoint's own)", "0 (default)")


@pytest.mark.parametrize("content, needle", [
    ('{"prober": {"modle": "x"}}', 'prober.modle: unknown key (did you mean "model"?)'),
    ("{not json", "mine.json"),
    ('{"_comment": "nothing"}', "sets no component"),
])
def test_ioa15_bad_config_is_one_line(cli, tmp_path, content, needle):
    path = tmp_path / "mine.json"
    path.write_text(content)
    one_line_error(cli("table", "ioa-15", "--settings", path), needle)


def test_settings_tables_refuse_folders_and_other_files(cli, tmp_path):
    one_line_error(cli("table", "ioa-15", tmp_path), "ioa-15 is not made from results folders; give its settings "
                                                     "with --settings FILE")
    one_line_error(cli("table", "ioa-15", "--settings", tmp_path / "a.yaml"), "ioa-15 reads a models config (.json)")
    one_line_error(cli("table", "ioa-15", "--settings", tmp_path / "gone.json"), "gone.json: no such file")
    one_line_error(cli("table", "ioa-1", tmp_path, "--settings", tmp_path / "a.json"), "ioa-1 reads no settings file")
    (tmp_path / "a.yaml").write_text("data: {}\n")
    (tmp_path / "b.yml").write_text("data: {}\n")
    one_line_error(cli("table", "ioa-18", "--settings", tmp_path / "a.yaml", "--settings", tmp_path / "b.yml"),
                   "a second verl GRPO settings (.yaml)")
    one_line_error(cli("table", "--list", "--settings", tmp_path / "a.yaml"), "--list takes no ID, RESULTS or --settings")


def test_ioa18_from_the_shipped_files(cli):
    rows = {r["setting"]: r for r in table(cli, "ioa-18")}
    # App. D.6 / PROTOCOL §7: batch 24, G = 5, lr 1e-6, 2 epochs, 100 steps, 4,096 tokens each way
    for setting, value in (("dialogues per step (batch)", "24"), ("question sets per dialogue (group size G)", "5"),
                           ("learning rate", "1e-6"), ("epochs", "2"), ("steps", "100"),
                           ("max prompt length (tokens)", "4096"), ("advantages normalised within the group", "yes"),
                           ("GPUs (nodes × per node)", "1 × 8")):
        assert rows[setting]["value"] == value, setting
    assert rows["learning rate"]["paper"] == "1e-6" and rows["steps"]["from"] == "verl-grpo.yaml: trainer.total_training_steps"
    assert rows["train / validation prompts"]["value"] == "not set / not set"  # given on verl's command line
    assert (rows["reward simulator: model"]["value"], rows["reward simulator: thinking"]["value"]) == \
        ("gemini-3-flash-preview", "reasoning_effort minimal")
    assert (rows["reward validity_filter: model"]["value"], rows["reward validity_filter: temperature"]["value"]) == \
        ("gpt-5-mini", "0.2")
    assert rows["reward simulator: rollouts per participant"]["value"] == "1"


def test_ioa18_from_given_files(cli, tmp_path):
    verl = tmp_path / "mine.yml"
    verl.write_text("data:\n  train_batch_size: 48\n  val_files: grpo/val.parquet\n"
                    "actor_rollout_ref:\n  actor:\n    optim:\n      lr: 3.0e-7\n")
    reward = tmp_path / "reward.json"
    reward.write_text(json.dumps({"simulator": {"model": "qwen3-30b", "temperature": 0.0}}))
    rows = {r["setting"]: r for r in table(cli, "ioa-18", "--settings", reward, "--settings", verl)}
    assert (rows["dialogues per step (batch)"]["value"], rows["dialogues per step (batch)"]["paper"]) == ("48", "24")
    assert rows["learning rate"]["value"] == "3e-7" and rows["epochs"]["value"] == "not set"
    assert rows["train / validation prompts"]["value"] == "not set / grpo/val.parquet"
    assert (rows["reward simulator: model"]["value"], rows["reward simulator: temperature"]["value"]) == ("qwen3-30b", "0")
    assert rows["reward validity_filter: model"]["value"] == "not set"
    # only the YAML given: the reward's models from configs/paper-reward.json
    rows = {r["setting"]: r for r in table(cli, "ioa-18", "--settings", verl)}
    assert rows["reward validity_filter: model"]["value"] == "gpt-5-mini"


@pytest.mark.parametrize("content, needle", [
    ("data: [unclosed\n", "not YAML (line"),
    ("- a list\n", "its top level is not a mapping"),
    ("model: {path: x}\n", "no data, trainer or algorithm section"),
])
def test_ioa18_bad_verl_file_is_one_line(cli, tmp_path, content, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    one_line_error(cli("table", "ioa-18", "--settings", path), needle)
