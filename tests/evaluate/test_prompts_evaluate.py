"""``evaluate --prompts DIR``: an exported and edited prober template reaches the prober's
server, changes the fingerprint, is named in ``run.json``; a resume of the folder with the
packaged prompts is refused before any call (docs/prompts.md)."""

from __future__ import annotations

import json

from .eval_helpers import STUDY_1, Study, released_case, user_text, write_case
from ioa_helpers import one_line_error

NAME = "evaluate/prober_mcq.jinja2"
MARK = "EDITED PROBER WORDING FOR THE PAPER'S APPENDIX"


def _evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "1", *extra)


def test_evaluate_with_edited_prompts(cli, trio, tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, "business/troubleshooting_010.json", released_case())
    t = trio(Study(STUDY_1))
    folder = tmp_path / "prompts"
    assert cli("prompts", "export", folder, "--only", NAME).exit_code == 0
    path = folder / NAME
    path.write_text(path.read_text(encoding="utf-8").replace("{% endblock %}", f"\n{MARK}{{% endblock %}}"),
                    encoding="utf-8")  # both blocks end with the mark
    plain, edited = tmp_path / "plain", tmp_path / "edited"
    assert _evaluate(cli, root, plain).exit_code == 0
    n = len(t.prober.requests)
    assert not any(MARK in user_text(r["body"]) for r in t.prober.requests)
    res = _evaluate(cli, root, edited, "--prompts", folder)
    assert res.exit_code == 0, res.output
    sent = [user_text(r["body"]) for r in t.prober.requests[n:]]
    assert sent and all(MARK in s for s in sent)
    assert not any(MARK in user_text(r["body"]) for r in t.simulator.requests)  # only the prober's was replaced
    a, b = (json.loads((d / "run.json").read_text()) for d in (plain, edited))
    assert a["fingerprint"] != b["fingerprint"] and "prompts" not in a
    assert b["prompts"][NAME]["sha256"] == b["fingerprint_parts"]["templates"][NAME] != a["fingerprint_parts"]["templates"][NAME]
    assert b["fingerprint_parts"]["templates"]["evaluate/simulator.jinja2"] == a["fingerprint_parts"]["templates"]["evaluate/simulator.jinja2"]
    before = t.counts()
    one_line_error(_evaluate(cli, root, edited), NAME, "use a new --out")
    assert t.counts() == before
