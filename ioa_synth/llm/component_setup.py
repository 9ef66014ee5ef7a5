"""What is known about a component before any endpoint is opened (``estimate``): whether it
runs on the embedded model, its model name, the ``max_tokens`` its requests carry, the
tokenizer that counts its prompts and its price. Nothing is started or asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ioa_synth.llm.config import ToolkitConfig, env_endpoint
from ioa_synth.llm.endpoint import EMBEDDED_MAX_TOKENS
from ioa_synth.llm.prices import Price, parse_price, price_of
from ioa_synth.llm.tokens import TokenCounter, counter_for


@dataclass
class ComponentSetup:
    """A component as an estimate sees it."""

    component: str
    embedded: bool
    model: str
    max_tokens: int
    max_tokens_source: str
    counter: TokenCounter
    configured_price: Price | None

    def describe(self) -> dict[str, Any]:
        """The assumptions about this component: model, tokenizer, ``max_tokens``."""
        return {"model": self.model, "embedded": self.embedded, "tokenizer": self.counter.name,
                "exact": self.counter.exact, "note": self.counter.note, "max_tokens": self.max_tokens,
                "max_tokens_source": self.max_tokens_source}


def component_setup(component: str, config: ToolkitConfig, local_model: str | None = None,
                    tokenizer: str | None = None, prefixes: tuple[str, ...] = ()) -> ComponentSetup:
    """The :class:`ComponentSetup` of ``component`` under ``config`` and the environment
    (``prefixes``: environment prefixes tried first, as :func:`~ioa_synth.llm.config.env_endpoint`'s:
    a detector's ``IOA_DETECTOR_<NAME>``).

    Raises:
        ConfigError: its base URL variable is blank.
        ioa_synth.llm.tokens.TokenizerError: a ``tokenizer`` given that cannot be built.
    """
    cfg = config.component(component)
    base, _ = env_endpoint(component, prefixes)
    embedded = base is None
    if embedded:
        from ioa_synth.llm.local_weights import installed_local_models

        installed = installed_local_models()
        model = local_model or (installed[-1] if installed else "embedded model")
    else:
        model = cfg.model or "(the first model the endpoint lists)"
    options = cfg.request_options
    if options.get("max_tokens") or options.get("max_completion_tokens"):
        max_tokens = int(options.get("max_tokens") or options.get("max_completion_tokens"))
        source = "request_options"
    else:
        max_tokens = EMBEDDED_MAX_TOKENS.get(component, 2048)
        source = "the embedded model's default" if embedded else "none set: the embedded model's default stands in"
    counter = counter_for(model, embedded, local_model, tokenizer)
    configured = parse_price(cfg.price_per_mtok, f"{component}.price_per_mtok") if cfg.price_per_mtok else None
    return ComponentSetup(component, embedded, model, max_tokens, source, counter, configured)


def prices_for(setups: dict[str, ComponentSetup], prices: dict[str, Price]) -> dict[str, Price | None]:
    """Each component's price: ``--prices`` by component or model, then ``price_per_mtok``."""
    return {name: price_of(name, s.model, prices, s.configured_price) for name, s in setups.items()}
