"""What a ``meeting probe`` will cost, before any call (``ioa-synth estimate meeting probe``),
in the contract of :func:`ioa_synth.runs.spend.fold`: one call per detector whose question
set is not stored in the session's catalog yet (a re-run replays the others), as the
component ``detector:<NAME>``.

The prompt is the one the detector gets (the mcq prober's template on the pseudonymised
transcript, :func:`~ioa_synth.meetings.probe.meeting_context`), rendered and counted with
the detector's tokenizer. Completion tokens: measured on the question sets stored in the
session's catalog, else the detector's ``max_tokens`` (an upper bound). Failed tries
measured there are added.
"""

from __future__ import annotations

from typing import Any

from ioa_synth.core.templates import render_template
from ioa_synth.llm.component_setup import component_setup, prices_for
from ioa_synth.llm.prices import Price
from ioa_synth.meetings.probe import meeting_context
from ioa_synth.meetings.session import Session
from ioa_synth.probing.detectors import Detector, env_prefix
from ioa_synth.probing.probers import McqProber
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, Measured, fold, measure_setups


def estimate_probe(session: Session, detectors: list[Detector], local_model: str | None, prices: dict[str, Price],
                   tokenizer: str | None, *, batch: bool = False) -> dict[str, Any]:
    """The estimate of ``meeting probe SESSION --detector ...`` (after the command's checks,
    :func:`~ioa_synth.meetings.probe.check_probe`). Nothing is written: the session's
    catalog is opened read-only, when there is one.

    Raises:
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    setups = {f"detector:{d.name}": component_setup("prober", d.config, local_model, tokenizer, (env_prefix(d.name),))
              for d in detectors}
    stored: set[str] = set()
    measured = Measured()
    if (session.folder / "catalog.duckdb").is_file():
        with Catalog(session.folder, read_only=True) as catalog:
            stored = {r[0] for r in catalog.execute("SELECT DISTINCT case_id FROM llm_calls WHERE error IS NULL "
                                                    "AND role = 'prober'")}
            measured = measure_setups(catalog, {"prober": next(iter(setups.values()))} if setups else {})
    prompt = render_template(McqProber.template, **meeting_context(session))
    ok = sum(n for (_, role), n in measured.calls.items() if role == "prober")
    measured_completion = (sum(measured.completion[k] * n for k, n in measured.calls.items() if k[1] == "prober")
                           / ok) if ok else None
    retried = 1 + ((sum(measured.retries[k] * n for k, n in measured.calls.items() if k[1] == "prober") / ok)
                   if ok else 0.0)
    kinds, sources = [], {}
    for d in detectors:
        name = f"detector:{d.name}"
        setup = setups[name]
        completion = measured_completion if measured_completion is not None else float(setup.max_tokens)
        sources[name] = "measured" if measured_completion is not None else f"max_tokens {setup.max_tokens}"
        calls = 0.0 if d.name in stored else retried
        kinds.append(CallKind(name, "question set", calls, setup.counter.messages(prompt.messages), completion))
    assumptions = {
        "command": "meeting probe", "detectors": len(detectors), "already_done": sum(d.name in stored for d in detectors),
        "turns": len(session.turns), "batch": batch,
        "completion_tokens_per_call": {k.component: round(k.completion, 1) for k in kinds},
        "completion_source": sources,
        "tokenizers": {c: st.describe() for c, st in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)
