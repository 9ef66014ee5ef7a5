"""Fixtures of the compare/report tests: results folders written by :mod:`.factory`."""

from __future__ import annotations

import pytest

from .factory import case_studies, write_results


@pytest.fixture
def run_a(tmp_path):
    """Results folder of the three App. E.1 case studies (mcq, public, no permutation)."""
    return write_results(tmp_path / "run_a", case_studies())
