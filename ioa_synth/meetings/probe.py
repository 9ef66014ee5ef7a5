"""``meeting probe``: every detector writes one question set on the pseudonymised transcript
(paper §6.2: transcript only, no profiles), the sets get blind labels A, B, C ...

A detector is an evaluate prober configuration (``--detector NAME=CONFIG``: the ``prober``
block of a config file; endpoint from ``PROBER_BASE_URL`` or, per detector,
``IOA_DETECTOR_<NAME>_BASE_URL`` / ``_API_KEY``; else the embedded model) in ``mcq`` mode,
asked through :meth:`ioa_synth.probing.probers.McqProber.ask_context`. Every call is made
through :func:`ioa_synth.runs.context.open_run` and stored in the session's catalog
(a re-run replays finished detectors). Labels are drawn at random per session (seeded);
``private/blinding.json`` keeps the mapping, ``sets.json`` only labels and questions.

With ``batch`` (``--batch`` / ``--batch-dir``) each detector's call goes out as a batch
(:func:`ioa_synth.runs.batch_mode.map_in_waves`), one detector after the other (each is a
run of its own, with its own endpoint): a wave per detector; the sets are a live run's.
"""

from __future__ import annotations

import os
import random
from collections import deque
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ioa_synth.probing.access import transcript_only_context
from ioa_synth.probing.detectors import MAX_DETECTORS, Detector, env_prefix, parse_detector  # noqa: F401
from ioa_synth.probing.probers import McqProber
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.core.templates import template_sha256
from ioa_synth.meetings.session import Session, SessionError
from ioa_synth.meetings.tables import MEETING_TABLES
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, recorder_and_waves
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run

def blind_labels(names: list[str], seed: int | str) -> dict[str, str]:
    """``{label: detector name}``: ``names`` shuffled by ``random.Random(seed)`` onto A, B, C ..."""
    order = sorted(names)
    random.Random(seed).shuffle(order)
    return {chr(ord("A") + i): name for i, name in enumerate(order)}


@contextmanager
def detector_endpoint(name: str) -> Iterator[None]:
    """Point the ``prober`` component at ``IOA_DETECTOR_<NAME>_BASE_URL`` / ``_API_KEY``
    while this detector runs, when they are set."""
    env = env_prefix(name)
    saved = {k: os.environ.get(k) for k in ("PROBER_BASE_URL", "PROBER_API_KEY")}
    try:
        for suffix in ("BASE_URL", "API_KEY"):
            if os.environ.get(f"{env}_{suffix}"):
                os.environ[f"PROBER_{suffix}"] = os.environ[f"{env}_{suffix}"]
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _describe(endpoints: dict[str, Any]) -> dict[str, Any]:
    return {"components": {name: ep.identity() for name, ep in endpoints.items()},
            "templates": {McqProber.template: template_sha256(McqProber.template)}}


def meeting_context(session: Session) -> dict[str, Any]:
    """The prober's prompt context: pseudonyms and pseudonymised turns only."""
    return transcript_only_context([(p.id, p.pseudonym) for p in session.participants],
                                   [(t["idx"], t["speaker"], t["text"]) for t in session.turns])


def check_probe(session: Session, detectors: list[Detector]) -> None:
    """Refuse to probe ``session`` with ``detectors`` (``meeting probe`` and its estimate both
    ask, before anything is written).

    Raises:
        SessionError: the session already has question sets, or repeated detector names.
    """
    if session.read("sets.json") is not None:
        raise SessionError(f"{session.folder}: already probed (sets.json exists); the question sets of a "
                           "session are fixed once written")
    names = [d.name for d in detectors]
    if len(set(names)) != len(names):
        raise SessionError(f"detector names repeat: {', '.join(names)}")


def probe_session(session: Session, detectors: list[Detector], seed: int | None, local_model: str | None,
                  on_done: Callable[[str, int], None] = lambda name, n: None, batch: BatchMode | None = None,
                  note: Callable[[str], None] = lambda text: None) -> dict[str, int]:
    """Ask every detector for its question set and store the blinded sets. With ``batch``
    each detector's call goes out as a batch (``note`` hears of the batches in flight).

    Returns ``{label: number of questions}``.

    Raises:
        SessionError: (:func:`check_probe`) already probed, or repeated detector names.
        ioa_synth.llm.client.LLMCallError, SetupError, ...: a detector's call failed (the
            detectors done so far are kept in the catalog and replayed on a re-run).
        BatchWaiting: a ``--batch-dir`` wave waits for its output file.
    """
    check_probe(session, detectors)
    names = [d.name for d in detectors]
    context = meeting_context(session)
    questions: dict[str, list[dict[str, Any]]] = {}
    with Catalog(session.folder, tables=[MEETING_TABLES]) as catalog:
        for det in detectors:
            args = {"detector": det.name, "config": det.config_path, "local_model": local_model}
            with detector_endpoint(det.name), open_run(catalog, "meeting probe", ["prober"], det.config, local_model,
                                                      args, describe=_describe, check=None, in_kind="meeting") as run:
                recorder, waves = recorder_and_waves(run, batch, [det.name], note=note)
                calls = CaseCalls(recorder, det.name, tags={"detector": det.name})
                asked: dict[str, Any] = {}
                map_in_waves(run, waves, deque([det.name]),
                             lambda name: McqProber().ask_context(context, run.clients["prober"], calls),
                             asked.__setitem__, workers=1, unit="detector", name="meeting-probe")
                probe = asked[det.name]
                run.summary["questions"] = len(probe.questions)
            catalog.flush()
            questions[det.name] = [{"question": q.question, "options": q.options} for q in probe.questions]
            on_done(det.name, len(questions[det.name]))
    labels = blind_labels(names, session.session_id if seed is None else seed)
    session.write({label: name for label, name in labels.items()}, "private", "blinding.json")
    session.write({"sets": {label: questions[name] for label, name in labels.items()}}, "sets.json")
    return {label: len(questions[name]) for label, name in labels.items()}
