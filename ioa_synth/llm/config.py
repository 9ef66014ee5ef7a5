"""Per-component LLM configuration: a JSON ``--config`` file plus environment variables.

Every LLM-using component (``generator``, ``judge``, ``audit_judge``, ``prober``,
``simulator``, ``validity_filter``) reads ``<X>_BASE_URL`` / ``<X>_API_KEY`` (X upper
case), each falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. With no base URL
at all the component uses the embedded local model. The config file gives, per
component, ``{"model", "temperature", "seed", "structured_output", "request_options"}``;
see ``config.example.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.jsonl import json_problem

COMPONENTS: tuple[str, ...] = ("generator", "judge", "audit_judge", "prober", "simulator", "validity_filter",
                               # live meetings: the judge that merges validated discoveries across detectors
                               "merge_judge",
                               # the belief study: item writing, screening, the chatroom and its judges
                               "item_writer", "screener", "agent", "belief_judge", "stance_judge",
                               # multi-agent collaboration: every agent of a team (its detectors are prober blocks)
                               "discusser",
                               # type labels: the judge that reads each disagreement's type (App. B.5 taxonomy)
                               "type_judge")

#: Default sampling temperature per component (the paper's settings: generators 0.7, judges 0.3,
#: prober 0.7, simulator and validity filter 0.2).
DEFAULT_TEMPERATURE: dict[str, float] = {
    "generator": 0.7,
    "judge": 0.3,
    "audit_judge": 0.3,
    "prober": 0.7,
    "simulator": 0.2,
    "validity_filter": 0.2,
    "merge_judge": 0.0,
    "item_writer": 0.7,
    "screener": 0.7,
    "agent": 0.7,
    "belief_judge": 0.0,
    "stance_judge": 0.0,
    "discusser": 0.7,
    "type_judge": 0.0,
}

#: Default base of the per-call sampling seed (the ``seed`` config key).
DEFAULT_SEED = 0

#: Keys of ``request_options`` passed through to ``chat.completions.create``.
REQUEST_OPTION_KEYS = ("extra_body", "reasoning_effort", "max_tokens", "max_completion_tokens", "top_p",
                       "presence_penalty", "frequency_penalty")

StructuredOutput = Literal["json_schema", "json_object_schema", "none"]

_UNSET = "__default__"

#: Range of a ``temperature`` (the OpenAI chat API's; llama.cpp and vLLM take the same).
TEMPERATURE_RANGE = (0.0, 2.0)


class ConfigError(ValueError):
    """An unusable configuration file or value; the message says which."""


class RequestOptions(BaseModel):
    """What each of :data:`REQUEST_OPTION_KEYS` may hold, checked when the config is read so
    that a nonsensical value is refused before any server starts or file is written (an
    endpoint answering ``max_tokens: -5`` gives advice about something else). The ranges
    are the OpenAI chat API's: ``max_tokens`` / ``max_completion_tokens`` a whole number of
    at least 1, ``top_p`` from 0 to 1, the penalties from -2 to 2, ``reasoning_effort`` a
    word, ``extra_body`` an object (passed through as it is); none of them ``null``. Only
    the check: the options stay the plain dict the client sends."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    extra_body: dict[str, Any] | None = None
    reasoning_effort: str | None = Field(default=None, min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)

    @field_validator("*", mode="before")
    @classmethod
    def _given(cls, v: Any) -> Any:
        if v is None:  # sent as written: a null max_tokens would lift the embedded model's cap
            raise ValueError("should be a value; leave the key out for the default")
        return v


