"""A belief results folder written by the release before the manifest resumes after the
change (its run.json had no ``kind`` nor ``versions``, fewer component keys, and no
labelling mode: it resumes with ``--prematch``, the release's rule), or is refused in one
line when the study's settings changed."""

from __future__ import annotations

import json

from ioa_helpers import one_line_error
from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items

#: The keys of run.json as ``belief run`` wrote them before the manifest, in that order.
RELEASED_KEYS = ("command", "argv", "args", "settings", "components", "probe_temperature", "fingerprint",
                 "fingerprint_parts", "started_at", "finished_at")


def released(out):
    """``out``'s run.json as the release wrote it: no manifest keys, fewer component keys,
    and no labelling mode (the string pre-match was the release's only rule)."""
    run = json.loads((out / "run.json").read_text())
    old = {k: run[k] for k in RELEASED_KEYS}
    old["components"] = {name: {k: c[k] for k in ("model", "temperature", "base_url_kind")}
                         for name, c in run["components"].items()}
    for study in (old["settings"], old["fingerprint_parts"]["study"]):
        del study["labelling"]
    old["args"].pop("prematch", None)
    (out / "run.json").write_text(json.dumps(old, indent=2))
    return old


def test_a_released_belief_folder_resumes_and_a_changed_study_is_refused(endpoint, tmp_path, cli):
    server = endpoint(responder=BeliefScript(agents=2, labels=LABELS, stances=STANCES))
    items, out = sample_items(tmp_path, 2), tmp_path / "res"
    args = ("belief", "run", "--items", items, "--out", out, "--prematch", "--agents", "2", "--attackers", "1",
            "--rounds", "1")
    assert cli(*args, "--limit", "1").exit_code == 0
    old = released(out)
    report = cli("belief", "report", out, "--json")
    assert report.exit_code == 0, report.stderr

    before, calls = (out / "run.json").read_bytes(), len(server.requests)
    one_line_error(cli(*args[:-1], "2"), "study", "use a new --out")  # --rounds 2
    assert (out / "run.json").read_bytes() == before and len(server.requests) == calls

    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) - calls == 7  # one new conversation: 4 utterances, 2 probes and their label
    assert sorted(p.name for p in (out / "conversations").iterdir()) == ["counterfact-0_k1.json",
                                                                          "counterfact-1_k1.json"]
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "belief" and run["versions"]["setup"] == 2 and run["finished_at"]
    # the same setup, now naming the labelling it was made with
    assert run["settings"] == old["settings"] | {"labelling": "prematch"}
    parts = old["fingerprint_parts"]
    assert run["fingerprint_parts"] == parts | {"study": parts["study"] | {"labelling": "prematch"}}
