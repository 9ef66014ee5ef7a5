"""Prices of a component's tokens, in US dollars per million tokens, for the estimate and
the spending shown by ``status`` (:mod:`ioa_synth.runs.spend`).

Given per component or per model, in ``--prices FILE`` (a JSON object whose keys are
component names or model names) or as ``price_per_mtok`` in a component's ``--config``
block (the prices file wins)::

    {"generator": {"input": 2.50, "output": 10.00},
     "gpt-4o-mini": {"input": 0.15, "output": 0.60, "batch": 0.5}}

``batch`` is the batch price: a share of the live prices (default 0.5, the providers'
half price) or ``{"input": ..., "output": ...}`` per million tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ioa_synth.core.jsonl import read_json
from ioa_synth.core.validation import first_problem

#: Batch price as a share of the live price when none is given (OpenAI, Together: 50% off).
BATCH_SHARE = 0.5


class PricesError(ValueError):
    """A prices file or ``price_per_mtok`` that cannot be used; one line naming it."""


class BatchPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)


class Price(BaseModel):
    """USD per million ``input`` (prompt) and ``output`` (completion) tokens, and ``batch``
    (a share of those, or its own prices)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    batch: float | BatchPrice = Field(default=BATCH_SHARE)

    @field_validator("batch")
    @classmethod
    def _share(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not 0 <= v <= 1:  # NaN fails too
            raise ValueError("must be a share of the live price from 0 to 1 (0.5: half price), or "
                             '{"input": ..., "output": ...} in USD per million tokens')
        return v

    def batch_prices(self) -> tuple[float, float]:
        """(input, output) USD per million tokens in a batch."""
        if isinstance(self.batch, BatchPrice):
            return self.batch.input, self.batch.output
        return self.input * self.batch, self.output * self.batch

    def cost(self, prompt_tokens: float, completion_tokens: float, batch: bool = False) -> float:
        """USD of that many tokens, live or in a batch."""
        i, o = self.batch_prices() if batch else (self.input, self.output)
        return (prompt_tokens * i + completion_tokens * o) / 1e6


def parse_price(data: Any, where: str) -> Price:
    """A :class:`Price` from JSON ``data``; ``where`` names it in the error.

    Raises:
        PricesError: not an object of non-negative numbers.
    """
    try:
        return Price.model_validate(data)
    except ValidationError as exc:
        loc, msg = first_problem(exc)
        raise PricesError(f"{where}{'.' + loc if loc else ''}: {msg}") from None


def load_prices(path: Path) -> dict[str, Price]:
    """``--prices FILE``: ``{component or model: Price}``.

    Raises:
        PricesError: unreadable, not JSON, not an object, or a price that is not a
            non-negative number.
    """
    p = Path(path)
    data = read_json(p, PricesError)
    if not isinstance(data, dict):
        raise PricesError(f"{p}: the prices must be a JSON object of components or models, e.g. "
                          '{"generator": {"input": 2.5, "output": 10}}')
    return {str(k): parse_price(v, f"{p}: {k}") for k, v in data.items() if not str(k).startswith("_")}


def price_of(component: str, model: str, prices: dict[str, Price], configured: Price | None) -> Price | None:
    """The price of ``component`` (running ``model``): by component name, then model
    name, in ``prices``; then ``configured`` (``price_per_mtok``); ``None`` when none is given."""
    return prices.get(component) or prices.get(model) or configured
