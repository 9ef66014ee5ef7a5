"""Detectors: prober configurations used outside ``evaluate`` (live meetings, a team's
loop). ``--detector NAME=CONFIG`` names one: the ``prober`` block of a config file,
its endpoint from ``IOA_DETECTOR_<NAME>_BASE_URL`` / ``_API_KEY`` (:func:`env_prefix`),
falling back to ``PROBER_*``, then ``OPENAI_*``, else the embedded model."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ioa_synth.llm.config import ConfigError, ToolkitConfig, load_config
from ioa_synth.text.utf8 import decode_utf8

MAX_DETECTORS = 26
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}$")


@dataclass(frozen=True)
class Detector:
    """A detector: its ``name`` (shown only in the report), config file and loaded config."""

    name: str
    config_path: str
    config: ToolkitConfig


def parse_detector(spec: str, load: Callable[[Path], ToolkitConfig]) -> Detector:
    """``NAME=CONFIG`` -> :class:`Detector` (``load`` reads the config file).

    Raises:
        ValueError: no ``=``, a bad name; whatever ``load`` raises for the file.
    """
    name, sep, path = spec.partition("=")
    if not sep or not path:
        raise ValueError(f"--detector {spec!r}: expected NAME=CONFIG (a config file with a \"prober\" block)")
    if not _NAME.match(name):
        raise ValueError(f"--detector {spec!r}: a name is 1-40 letters, digits, '.', '_' or '-'")
    return Detector(name, path, load(Path(path)))


def env_prefix(name: str) -> str:
    """``IOA_DETECTOR_<NAME>``: the prefix of detector ``name``'s ``_BASE_URL`` / ``_API_KEY``
    variables (non-word characters as ``_``, upper case)."""
    return "IOA_DETECTOR_" + re.sub(r"\W", "_", name).upper()


def prober_config(path: Path) -> ToolkitConfig:
    """A detector's config file: a ``--config`` file that must have a ``prober`` block (a
    detector is a prober configuration; a config without one, e.g. a build's, would silently
    run the default prober under the detector's name).

    Raises:
        ConfigError: unreadable, invalid, or no ``prober`` block.
    """
    config = load_config(path)  # names a missing file, bad JSON, unknown keys
    data = json.loads(decode_utf8(path.read_bytes(), path, ConfigError))
    if not isinstance(data, dict) or not isinstance(data.get("prober"), dict):
        raise ConfigError(f"{path}: no \"prober\" block; a detector's config gives its prober settings in "
                          "{\"prober\": {\"model\": ...}} ({\"prober\": {}} for the default prober)")
    if config.prompts is not None:  # one run renders one set of templates, whoever sends them
        raise ConfigError(f"{path}: \"prompts\" applies to a whole run, not to one detector: give it with "
                          "--prompts DIR (or in the command's --config)")
    return config
