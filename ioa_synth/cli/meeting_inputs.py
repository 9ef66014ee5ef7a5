"""The checks of ``meeting probe``'s arguments, shared by ``meeting probe`` and ``estimate
meeting probe`` (:func:`probe_inputs`: what one refuses the other refuses, with the same
line), and the session folder's reader."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ioa_synth.cli.batch_options import batch_mode
from ioa_synth.cli.common import check_out_folder, fail

if TYPE_CHECKING:
    from ioa_synth.meetings.session import Session
    from ioa_synth.probing.detectors import Detector
    from ioa_synth.runs.batch_mode import BatchMode


def open_session(folder: Path) -> Session:
    """The meeting session in ``folder``; exit 2 with one line when it is none."""
    from ioa_synth.meetings.session import Session, SessionError

    check_out_folder(folder, "SESSION_DIR")
    try:
        return Session(folder)
    except SessionError as exc:
        fail(str(exc))


class ProbeInputs(NamedTuple):
    """What :func:`probe_inputs` read and checked."""

    session: Session
    detectors: list[Detector]
    #: ``None``: live calls
    batch: BatchMode | None


def probe_inputs(session_dir: Path, specs: list[str], batch: bool, batch_dir: Path | None) -> ProbeInputs:
    """Every check of ``meeting probe``'s arguments, in order, with nothing written: the
    session, the ``--detector`` specs (at most :data:`~ioa_synth.probing.detectors.MAX_DETECTORS`,
    each ``NAME=CONFIG``), a session already probed or a detector named twice
    (:func:`~ioa_synth.meetings.probe.check_probe`), and the batch options: each detector's
    endpoint (``IOA_DETECTOR_<NAME>_BASE_URL``, else ``PROBER_BASE_URL`` or ``OPENAI_BASE_URL``)
    must be remote, and with ``--batch-dir`` its config must name a ``model``."""
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.llm.endpoints import EndpointSource
    from ioa_synth.meetings.probe import check_probe
    from ioa_synth.meetings.session import SessionError
    from ioa_synth.probing.detectors import MAX_DETECTORS, env_prefix, parse_detector, prober_config

    session = open_session(session_dir)
    if len(specs) > MAX_DETECTORS:
        fail(f"at most {MAX_DETECTORS} detectors (got {len(specs)})")
    try:
        detectors = [parse_detector(spec, prober_config) for spec in specs]
    except ValueError as exc:
        fail(str(exc))
    try:
        check_probe(session, detectors)
    except SessionError as exc:
        fail(str(exc))
    sources = {d.name: EndpointSource("prober", d.config.prober, (env_prefix(d.name),)) for d in detectors}
    return ProbeInputs(session, detectors, batch_mode([], batch, batch_dir, ToolkitConfig(), sources=sources))
