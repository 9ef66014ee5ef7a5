"""``label-types``: a scripted type judge (at the HTTP boundary) labels the disagreements of a
records folder, a self-built build (agreement and Cohen's kappa against the planted types,
computed by hand here), meeting sessions; ``report --by type --types`` and ``meeting
report --types`` then fill Tables 12 and 20 on data without types; bad input is one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from ioa_helpers import q

from ioa_synth.testing.type_judge import TypeJudgeResponder as TypeJudge

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"


BY_ID = {"MA1": "definitional", "MA2": "scopal", "MA3": "procedural", "MA4": "criterial"}


def by_id(ma: str) -> str:
    return BY_ID.get(ma, "referential")


def released_data(root: Path) -> Path:
    """``root/test/<domain>/<task>_<i>.json``: the released-format sample and two variants
    (no ``type`` on any point)."""
    data = root / "test"
    base = json.loads((SAMPLE / "software_engineering" / "troubleshooting_001.json").read_text())
    for rel in ("software_engineering/troubleshooting_001", "business/planning_002", "law/coordination_003"):
        path = data / f"{rel}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(base), encoding="utf-8")
    return data


def digest(folder: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())).hexdigest()


def labels_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]


def test_labels_of_a_records_folder(cli, endpoint, tmp_path):
    judge = TypeJudge(by_id)
    endpoint(responder=judge, env="TYPE_JUDGE")
    data = released_data(tmp_path / "data")
    before = digest(data)
    out = tmp_path / "labels"
    res = cli("label-types", data, "--out", out)
    assert res.exit_code == 0, res.output
    labels = labels_of(out)
    assert [(lab["case_id"], lab["ma_id"], lab["type"], lab["planted"]) for lab in labels][:3] == [
        ("business/planning_002", "MA1", "definitional", None), ("business/planning_002", "MA2", "scopal", None),
        ("business/planning_002", "MA3", "procedural", None)]
    assert len(labels) == 9 and {lab["source"] for lab in labels} == {"records"}
    assert digest(data) == before  # the user's records are never written
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agreement"]["pairs"] == 0 and summary["labelled"] == 9
    mix = {r["type"]: r for r in summary["mix"]}
    assert mix["definitional"]["judged"] == 3 and mix["definitional"]["share"] == pytest.approx(1 / 3)
    assert mix["definitional"]["paper_share"] == pytest.approx(0.242)
    assert "Judged type mix (Table 10)" in res.stdout
    assert json.loads((out / "run.json").read_text())["kind"] == "label-types"
    assert len(judge.prompts) == 3  # one call per case
    # a re-run replays the stored replies: no new request
    assert cli("label-types", data, "--out", out).exit_code == 0 and len(judge.prompts) == 3
    # a folder kind of its own: status reads it, a build refuses it
    status = cli("status", "--out", out)
    assert status.exit_code == 0 and "a 'label-types' results folder" in status.stdout
    res = cli("build", "--seeds", data / "x.jsonl", "--split", "test", "--out", out)
    assert res.exit_code == 2 and "is a 'label-types' results folder" in res.stderr


def test_labels_of_a_build_import_folder(cli, endpoint, tmp_path):
    endpoint(responder=TypeJudge(by_id), env="TYPE_JUDGE")
    imported = tmp_path / "imported"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", imported).exit_code == 0
    out = tmp_path / "labels"
    res = cli("label-types", imported, "--out", out, "--json")
    assert res.exit_code == 0, res.output
    labels = labels_of(out)
    assert [(lab["source"], lab["ma_id"], lab["type"], lab["planted"]) for lab in labels] == [
        ("build", "MA1", "definitional", None), ("build", "MA2", "scopal", None), ("build", "MA3", "procedural", None)]
    assert labels[0]["case_id"].endswith("software_engineering/troubleshooting_001")
    assert json.loads(res.stdout)["agreement"]["pairs"] == 0  # imported points were never planted


def test_agreement_and_kappa_on_a_build_with_planted_types(cli, endpoint, seeds_file, tmp_path):
    endpoint()  # the build's scripted generator and judge
    out = tmp_path / "build"
    res = cli("build", "--seeds", seeds_file(4), "--split", "test", "--out", out, "--type-mix", "uniform")
    assert res.exit_code == 0, res.output
    planned = {cid: json.loads(t) for cid, t in q(out, "SELECT case_id, types_json FROM planned_types")}
    accepted = {cid: json.loads(Path(path).read_text())["profiles"]["misalignment_points"]
                for cid, path in q(out, "SELECT case_id, path FROM cases WHERE status = 'accepted'")}
    assert accepted
    judge = TypeJudge(by_id)
    endpoint(responder=judge, env="TYPE_JUDGE")
    labels_dir = tmp_path / "labels"
    res = cli("label-types", out, "--out", labels_dir, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    # by hand: planted (from the build's planned_types) vs judged (the script) per point
    pairs = [(planned[cid][i], by_id(p["id"])) for cid, points in accepted.items() for i, p in enumerate(points)]
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    pa, pj = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_e = sum(pa[t] * pj[t] for t in set(pa) | set(pj)) / n ** 2
    kappa = (p_o - p_e) / (1 - p_e)
    agree = summary["agreement"]
    assert agree["pairs"] == n and agree["agreement"] == pytest.approx(p_o)
    assert agree["kappa"] == pytest.approx(kappa)
    assert 0 < p_o < 1  # MA1 is always definitional: agreement is neither none nor all
    assert json.loads((labels_dir / "summary.json").read_text())["agreement"] == agree
    # the judge never sees the planted type of a point
    assert all("[definitional]" not in p and "planned" not in p for p in judge.prompts)
    table = cli("label-types", out, "--out", labels_dir).stdout
    assert "Judged vs planted type" in table and f"{p_o:.1%}" in table and f"{kappa:.3f}" in table


def test_report_by_type_is_filled_from_labels_on_released_records(cli, endpoint, tmp_path):
    from evaluate.analysis.factory import Case, write_results

    endpoint(responder=TypeJudge(by_id), env="TYPE_JUDGE")
    data_root = tmp_path / "data"
    released_data(data_root)
    labels_dir = tmp_path / "labels"
    # labelled from the folder above the split: case ids 'test/<domain>/...' match the run's '<domain>/...'
    assert cli("label-types", data_root, "--out", labels_dir).exit_code == 0
    mas = [("MA1", None), ("MA2", None), ("MA3", None)]
    results = write_results(tmp_path / "results", [
        Case("software_engineering/troubleshooting_001", mas, ["A:MA1", "A:MA2", "C:not_meaningful"]),
        Case("business/planning_002", mas, ["A:MA1", "B"]),
        Case("law/coordination_003", mas, ["A:MA3"]),
    ])
    untyped = json.loads(cli("report", results, "--by", "type", "--json").stdout)
    assert [g["group"] for g in untyped["groups"]] == ["untyped"]
    res = cli("report", results, "--by", "type", "--types", labels_dir, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    groups = {g["group"]: (g["hit"], g["total"]) for g in report["groups"]}
    assert groups == {"definitional": (2, 3), "scopal": (1, 3), "procedural": (1, 3)}  # Table 12 by hand
    assert report["types"]["labelled_cases"] == 3
    table = cli("report", results, "--by", "type", "--types", labels_dir).stdout
    assert "untyped" not in table and "definitional" in table and "66.7%" in table


@pytest.mark.parametrize("case", ["missing", "evaluate_folder", "out_is_input", "out_in_input", "bad_types", "types_not_labels",
                                  "types_without_by_type"])
def test_bad_input_is_one_error_line(cli, tmp_path, case):
    from evaluate.analysis.factory import Case, write_results

    data = released_data(tmp_path / "data")
    results = write_results(tmp_path / "results", [Case("business/planning_002", [("MA1", None)], ["A:MA1"])])
    before = digest(data)
    args = {
        "missing": ("label-types", tmp_path / "nowhere", "--out", tmp_path / "o"),
        "evaluate_folder": ("label-types", results, "--out", tmp_path / "o"),
        "out_is_input": ("label-types", data, "--out", data),
        "out_in_input": ("label-types", data, "--out", data / "labels"),
        "bad_types": ("report", results, "--by", "type", "--types", tmp_path / "nowhere"),
        "types_not_labels": ("report", results, "--by", "type", "--types", results),
        "types_without_by_type": ("report", results, "--types", results),
    }[case]
    res = cli(*args)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert digest(data) == before and not (tmp_path / "o" / "labels.jsonl").exists()


def test_a_session_folder_copy_keeps_its_labels_apart(cli, endpoint, tmp_path):
    """The same records given twice (two inputs, same case ids) are refused, not mixed."""
    data = released_data(tmp_path / "data")
    twin = tmp_path / "twin" / "test"
    shutil.copytree(data, twin)
    res = cli("label-types", data, twin, "--out", tmp_path / "o")
    assert res.exit_code == 2 and "is in both" in res.stderr and res.stderr.count("\n") == 1


def test_a_reply_without_a_type_fails_its_case_and_a_rerun_labels_it(cli, endpoint, tmp_path):
    judge = TypeJudge(lambda i: "sarcastic" if i == "MA2" else by_id(i))
    endpoint(responder=judge, env="TYPE_JUDGE")
    data = released_data(tmp_path / "data")
    out = tmp_path / "labels"
    res = cli("label-types", data, "--out", out, "--limit", "1")
    assert res.exit_code == 1 and "run the same command again" in res.stderr
    assert [lab["type"] for lab in labels_of(out)] == [None, None, None]
    judge.answer = by_id
    res = cli("label-types", data, "--out", out, "--limit", "1")
    assert res.exit_code == 0, res.output
    assert [lab["type"] for lab in labels_of(out)] == ["definitional", "scopal", "procedural"]


def test_prompts_replace_the_type_judge_template_and_a_resume_without_them_is_refused(cli, endpoint, tmp_path):
    judge = TypeJudge(by_id)
    endpoint(responder=judge, env="TYPE_JUDGE")
    name, mark = "typelabels/type_judge.jinja2", "EDITED: the appendix wording."
    folder = tmp_path / "prompts"
    assert cli("prompts", "export", folder, "--only", name).exit_code == 0
    text = (folder / name).read_text(encoding="utf-8")
    (folder / name).write_text(text.replace("{% block user %}", "{% block user %}" + mark + "\n", 1), encoding="utf-8")
    data = released_data(tmp_path / "data")
    out = tmp_path / "labels"
    res = cli("label-types", data, "--out", out, "--limit", "1", "--prompts", folder)
    assert res.exit_code == 0, res.output
    assert judge.prompts and all(p.startswith(mark) for p in judge.prompts)
    assert list(json.loads((out / "run.json").read_text())["prompts"]) == [name]
    n = len(judge.prompts)
    res = cli("label-types", data, "--out", out, "--limit", "1")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and len(judge.prompts) == n, res.stderr


def test_an_export_folder_or_a_file_is_named_as_such(cli, tmp_path):
    """In a fresh process (as a researcher runs it) an export's folder is named as one, not
    "croissant.json: not an IoA case", and a file is a file, not "no such folder"."""
    import os
    import subprocess
    import sys

    built, hub = tmp_path / "b", tmp_path / "hub"
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", built).exit_code == 0
    assert cli("export", "--out", built, "--to", hub, "--splits", "test").exit_code == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}
    for given, needle in ((hub, "is an 'ioa-synth export' dataset folder"), (ROOT / "README.md", "a file, not a folder")):
        res = subprocess.run([sys.executable, "-m", "ioa_synth", "label-types", str(given), "--out", str(tmp_path / "o")],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert res.returncode == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.stderr
        assert needle in res.stderr, res.stderr
    assert not (tmp_path / "o").exists()
