"""Helpers of the build tests that drive ``build`` through the CLI against a scripted server
(a two-person, multi-party or series case)."""

from __future__ import annotations

import json
from pathlib import Path

from ioa_helpers import q

from ioa_synth.testing.scripted_server import request_kind


def build_cli(cli, seeds: Path, out: Path, *extra: str):
    """``build`` of ``seeds`` into ``out`` as split test, one worker, no planted types."""
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", "--type-mix", "none",
               *extra)


def bodies(server, kind: str) -> list[dict]:
    """The request bodies of one kind (``request_kind``) the scripted server received."""
    return [r["body"] for r in server.requests if request_kind(r["body"]) == kind]


def accepted_records(out: Path) -> list[dict]:
    """The accepted cases' records of the build directory ``out``, by case id."""
    return [json.loads(Path(p).read_text(encoding="utf-8"))
            for (p,) in q(out, "SELECT path FROM cases WHERE status = 'accepted' ORDER BY case_id")]
