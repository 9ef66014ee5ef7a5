"""``estimate build --meetings K`` against what a scripted series build bills: prompts and
completions counted one token per 4 characters (``--tokenizer chars``) on both sides
(:class:`~ioa_synth.testing.scripted_replies.CountedUsage`), every call passing, so the only
differences are the estimate's own approximations (the series note, the earlier meetings'
lines, the judge's view of the whole series).

Measured here (three remaining cases after a one-case pilot, K = 3): generator prompts
billed 17,023 tokens (stage 1, and meetings 1, 2, 3 of stage 2), estimated 17,011; judge
prompts billed 11,035, estimated 11,205. Generator completions: 4,755 billed, 5,328
estimated (each meeting priced as meeting 1's 4 turns; the scripted meetings 2 and 3 have 2
and 3), 2.6% over with the prompts."""

from __future__ import annotations

import json

from ioa_helpers import q

from ioa_synth.llm.tokens import chars_counter
from ioa_synth.testing.scripted_replies import CountedUsage
from ioa_synth.testing.scripted_series import SeriesResponder

RATES = {"stage1": {"first_attempt": 1.0, "after_regeneration": 1.0, "judged": 1.0},
         "stage2": {"first_attempt": 1.0, "after_regeneration": 1.0, "judged": 1.0}}


def _billed(out):
    return q(out, "SELECT c.role, sum(prompt_tokens), sum(completion_tokens), count(*) FROM llm_calls c "
                  "JOIN runs r USING (run_id) WHERE r.started_at = (SELECT max(started_at) FROM runs) "
                  "GROUP BY ALL ORDER BY 1")


def test_the_estimate_of_a_series_build_is_within_10_percent_of_its_bill(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=CountedUsage(SeriesResponder(), chars_counter()))
    seeds, out, rates = seeds_file(4), tmp_path / "out", tmp_path / "rates.json"
    rates.write_text(json.dumps(RATES))
    base = ["--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", "--type-mix", "none",
            "--meetings", "3"]
    # a pilot case: the estimate reads the completions and prompts it stored (a fresh directory
    # prices completions at max_tokens, which no bill matches)
    assert cli("build", *base, "--limit", "1").exit_code == 0
    res = cli("estimate", "build", *base, "--tokenizer", "chars", "--pass-rates", rates, "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    res = cli("build", *base)
    assert res.exit_code == 0, res.output
    rows = _billed(out)
    billed = {"generator": [0, 0, 0], "judge": [0, 0, 0]}
    for role, p, c, n in rows:
        for i, v in enumerate((p, c, n)):
            billed[role.split(":")[0]][i] += v
    for comp, (p, c, n) in billed.items():
        got = est["components"][comp]
        assert got["calls"] == n, (comp, got, n)
        # the judge was 14.6% over when the series in its measured prompt was added again, the
        # generator 4.2% under without the note; both now within 2%
        assert abs(got["prompt_tokens"] - p) <= 0.10 * p, (comp, got["prompt_tokens"], p)
        tokens = got["prompt_tokens"] + got["completion_tokens"]
        assert abs(tokens - (p + c)) <= 0.10 * (p + c), (comp, got, p, c)
