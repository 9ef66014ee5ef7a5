"""The detectors of a team's ``mcq:NAME`` configurations (``--detector NAME=CONFIG``): an
evaluate prober configuration each, opened as the component ``detector:NAME`` with its
config's ``prober`` block and ``IOA_DETECTOR_<NAME>_BASE_URL`` / ``_API_KEY``, falling back
to ``PROBER_*``, then ``OPENAI_*`` (as ``meeting probe`` does)."""

from __future__ import annotations

from ioa_synth.probing.detectors import Detector, env_prefix, parse_detector, prober_config
from ioa_synth.llm.endpoints import EndpointSource

__all__ = ["Detector", "detector_sources", "load_detector", "prober_config"]


def load_detector(spec: str) -> Detector:
    """``NAME=CONFIG`` -> :class:`~ioa_synth.probing.detectors.Detector`.

    Raises:
        ValueError: a bad spec; ConfigError (a ValueError): a bad or prober-less config.
    """
    return parse_detector(spec, prober_config)


def detector_sources(detectors: list[Detector]) -> dict[str, EndpointSource]:
    """``{"detector:NAME": EndpointSource}`` for :func:`ioa_synth.runs.context.open_run`."""
    return {f"detector:{d.name}": EndpointSource("prober", d.config.prober, (env_prefix(d.name),)) for d in detectors}


