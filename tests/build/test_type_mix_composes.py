"""Type-controlled planting (``--type-mix``) with a three-person build and with a build in
German, at the HTTP boundary: the planned types follow the mix (the same plan as a
two-person English build of the same seeds), the generator is asked for them, the judge is
asked to read them, and the case is accepted with them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import real_seed_tuples
from ioa_helpers import q

from ioa_synth.protocol.cells import MA_TYPES
from ioa_synth.protocol.plan import points_for
from ioa_synth.build.planted import split_plans
from ioa_synth.protocol.planting import attainable_counts, load_type_mix
from ioa_synth.seeds.tuples import load_seed_file
from ioa_synth.testing.scripted_languages import LanguageResponder
from ioa_synth.testing.scripted_multi import MultiResponder
from ioa_synth.testing.type_judge import PlanReadingJudge

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def _seeds(path: Path, points: int, n: int) -> list[dict]:
    """``n`` real seed tuples whose plan has ``points`` points (the scripted case's count)."""
    tuples = [t for t in real_seed_tuples(200) if points_for(t["seed_id"]) == points][:n]
    assert len(tuples) == n
    path.write_text("".join(json.dumps(t) + "\n" for t in tuples), encoding="utf-8")
    return tuples


@pytest.mark.parametrize("extra, points", [(("--participants", "3"), 3), (("--language", "de"), 2)],
                         ids=["three", "de"])
def test_the_type_mix_plants_and_accepts_types_in_a_three_person_or_german_build(cli, endpoint, tmp_path, extra,
                                                                                  points):
    if extra[0] == "--language":
        pytest.importorskip("lingua")
        base = LanguageResponder(json.loads((CASES / "de_case.json").read_text(encoding="utf-8")))
    else:
        base = MultiResponder()
    judge = PlanReadingJudge(base)
    server = endpoint(responder=judge)
    seeds, out = tmp_path / "seeds.jsonl", tmp_path / "out"
    tuples = _seeds(seeds, points, 6)
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", "--type-mix", "uniform",
              *extra)
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT count(*) FROM cases WHERE status = 'accepted'") == [(6,)]
    planned = {seed: tuple(json.loads(t)) for seed, t in q(
        out, "SELECT c.seed_id, p.types_json FROM planned_types p JOIN cases c USING (case_id)")}
    target = load_type_mix("uniform")
    # the plan a two-person English build makes of these seeds: the mix over the split
    assert planned == split_plans(load_seed_file(seeds), "uniform")
    counts = Counter(t for types in planned.values() for t in types)
    aim = attainable_counts(sum(counts.values()), len(planned), target)
    assert all(abs(counts[t] - aim[t]) <= 1 for t in MA_TYPES), (counts, aim)
    assert len({t for types in planned.values() for t in types[1:]}) > 2  # not only definitional points
    # the generator was asked for them (schema constants), the judge read each point's type
    by_title = {t["title"]: planned[t["seed_id"]] for t in tuples}
    assert {title: tuple(types) for title, types in judge.planned.items()} == by_title
    assert judge.judged == 6 * points
    for (path,) in q(out, "SELECT path FROM cases"):
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        types = tuple(p["type"] for p in record["profiles"]["misalignment_points"])
        assert types == by_title[record["seed"]["title"]]
        assert len(record["profiles"]["members"]) == (3 if extra[0] == "--participants" else 2)
        assert record.get("language") == ("de" if extra[0] == "--language" else None)
    report = json.loads(cli("status", "--out", out, "--json").stdout)["type_mix"]["test"]
    assert report["cases"] == 6 and report["mismatched"] == 0 and report["judged"] == 6 * points
    rows = {r["type"]: r for r in report["rows"]}
    assert sum(r["accepted"] for r in rows.values()) == 6 * points
