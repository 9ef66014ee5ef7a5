"""Resolve the endpoints of the components a command needs, starting the embedded
local model when a component has no base URL configured."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ioa_synth.llm.config import ComponentConfig, ToolkitConfig, env_endpoint
from ioa_synth.llm.client import Endpoint, LLMClient
from ioa_synth.llm.serving import ServerSlots


class EndpointError(RuntimeError):
    """An endpoint that cannot be used (no model given and none listed, server down...)."""


@dataclass(frozen=True)
class EndpointSource:
    """An endpoint opened under a name of its own with another component's role: the
    settings block ``config`` (e.g. a detector's ``prober`` block from its own file), the
    ``component`` whose defaults and ``<X>_BASE_URL`` apply, and environment ``prefixes``
    tried first (``IOA_DETECTOR_<NAME>`` before ``PROBER``, then ``OPENAI``)."""

    component: str
    config: ComponentConfig
    prefixes: tuple[str, ...] = ()


def _resolved(components: list[str], config: ToolkitConfig, sources: dict[str, EndpointSource]
              ) -> dict[str, tuple[str, ComponentConfig, str | None, str | None]]:
    """name -> (component whose defaults apply, settings block, base URL or ``None``, key)."""
    out = {c: (c, config.component(c), *env_endpoint(c)) for c in components}
    out.update({name: (src.component, src.config, *env_endpoint(src.component, src.prefixes))
                for name, src in sources.items()})
    return out


def _embedded(comp: str, cfg: ComponentConfig, server: Any, slots: ServerSlots | None) -> Endpoint:
    ep = Endpoint.from_config(comp, cfg, server.base_url, server.model, None, embedded=True)
    ep.slots = slots
    ep.server = server.server
    return ep


def planned_endpoints(components: list[str], config: ToolkitConfig, local_model: str | None = None,
                      sources: dict[str, EndpointSource] | None = None) -> dict[str, Endpoint]:
    """The endpoints :func:`open_endpoints` would yield, made without starting the embedded
    server or contacting any endpoint (their ``identity()`` is what the run will have; an
    embedded one has no base URL yet), so that a run can check its setup against a folder
    before anything starts. A remote component without ``model`` in the config is left out
    (its model is known only once its endpoint lists it).

    Raises:
        ioa_synth.llm.local_weights.LocalModelError: an embedded component and no (or an
            unknown) local model.
        ConfigError: a base URL variable is blank.
    """
    resolved = _resolved(components, config, sources or {})
    server = None
    if any(base is None for _, _, base, _ in resolved.values()):
        from ioa_synth.llm.local_model import EmbeddedServer
        from ioa_synth.llm.local_weights import default_local_model

        server = EmbeddedServer(local_model or default_local_model())  # described, not started
    out: dict[str, Endpoint] = {}
    for name, (comp, cfg, base, key) in resolved.items():
        if base is None:
            out[name] = _embedded(comp, cfg, server, None)
        elif cfg.model:
            out[name] = Endpoint.from_config(comp, cfg, base, cfg.model, key, embedded=False)
    return out


@contextlib.contextmanager
def open_endpoints(components: list[str], config: ToolkitConfig, local_model: str | None = None,
                   log_dir: Path | None = None,
                   sources: dict[str, EndpointSource] | None = None) -> Iterator[dict[str, Endpoint]]:
    """Yield component -> :class:`Endpoint` for ``components`` and for each name of
    ``sources`` (an :class:`EndpointSource`; all share the one embedded server).

    Components without ``<X>_BASE_URL``/``OPENAI_BASE_URL`` share one embedded
    ``llama-server`` (model ``local_model`` or the best one installed), started here and
    stopped on exit; their endpoints share its :class:`~ioa_synth.llm.serving.ServerSlots`
    (one per server slot: requests beyond what it decodes at once wait in the client, not in
    the server) and carry its build as ``server`` (fingerprinted). A remote component without
    ``model`` in the config uses the first model its endpoint lists.
    :func:`planned_endpoints` gives the same endpoints without starting anything.

    Raises:
        EndpointError: a remote endpoint without a configured model lists none.
        SetupError: listing its models was refused or the server could not be reached
            (the message names the URL and the setting to check).
        ioa_synth.llm.local_weights.LocalModelError: the embedded model cannot be started.
        ConfigError: a base URL variable is blank.
    """
    resolved = _resolved(components, config, sources or {})
    with contextlib.ExitStack() as stack:
        server = None
        if any(base is None for _, _, base, _ in resolved.values()):
            from ioa_synth.llm.local_model import EmbeddedServer
            from ioa_synth.llm.local_weights import default_local_model

            name = local_model or default_local_model()
            log_path = (log_dir / "embedded-server.log") if log_dir else None
            if log_dir:
                log_dir.mkdir(parents=True, exist_ok=True)
            server = stack.enter_context(EmbeddedServer(name, log_path=log_path))
        out: dict[str, Endpoint] = {}
        slots = ServerSlots(server.parallel) if server is not None else None
        for name, (comp, cfg, base, key) in resolved.items():
            if base is None:
                out[name] = _embedded(comp, cfg, server, slots)
                continue
            model = cfg.model or _first_model(comp, base, key)
            out[name] = Endpoint.from_config(comp, cfg, base, model, key, embedded=False)
        yield out


def _first_model(component: str, base_url: str, api_key: str | None) -> str:
    probe = Endpoint.from_config(component, ToolkitConfig().component(component), base_url, "", api_key, False)
    probe.max_retries = 2
    client = LLMClient(probe)
    try:
        models = client.list_models()
    except Exception as exc:  # noqa: BLE001 - any failure here means: tell the user to set a model
        import openai

        setup = client.classify(exc) if isinstance(exc, openai.APIError) else None  # the key redacted
        if setup is not None:
            raise setup from exc
        raise EndpointError(f"{component}: no model in the config and listing models at {base_url} failed "
                            f"({type(exc).__name__}); set \"model\" for {component} in --config") from exc
    finally:
        client.close()
    if not models:
        raise EndpointError(f"{component}: no model in the config and {base_url} lists none")
    return models[0]
