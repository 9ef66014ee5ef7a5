"""Fixtures of the evaluation tests: three scripted OpenAI-compatible servers, one per
component, each reached with its own key through ``<X>_BASE_URL``/``<X>_API_KEY``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from .eval_helpers import KEYS, STUDY_1, Study
from ioa_synth.testing.scripted_server import ScriptedServer


@dataclass
class Trio:
    study: Study
    prober: ScriptedServer
    simulator: ScriptedServer
    validity_filter: ScriptedServer

    def counts(self) -> tuple[int, int, int]:
        return len(self.prober.requests), len(self.simulator.requests), len(self.validity_filter.requests)


@pytest.fixture
def trio(monkeypatch):
    """Factory ``trio(study=None, models=None)`` -> :class:`Trio` with the env pointed at it."""
    started: list[ScriptedServer] = []

    def start(study: Study | None = None, models: dict[str, str] | None = None) -> Trio:
        study = study or Study(STUDY_1)
        models = models or {}
        servers = {}
        for comp, responder in (("prober", study.prober), ("simulator", study.simulator),
                                ("validity_filter", study.filter)):
            server = ScriptedServer(responder, models=[models.get(comp, f"{comp}-model")]).__enter__()
            started.append(server)
            monkeypatch.setenv(f"{comp.upper()}_BASE_URL", server.base_url)
            monkeypatch.setenv(f"{comp.upper()}_API_KEY", KEYS[comp])
            servers[comp] = server
        return Trio(study, **servers)

    yield start
    for s in started:
        s.__exit__(None, None, None)
