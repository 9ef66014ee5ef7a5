"""The offline walk-through's probe step on the real embedded model (the default one, as in the docs;
the detector configs bound max_tokens)."""

from __future__ import annotations

import json

import pytest

from .conftest import SAMPLES

pytestmark = pytest.mark.embedded


def test_probe_sample_with_two_detectors_on_the_embedded_model(cli, tmp_path):
    out = tmp_path / "demo"
    assert cli("meeting", "import", SAMPLES / "sample.vtt", "--out", out).exit_code == 0
    res = cli("meeting", "probe", out, "--detector", f"warm={SAMPLES / 'detector-warm.json'}",
              "--detector", f"cool={SAMPLES / 'detector-cool.json'}", "--seed", "1")
    assert res.exit_code == 0, res.output
    sets = json.loads((out / "sets.json").read_text())["sets"]
    assert sorted(sets) == ["A", "B"]
    assert sorted(json.loads((out / "private" / "blinding.json").read_text()).values()) == ["cool", "warm"]
    for questions in sets.values():
        for q in questions:
            assert q["question"] and len(q["options"]) >= 2
