"""A resolved component endpoint (:class:`Endpoint`): URL, model, key and request
settings of one component, and the defaults an embedded model gets when the config gives
none. Which endpoints a command opens (and starting the embedded model) is
:mod:`ioa_synth.llm.endpoints`; the client that calls one is :mod:`ioa_synth.llm.client`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ioa_synth.llm.config import ComponentConfig, StructuredOutput
from ioa_synth.llm.serving import ServerSlots

#: ``max_tokens`` sent to the embedded model when the config gives none: a schema alone
#: does not guarantee that a small model's output ends.
EMBEDDED_MAX_TOKENS = {"generator": 4096, "judge": 1536, "audit_judge": 1536,
                       "prober": 1536, "simulator": 512, "validity_filter": 1024,
                       # the belief study: short chat messages, one-sentence answers, small labels
                       "item_writer": 512, "screener": 256, "agent": 256, "belief_judge": 256, "stance_judge": 384,
                       # collaboration: a chat turn, a stop-vote or answer, a whole solution
                       "discusser": 1024,
                       # type labels: one short type per disagreement of a case
                       "type_judge": 512}

#: Seconds per request to the embedded model when the config sets no ``timeout``: counted
#: from when the server starts on the request (:mod:`ioa_synth.llm.serving`), long enough
#: for a ``max_tokens`` reply on a slow or busy CPU.
EMBEDDED_TIMEOUT = 3600.0


@dataclass
class Endpoint:
    """A resolved component endpoint. ``api_key`` is never written anywhere."""

    component: str
    base_url: str
    model: str
    api_key: str = field(repr=False)
    temperature: float | None
    structured_output: StructuredOutput
    json_schema_strict: bool
    request_options: dict[str, Any]
    max_retries: int
    content_retries: int
    timeout: float
    embedded: bool = False
    max_wait: float = 300.0
    seed: int | None = None
    #: Requests the server decodes at once, shared by every client of that server
    #: (``None``: no limit known); replies from such a server are streamed.
    slots: ServerSlots | None = field(default=None, repr=False, compare=False)
    plan: str | None = None  # the generator's plan strictness (ioa_synth.protocol.plan_modes)
    #: The embedded server that decodes (``ioa_synth.llm.llama_server.SERVER_ID``), fingerprinted:
    #: another server build samples other replies from the same seed. ``None`` for a remote endpoint.
    server: str | None = None

    @classmethod
    def from_config(cls, component: str, cfg: ComponentConfig, base_url: str, model: str,
                    api_key: str | None, embedded: bool) -> "Endpoint":
        """Build an endpoint from a component's config and its resolved URL, model and key."""
        so = cfg.structured_output or "json_schema"
        options = dict(cfg.request_options)
        if embedded and not {"max_tokens", "max_completion_tokens"} & set(options):
            options["max_tokens"] = EMBEDDED_MAX_TOKENS.get(component, 2048)
        timeout = cfg.timeout if "timeout" in cfg.model_fields_set or not embedded else EMBEDDED_TIMEOUT
        return cls(component=component, base_url=base_url, model=model, api_key=api_key or "no-key",
                   temperature=cfg.effective_temperature(component), structured_output=so,
                   json_schema_strict=cfg.json_schema_strict, request_options=options,
                   max_retries=cfg.max_retries, content_retries=cfg.content_retries, timeout=timeout,
                   embedded=embedded, max_wait=cfg.max_wait, seed=cfg.effective_seed(),
                   plan=(cfg.plan or ("scaffold" if embedded else "protocol")) if component == "generator" else None)

    def identity(self) -> dict[str, Any]:
        """What defines this endpoint's replies, for the fingerprint: model and request
        settings, and for the embedded model the server build that decodes it; not the base URL
        nor the key (the same model on another host or port resumes)."""
        plan = {"plan": self.plan} if self.plan else {}  # the generator's plan strictness
        server = {"server": self.server} if self.server else {}
        return {"model": self.model, "seed": self.seed,
                "temperature": self.temperature, "structured_output": self.structured_output,
                "json_schema_strict": self.json_schema_strict, "request_options": self.request_options,
                **plan, **server}