class ComponentConfig(BaseModel):
    """Settings of one component.

    ``temperature``: a float, ``null`` to omit the parameter, or absent for the
    component's default. ``structured_output``: ``json_schema`` (OpenAI, vLLM, llama.cpp's
    server, the embedded model; the default), ``json_object_schema`` (``{"type":
    "json_object", "schema": ...}``, for llama-cpp-python's server) or ``none``.
    ``max_retries``: HTTP retries (408, 409, 429, 5xx, timeouts, connection errors),
    after the server's ``Retry-After`` or exponential backoff with jitter
    (:mod:`ioa_synth.llm.retries`). ``content_retries``: re-requests of a reply that is
    not valid JSON, fails the schema or stopped on ``length``. ``timeout``: seconds per
    request. ``max_wait``: seconds one request may spend waiting in all, over its
    retries (a 429 with ``Retry-After`` is retried past ``max_retries`` while the waits
    fit; a wait that would pass the bound is not made). ``seed``: a non-negative integer base of the
    per-call sampling seed (each call sends a stable hash of its key plus this base, see
    :func:`ioa_synth.runs.recorder.call_seed`), ``null`` to never send ``seed``, or absent
    for :data:`DEFAULT_SEED`.
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    temperature: float | None | str = _UNSET
    structured_output: StructuredOutput | None = None
    json_schema_strict: bool = False
    request_options: dict[str, Any] = Field(default_factory=dict)
    max_retries: int = Field(default=5, ge=0, le=20)
    content_retries: int = Field(default=2, ge=0, le=10)
    timeout: float = Field(default=600.0, gt=0)
    max_wait: float = Field(default=300.0, ge=0)
    seed: int | None | str = _UNSET
    #: generator only: ``scaffold`` | ``protocol`` (ioa_synth.protocol.plan_modes); absent picks
    #: ``scaffold`` for the embedded model and ``protocol`` for a remote endpoint
    plan: Literal["scaffold", "protocol"] | None = None
    #: USD per million tokens, for ``estimate`` and ``status`` (:mod:`ioa_synth.llm.prices`):
    #: ``{"input", "output", "batch"}``; never sent, not part of the setup fingerprint
    price_per_mtok: dict[str, Any] | None = None

    @field_validator("price_per_mtok")
    @classmethod
    def _price(cls, v: Any) -> Any:
        if v is not None:
            from ioa_synth.llm.prices import PricesError, parse_price

            try:
                parse_price(v, "price_per_mtok")
            except PricesError as exc:
                raise ValueError(str(exc).removeprefix("price_per_mtok.")) from None
        return v

    @field_validator("request_options")
    @classmethod
    def _known_options(cls, v: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(v) - set(REQUEST_OPTION_KEYS))
        if unknown:
            raise ValueError(f"unknown request_options {unknown}; allowed: {', '.join(REQUEST_OPTION_KEYS)}")
        try:
            RequestOptions.model_validate(v)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0])
            problem = err["msg"].removeprefix("Value error, ").replace("Input should", "should")
            got = json.dumps(v[key], default=str)
            raise PydanticCustomError("request_option", "{key}: {problem} (got {got})",  # load_config names the key
                                      {"key": key, "problem": problem, "got": got}) from None
        return v

    @field_validator("temperature", mode="before")
    @classmethod
    def _temperature(cls, v: Any) -> Any:
        if v is None or v == _UNSET:
            return v
        low, high = TEMPERATURE_RANGE
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:  # NaN fails too
            raise ValueError(f"temperature must be a number from {low:g} to {high:g}, or null (got {json.dumps(v)})")
        return v

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, v: Any) -> Any:
        if v is None or v == _UNSET:
            return v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError("seed must be a non-negative integer or null")
        return v

    def effective_seed(self) -> int | None:
        """The base of the per-call sampling seed (``None``: never send ``seed``).

        Default :data:`DEFAULT_SEED` for every endpoint, embedded or remote: the OpenAI chat
        API, vLLM, Ollama and llama-cpp-python accept ``seed``, and a reproducible run is
        worth more than the rare provider that rejects it (that one fails with a setup
        error naming this key; set ``"seed": null`` there)."""
        return DEFAULT_SEED if self.seed == _UNSET else self.seed  # type: ignore[return-value]

    def effective_temperature(self, component: str) -> float | None:
        """The temperature to send (``None``: omit the parameter)."""
        if self.temperature == _UNSET:
            return DEFAULT_TEMPERATURE.get(component, 0.7)
        return self.temperature  # type: ignore[return-value]


class ToolkitConfig(BaseModel):
    """The whole config file: one optional block per component, and ``prompts``: a folder of
    templates replacing the packaged ones by name (docs/prompts.md; a relative path is read
    from the config file's folder; ``--prompts`` wins over it)."""

    model_config = ConfigDict(extra="forbid")

    generator: ComponentConfig = Field(default_factory=ComponentConfig)
    judge: ComponentConfig = Field(default_factory=ComponentConfig)
    audit_judge: ComponentConfig = Field(default_factory=ComponentConfig)
    prober: ComponentConfig = Field(default_factory=ComponentConfig)
    simulator: ComponentConfig = Field(default_factory=ComponentConfig)
    validity_filter: ComponentConfig = Field(default_factory=ComponentConfig)
    merge_judge: ComponentConfig = Field(default_factory=ComponentConfig)
    item_writer: ComponentConfig = Field(default_factory=ComponentConfig)
    screener: ComponentConfig = Field(default_factory=ComponentConfig)
    agent: ComponentConfig = Field(default_factory=ComponentConfig)
    belief_judge: ComponentConfig = Field(default_factory=ComponentConfig)
    stance_judge: ComponentConfig = Field(default_factory=ComponentConfig)
    discusser: ComponentConfig = Field(default_factory=ComponentConfig)
    type_judge: ComponentConfig = Field(default_factory=ComponentConfig)
    prompts: str | None = Field(default=None, min_length=1)

    def component(self, name: str) -> ComponentConfig:
        """Settings of component ``name``; raises ``KeyError`` for an unknown one."""
        if name not in COMPONENTS:
            raise KeyError(name)
        return getattr(self, name)


def load_config(path: str | Path | None) -> ToolkitConfig:
    """Read a ``--config`` JSON file (``None``: all defaults).

    Raises:
        ConfigError: unreadable file, invalid JSON, unknown component or key, bad value.
    """
    if path is None:
        return ToolkitConfig()
    p = Path(path)
    try:
        data = json.loads(decode_utf8(p.read_bytes(), p, ConfigError))  # a BOM (Windows editors) is allowed
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(json_problem(p, exc)) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the config must be a JSON object")
    data = {k: v for k, v in data.items() if not k.startswith("_")}  # "_comment" keys
    try:
        config = ToolkitConfig.model_validate(data)
        if config.prompts is not None:  # relative to the config file, wherever the command runs
            config.prompts = str(p.parent / Path(config.prompts).expanduser())
        return config
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"{p}: {_unknown_name(err['loc'])}") from exc
        if err["type"] == "request_option":  # generator.request_options.max_tokens: ...
            ctx = err.get("ctx", {})
            raise ConfigError(f"{p}: {where}.{ctx['key']}: {ctx['problem']} (got {ctx['got']})") from exc
        raise ConfigError(f"{p}: {where}: {err['msg'].removeprefix('Value error, ')}") from exc


