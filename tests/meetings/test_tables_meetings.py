"""``ioa-synth table ioa-21 / ioa-22`` on three finished sessions probed through the scripted
server (conftest.PLAN, BEST, DISCOVERY); every cell computed by hand below.

Rule any: alpha divergent 2, 1, 2 and validated 1, 1, 2 -> Valid 4/3 = 1.33, Validity 4/5 = 80.0%;
beta divergent 2, 0, 1, validated 2, 0, 1 -> Valid 1.00, Validity 100.0%. Discovery per
participant: alpha 4 everywhere -> 4.00; beta 2, 3, 5 (three participants each) -> 30/9 = 3.33.
Best-set votes alpha 3 + 1 + 0 = 4 (won session 1), beta 0 + 2 + 3 = 5 (won 2 and 3).
Rule majority (more than half of 3, i.e. 2+ valid labels): alpha 0 + 1 + 2 = 3 of 5 -> 1.00, 60.0%;
beta 2 + 0 + 0 = 2 of 3 -> 0.67, 66.7%. Rule unanimous (3 valid): alpha 0 + 0 + 2 -> 0.67, 40.0%;
beta 1 + 0 + 0 -> 0.33, 33.3%.
"""

from __future__ import annotations

import io
import shutil

import polars as pl

from ioa_synth.testing.type_judge import TypeJudgeResponder

from .conftest import A, B


def table(cli, *args) -> dict[str, dict[str, str]]:
    res = cli("table", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    return {r["detector"]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}


def test_meeting_tables(cli, three_sessions):
    t21 = table(cli, "ioa-21", *three_sessions)
    assert t21[A] == {"detector": A, "Valid / session": "1.33", "Validity (%)": "80.0", "PR (%)": "–",
                      "discovery (1-5)": "4.00", "willingness (1-5)": "3.00", "best-set votes": "4", "sessions won": "1"}
    assert (t21[B]["Valid / session"], t21[B]["Validity (%)"], t21[B]["discovery (1-5)"]) == ("1.00", "100.0", "3.33")
    assert (t21[B]["best-set votes"], t21[B]["sessions won"]) == ("5", "2")

    t22 = table(cli, "ioa-22", *three_sessions)
    assert [t22[A][f"{h} ({r})"] for r in ("any", "majority", "unanimous") for h in ("Valid", "Validity %")] == [
        "1.33", "80.0", "1.00", "60.0", "0.67", "40.0"]
    assert [t22[B][f"{h} ({r})"] for r in ("any", "majority", "unanimous") for h in ("Valid", "Validity %")] == [
        "1.00", "100.0", "0.67", "66.7", "0.33", "33.3"]


def test_unfinished_or_repeated_session(cli, three_sessions, probed):
    copy = shutil.copytree(three_sessions[0], three_sessions[0].parent / "copy")
    res = cli("table", "ioa-21", three_sessions[0], copy)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "again" in res.stderr
    fresh = probed("fresh", seed=9)  # probed, nobody answered yet
    res = cli("table", "ioa-22", *three_sessions, fresh)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "not finished" in res.stderr


def test_types_per_detector_with_label_types(cli, endpoint, three_sessions, tmp_path):
    # the judge calls each set's question 1 'referential', the others 'procedural'. Validated
    # (rule any), conftest.PLAN: alpha q1, q1, q1 + q2 -> referential 3, procedural 1;
    # beta q1 + q3, -, q2 -> referential 1, procedural 2.
    endpoint(responder=TypeJudgeResponder(lambda i: "referential" if i.endswith("-1") else "procedural"),
             env="TYPE_JUDGE")
    labels = tmp_path / "labels"
    assert cli("label-types", *three_sessions, "--out", labels).exit_code == 0
    rows = {r["type"]: r for r in pl.read_csv(io.StringIO(cli("table", "ioa-20", *three_sessions, labels, "--format",
                                                              "csv").stdout), infer_schema=False).to_dicts()}
    assert rows["referential"] == {"type": "referential", A: "3", B: "1", "all": "4"}
    assert rows["procedural"] == {"type": "procedural", A: "1", B: "2", "all": "3"}
    res = cli("table", "ioa-20", *three_sessions)  # the labels folder left out
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "ioa-20 needs 1 × 'label-types'" in res.stderr
