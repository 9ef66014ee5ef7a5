"""The setup description and fingerprint check shared by the belief commands that run a
model outside ``belief run`` (item writing, screening, re-asking, agreement)."""

from __future__ import annotations

from typing import Any

from ioa_synth.belief.conversation import component_of
from ioa_synth.core.templates import all_template_hashes
from ioa_synth.runs.context import Check, Describe
from ioa_synth.runs.fingerprint import FINGERPRINT_VERSION
from ioa_synth.runs.setup_check import SetupCheck


def template_setup(*commands: str) -> tuple[Describe, Check]:
    """``(describe, check)`` for :func:`~ioa_synth.runs.context.open_run`: each
    component's identity with the belief templates' sha256s, checked against the stored
    runs of ``commands`` (a changed model or template is refused, not mixed in)."""
    templates = all_template_hashes("belief")

    def describe(eps: dict[str, Any]) -> dict[str, Any]:
        return {"fingerprint_version": FINGERPRINT_VERSION,
                "components": {n: ep.identity() | {"templates": templates} for n, ep in eps.items()}}

    return describe, SetupCheck(commands=commands, component_of=component_of)