def _unknown_name(loc: tuple) -> str:
    """``generatr: unknown component (did you mean "generator"?); valid components: ...``
    for a name at ``loc`` that the config does not know."""
    import difflib

    name = str(loc[-1])
    what, valid = ("component", list(COMPONENTS)) if len(loc) == 1 else ("key", list(ComponentConfig.model_fields))
    close = difflib.get_close_matches(name, valid, n=1)
    guess = f' (did you mean "{close[0]}"?)' if close else ""
    return f'{".".join(map(str, loc))}: unknown {what}{guess}; valid {what}s: ' + ", ".join(valid)


def env_endpoint(component: str, prefixes: tuple[str, ...] = ()) -> tuple[str | None, str | None]:
    """(base_url, api_key) of ``component`` from the environment, with the
    ``OPENAI_*`` fallbacks; empty strings count as unset, spaces around a value are dropped.
    ``prefixes`` are tried first, in order (``("IOA_DETECTOR_X",)`` reads
    ``IOA_DETECTOR_X_BASE_URL`` before ``<COMPONENT>_BASE_URL``).

    Raises:
        ConfigError: the base URL variable in effect holds only spaces (named as blank).
    """
    up = component.upper()
    names = (*(f"{p}_BASE_URL" for p in prefixes), f"{up}_BASE_URL", "OPENAI_BASE_URL")
    var = next((n for n in names if os.environ.get(n)), None)
    base = os.environ[var].strip() if var else None
    if var and not base:
        raise ConfigError(f"{var} is blank (only whitespace): set it to a server URL ending in /v1, "
                          "or unset it to use the embedded model")
    key_names = (*(f"{p}_API_KEY" for p in prefixes), f"{up}_API_KEY", "OPENAI_API_KEY")
    key = next((os.environ[n] for n in key_names if os.environ.get(n)), "").strip() or None
    return base, key
