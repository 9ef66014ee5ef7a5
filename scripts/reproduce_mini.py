#!/usr/bin/env python
"""Every implemented ``ioa-synth table`` id, end to end at toy scale against scripted servers.

What runs (in-process, the real CLI, real HTTP to local scripted OpenAI-compatible servers;
the scripted studies are the test suite's, so the numbers are the hand-computed ones of
tests/*/test_tables_*.py):

- ``evaluate`` twice on the three App. E.1 case studies (prober ``prober-a`` with public
  access, ``prober-c`` with ``--access private``), a permuted re-run of the first, a
  ``--rollouts 3`` re-run of it, and ``label-types`` on their data;
- ``evaluate --mode wordnet|ambiguity|mcq`` on one dialogue (the lexical baselines; wordnet
  only when WordNet is installed);
- three live-meeting sessions of the shipped sample transcript, probed by two detectors and
  answered/labelled by three participants each, and ``label-types`` on them;
- ``collab run`` on the shipped hidden-profile scenarios (discussion, self-reflection, MCQ);
- ``belief run`` on two items with k = 0 and 1, and ``belief reask`` of its own-answer and
  group-conclusion variants at steps 1 and 3;
- ``build import`` of the shipped released-format sample, two annotators' scores imported,
  and ``audit``;
- ``train sft`` of the first evaluate run (its test split, ``--allow-split``); the settings
  tables (the rubric, configs/paper-models.json, configs/verl-grpo.yaml and
  configs/paper-reward.json) need no run.

Then ``ioa-synth table ID ...`` for every implemented id, written to ``OUT/tables/<id>.<ext>``
(a figure id's PNG beside it, ``<id>.png``) and printed. Exit status 0 when every id rendered,
1 otherwise (each failure named). Needs a
checkout of the repository (it uses tests/'s scripted studies).

    python scripts/reproduce_mini.py --out /tmp/mini [--format md|csv|latex|term]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

#: Suffix of the written file per --format.
SUFFIX = {"term": "txt", "md": "md", "csv": "csv", "latex": "tex"}


class Mini:
    """The toy runs: each method makes its folders under ``root`` and returns them by role."""

    def __init__(self, root: Path, stack: ExitStack) -> None:
        from typer.testing import CliRunner

        from ioa_synth.cli import app

        self.root, self.stack, self.runner, self.app = root, stack, CliRunner(), app

    def cli(self, *args: object) -> str:
        res = self.runner.invoke(self.app, [str(a) for a in args], catch_exceptions=False)
        if res.exit_code != 0:
            raise RuntimeError(f"ioa-synth {' '.join(map(str, args[:2]))}: exit {res.exit_code}: {res.stderr.strip()}")
        return res.stdout

    def serve(self, responder, env: str = "OPENAI", models: list[str] | None = None) -> None:
        from ioa_synth.testing.scripted_server import ScriptedServer

        server = self.stack.enter_context(ScriptedServer(responder, models=models))
        os.environ[f"{env}_BASE_URL"] = server.base_url
        os.environ[f"{env}_API_KEY"] = "sk-mini-0000"

    def evaluate(self) -> dict[str, Path]:
        from dataclasses import replace

        from evaluate.eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study, released_case, toolkit_case, write_case
        from ioa_synth.testing.type_judge import TypeJudgeResponder

        data = self.root / "data" / "test"
        typed = toolkit_case("business", "troubleshooting", n_mas=4)
        typed["profiles"]["members"][0]["name"] += " STUDY1"
        write_case(data, "business/troubleshooting_010.json", typed)
        write_case(data, "law/planning_003.json", released_case(tag=" STUDY2"))
        write_case(data, "ml_research/planning_000.json", toolkit_case("ml_research", "planning", n_mas=2))
        out = {}
        for name, access in (("prober-a", "public"), ("prober-c", "private")):
            study = Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})
            for comp, responder in (("prober", study.prober), ("simulator", study.simulator),
                                    ("validity_filter", study.filter)):
                self.serve(responder, comp.upper(), [name if comp == "prober" else f"{comp}-model"])
            out[access] = self.root / f"evaluate-{access}"
            self.cli("evaluate", "--data", data, "--out", out[access], "--access", access)
        # a permuted re-run of the public run in which P2 answers two questions differently
        s1b = [replace(q, m2="B") if q.stem == "S1 q5" else q for q in STUDY_1]
        s2b = [replace(q, m2="A") if q.stem == "S2 q1" else q for q in STUDY_2]
        study = Study(STUDY_3, {"STUDY1": s1b, "STUDY2": s2b})
        for comp, responder in (("simulator", study.simulator), ("validity_filter", study.filter)):
            self.serve(responder, comp.upper(), [f"{comp}-model"])
        out["permuted"] = self.root / "evaluate-permuted"
        self.cli("evaluate", "--data", data, "--out", out["permuted"], "--permute-seed", 7, "--questions-from",
                 out["public"])
        # three rollouts in which P2's second rollout answers every question otherwise
        study = Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})
        study.flips = {"M2": 2}
        for comp, responder in (("simulator", study.simulator), ("validity_filter", study.filter)):
            self.serve(responder, comp.upper(), [f"{comp}-model"])
        out["rollouts"] = self.root / "evaluate-rollouts"
        self.cli("evaluate", "--data", data, "--out", out["rollouts"], "--rollouts", 3, "--questions-from",
                 out["public"])
        self.serve(TypeJudgeResponder(lambda i: "referential" if i == "MA1" else "other"), "TYPE_JUDGE")
        out["types"] = self.root / "types-data"
        self.cli("label-types", data, "--out", out["types"])
        return out

    def baselines(self) -> list[Path]:
        """The lexical baselines on test_wordnet_baseline.py's dialogue: ``--mode wordnet`` (when
        WordNet is installed), ``ambiguity`` picking the same four words, and ``mcq``."""
        from evaluate.eval_helpers import write_case
        from evaluate.test_modes import ModeStudy
        from evaluate.test_wordnet_baseline import QUESTIONS, wordnet_case
        from ioa_synth.probing.wordnet import WordNetMissing, load_wordnet

        data = self.root / "data-lexical"
        write_case(data, "business/planning_000.json", wordnet_case())
        modes = ["wordnet", "ambiguity", "mcq"]
        try:
            load_wordnet()
        except WordNetMissing as exc:
            print(f"note: no --mode wordnet run ({exc})", file=sys.stderr)
            modes.remove("wordnet")
        study = ModeStudy(QUESTIONS, expressions=[[("bank", 2), ("rent", 1), ("lease", 3), ("car", 1)]])
        for comp, responder in (("prober", study.prober), ("simulator", study.simulator),
                                ("validity_filter", study.filter)):
            self.serve(responder, comp.upper(), [f"{comp}-model"])
        outs = []
        for mode in modes:
            outs.append(self.root / f"evaluate-{mode}")
            self.cli("evaluate", "--data", data, "--out", outs[-1], "--mode", mode, "--workers", 1)
        return outs

    def meetings(self) -> dict[str, list[Path]]:
        from meetings.conftest import BEST, DISCOVERY, PLAN, SAMPLES, MeetingResponder, fill, write_detectors
        from ioa_synth.testing.type_judge import TypeJudgeResponder

        self.serve(MeetingResponder(), models=["model-one", "model-two"])
        sessions = []
        for k in range(3):
            folder = self.root / f"session{k}"
            self.cli("meeting", "import", SAMPLES / "sample.vtt", "--out", folder)
            self.cli("meeting", "probe", folder, *write_detectors(self.root / "detectors"), "--seed", k)
            fill(folder, PLAN[k], BEST[k], DISCOVERY[k])
            sessions.append(folder)
        self.serve(TypeJudgeResponder(lambda i: "referential" if i.endswith("-1") else "procedural"), "TYPE_JUDGE")
        self.cli("label-types", *sessions, "--out", self.root / "types-meetings")
        return {"sessions": sessions, "types": [self.root / "types-meetings"]}

    def collab(self) -> Path:
        from collab.helpers import HP, detector_config, hp_tasks
        from ioa_synth.testing.collab_scripted import CollabScript

        tasks = hp_tasks()
        self.serve(CollabScript(tasks=tasks, diverge={tasks[0].task_id, tasks[1].task_id}, flag={tasks[2].task_id}))
        out = self.root / "collab-hp"
        self.cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
                 "discussion,self-reflection,mcq:probe", "--detector", f"probe={detector_config(self.root)}")
        return out

    def belief(self) -> Path:
        from belief.helpers import LABELS, STANCES, sample_items
        from ioa_synth.testing.belief_scripted import BeliefScript

        self.serve(BeliefScript(agents=4, labels=LABELS, stances=STANCES))
        out = self.root / "belief"
        self.cli("belief", "run", "--agents", "4", "--attackers", "0,1", "--rounds", "3", "--items",
                 sample_items(self.root), "--out", out)
        for variant in ("own", "group"):  # Tables 5 and 6: the probe variants asked again from the log
            self.cli("belief", "reask", out, "--variant", variant, "--steps", "1,3")
        return out

    def sft(self, teacher: Path) -> Path:
        """``train sft`` of a teacher run (the App. E.1 cases, a test split: ``--allow-split``)."""
        out = self.root / "sft"
        self.cli("train", "sft", "--results", teacher, "--out", out, "--allow-split")
        return out

    def annotated_build(self) -> Path:
        import shutil

        import polars as pl
        from ioa_helpers import rescoring
        from annotate.test_annotate_judge import AUDIT_MODEL, SAMPLE, harsher

        src = self.root / "ioa-suite" / "data"
        shutil.copytree(SAMPLE, src / "test")
        out = self.root / "build"
        self.cli("build", "import", src, "--split", "test", "--out", out)
        self.cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "0",
                 "--format", "csv")
        items = pl.read_csv(out / "annotation" / "test" / "items.csv", infer_schema=False)
        point, dialogue = pl.col("stage") == "1", pl.col("stage") == "2"
        first = items.filter(point)["item_id"].to_list()[0]
        for name, sub, nat in (("ann_a", "2", "3"), ("ann_b", "3", "2")):
            filled = items.with_columns(
                *[pl.when(point).then(pl.lit("2")).otherwise(pl.lit("")).alias(d) for d in ("specificity", "believability")],
                *[pl.when(dialogue).then(pl.lit("2")).otherwise(pl.lit("")).alias(d)
                  for d in ("implicitness", "coverage", "profile_consistency")],
                pl.when(dialogue).then(pl.lit(nat)).otherwise(pl.lit("")).alias("naturalness"),
                pl.when(pl.col("item_id") == first).then(pl.lit(sub)).when(point).then(pl.lit("2"))
                .otherwise(pl.lit("")).alias("subtlety"))
            path = self.root / f"{name}.csv"
            filled.write_csv(path)
            self.cli("annotate", "import", path, "--out", out, "--annotator", name)
        self.serve(rescoring(AUDIT_MODEL, harsher), "AUDIT_JUDGE", [AUDIT_MODEL])
        self.cli("audit", "--out", out, "--split", "test")
        return out


def folders_per_id(mini: Mini) -> dict[str, list[Path]]:
    """The folders each implemented id is rendered from."""
    ev, lexical, meet = mini.evaluate(), mini.baselines(), mini.meetings()
    collab, belief, build = mini.collab(), mini.belief(), mini.annotated_build()
    return {
        "ioa-1": [ev["public"], ev["private"]],
        "ioa-2": [ev["public"], ev["private"]],
        "ioa-3": [ev["public"], ev["rollouts"]],
        "ioa-5": [ev["public"], ev["private"]],
        "ioa-6": [collab],
        "ioa-7": [],
        "ioa-9": [build],
        "ioa-10": [ev["public"], ev["types"]],
        "ioa-11": lexical,
        "ioa-12": [ev["public"], ev["private"], ev["types"]],
        "ioa-13": [ev["rollouts"]],
        "ioa-14": [ev["public"], ev["permuted"]],
        "ioa-15": [],
        "ioa-16": [ev["private"], ev["public"]],
        "ioa-17": [mini.sft(ev["public"])],
        "ioa-18": [],
        "ioa-19": [ev["public"]],
        "ioa-20": [*meet["sessions"], *meet["types"]],
        "ioa-21": meet["sessions"],
        "ioa-22": meet["sessions"],
        "ioa-23": [collab],
        "ioa-24": [collab],
        "belief-1": [belief],
        "belief-3": [belief],
        "belief-5": [belief],
        "belief-6": [belief],
        "belief-7": [belief],
        "belief-fig4": [belief],
    }


def reproduce(out: Path, fmt: str = "md", echo=print) -> dict[str, Path]:
    """Make the toy runs under ``out/runs`` and write every implemented id to
    ``out/tables/<id>.<ext>``; return the written files by id.

    Raises:
        RuntimeError: a run or a table failed, or an implemented id has no folders here.
    """
    from ioa_synth.tables.registry import all_specs

    runs, tables = out / "runs", out / "tables"
    runs.mkdir(parents=True, exist_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    try:
        with ExitStack() as stack:
            mini = Mini(runs, stack)
            per_id = folders_per_id(mini)
            missing = [s.table_id for s in all_specs() if s.implemented and s.table_id not in per_id]
            if missing:
                raise RuntimeError(f"implemented ids with no toy folders in this script: {', '.join(missing)}")
            written = {}
            for table_id, folders in per_id.items():
                path = tables / f"{table_id}.{SUFFIX[fmt]}"
                mini.cli("table", table_id, *folders, "--format", fmt, "--out", path, "--overwrite")
                written[table_id] = path
                echo(path.read_text(encoding="utf-8"))
            return written
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the toy runs and the tables")
    parser.add_argument("--format", default="md", choices=tuple(SUFFIX), help="Table format (default md)")
    args = parser.parse_args(argv)
    try:
        written = reproduce(args.out, args.format)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} tables into {args.out / 'tables'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
