"""IoA paper Table 9 (App. B.3): human scores against the LLM judge per rubric dimension,
made from a build directory with imported annotations by ``annotate report``'s code
(:func:`ioa_synth.annotate.report.annotation_report`: the two annotators averaged, the audit
judge when the split has audit scores, else the build judge)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.annotate.report import annotated_splits, annotation_report
from ioa_synth.annotate.sample import AnnotationError
from ioa_synth.build.builddir import BuildDirError, open_catalog
from ioa_synth.reports.output import fmt
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: The split the paper annotated.
SPLIT = "test"


def human_vs_judge(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-9: per rubric dimension n, human mean, LLM mean, share within ±0.5 and ±1 point (%)."""
    (folder,) = folders["build"]
    try:
        with open_catalog(folder, read_only=True) as cat:
            splits = annotated_splits(cat)
            if not splits:
                raise AnnotationError(f"{folder}: no annotations imported yet (run 'ioa-synth annotate import')")
            split = SPLIT if SPLIT in splits else splits[0]
            report = annotation_report(cat, split)
    except (BuildDirError, AnnotationError) as exc:
        raise TableError(str(exc)) from None
    rows = [[r["dimension"], str(r["n"]), fmt(r["human_mean"]), fmt(r["llm_mean"]),
             percent(r["within_0_5"]), percent(r["within_1"])]
            for r in report["dimensions"]]
    judge = report["judge"]
    return PaperTable("ioa-9", f"Table 9: human vs LLM judge scores ({split} split)",
                      ["dimension", "n", "human mean", "LLM mean", "within ±0.5 (%)", "within ±1 (%)"], rows,
                      [f"Humans ({', '.join(report['annotators'])}, averaged per item) vs the {judge['name']} judge "
                       f"({', '.join(judge['models']) or 'no score of this split'}); calibration items left out."])


register(TableSpec("ioa-9", "Human vs LLM judge agreement per rubric dimension", "IoA paper, Table 9 (App. B.3)",
                   (Needs("build", 1, 1, "with annotations imported ('annotate import') and, for imported data, "
                                         "an 'audit'"),),
                   "ioa-synth build ...; ioa-synth annotate export/import --out BUILD; ioa-synth audit --out BUILD",
                   human_vs_judge))
