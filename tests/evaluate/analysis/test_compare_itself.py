"""``compare A A``: refused with one line saying it would compare a run with itself."""

from __future__ import annotations

from ioa_helpers import one_line_error


def test_compare_refuses_a_run_with_itself(run_a, cli, tmp_path):
    for other in (run_a, run_a.parent / "." / run_a.name):
        res = cli("compare", run_a, other, "--out", tmp_path / "cmp")
        assert res.exit_code == 2
        one_line_error(res, str(run_a), "itself")
    assert not (tmp_path / "cmp").exists()
