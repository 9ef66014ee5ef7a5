"""Pass rates a build estimate assumes (``ioa-synth estimate build --pass-rates FILE``).

Per stage (``stage1``, ``stage2``), each a fraction from 0 to 1, defined as ``status``
measures them (:mod:`ioa_synth.build.passrates`):

- ``first_attempt``: share of the cases reaching the stage whose first generation passes
  (content rules, gates and θ);
- ``after_regeneration``: share of them whose stage passes at all, at the first attempt
  *or* at the one regeneration (App. B: a stage failing twice discards the case). It is
  cumulative, so it is never below ``first_attempt``; a file (or a file with the defaults or
  the rates measured in ``--out`` filling its gaps) saying otherwise is refused;
- ``judged``: share of generations that reach the judge (the rest broke the rules or gates).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ioa_synth.core.jsonl import read_json
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import Measured

KEYS = ("first_attempt", "after_regeneration", "judged")

#: Stated pass rates of a build directory that has measured none: per stage, the share of
#: first attempts passing, of stages passing after the regeneration, of generations judged.
DEFAULT_RATES: dict[str, dict[str, float]] = {
    "stage1": {"first_attempt": 0.7, "after_regeneration": 0.9, "judged": 1.0},
    "stage2": {"first_attempt": 0.8, "after_regeneration": 0.95, "judged": 1.0},
}


class PassRatesError(ValueError):
    """An unusable ``--pass-rates`` file or combination; the message is one line."""


class StageRates(BaseModel):
    """The rates given for one stage (each may be left out)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    first_attempt: Optional[float] = Field(None, ge=0, le=1)
    after_regeneration: Optional[float] = Field(None, ge=0, le=1)
    judged: Optional[float] = Field(None, ge=0, le=1)


class GivenRates(BaseModel):
    """A ``--pass-rates`` file: ``{"stage1"|"stage2": {first_attempt|after_regeneration|judged: rate}}``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    stage1: Optional[StageRates] = None
    stage2: Optional[StageRates] = None


def load_pass_rates(path: Path) -> dict[str, dict[str, float]]:
    """The rates of a ``--pass-rates`` file, ``{stage: {key: rate}}`` (keys left out are absent).

    Raises:
        PassRatesError: unreadable or not JSON, another shape, a rate outside 0-1, or
            ``after_regeneration`` below ``first_attempt`` in a stage.
    """
    data = read_json(path, PassRatesError)
    try:
        given = GivenRates.model_validate(data)
    except ValidationError:
        raise PassRatesError(f"{path}: give {{\"stage1\"|\"stage2\": {{{'|'.join(KEYS)}: a rate from 0 to 1}}}}") \
            from None
    rates = {stage: value.model_dump(exclude_none=True) for stage, value in given if value is not None}
    check_coherent(rates, {stage: {k: "given" for k in r} for stage, r in rates.items()}, path)
    return rates


def assumed_rates(catalog: Catalog | None, split: str, measured: Measured, given: dict[str, dict[str, float]]
                  ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """The rates an estimate of ``split`` assumes per stage, and where each comes from:
    ``given`` (a ``--pass-rates`` file), else ``measured`` (the build directory's θ pass
    rates, :func:`ioa_synth.build.passrates.pass_rates`, and its share of generations judged
    from ``measured``), else ``default`` (:data:`DEFAULT_RATES`).

    Raises:
        PassRatesError: ``given`` with the rates filling its gaps puts a stage's
            ``after_regeneration`` below its ``first_attempt``.
    """
    found: dict[str, Any] = {}
    if catalog is not None and measured.calls:  # (polars loads only when there is something to read)
        from ioa_synth.build.passrates import pass_rates

        found = pass_rates(catalog).get(split, {})
    rates: dict[str, dict[str, float]] = {}
    source: dict[str, dict[str, str]] = {}
    for stage in ("stage1", "stage2"):
        s = int(stage[-1])
        gens, judges = measured.calls.get((s, "generator")), measured.calls.get((s, "judge"))
        seen = {k: v for k, v in (found.get(stage) or {}).items() if k in ("first_attempt", "after_regeneration")
                and v is not None}
        if gens and judges is not None:
            seen["judged"] = min(1.0, judges / gens)
        rates[stage], source[stage] = {}, {}
        for key, default in DEFAULT_RATES[stage].items():
            for origin, table in (("given", given.get(stage) or {}), ("measured", seen)):
                if key in table:
                    rates[stage][key], source[stage][key] = float(table[key]), origin
                    break
            else:
                rates[stage][key], source[stage][key] = default, "default"
    if given:  # the defaults or measured rates filling a file's gaps must fit what it gives
        check_coherent(rates, source)
    return rates, source


def check_coherent(rates: dict[str, dict[str, float]], source: dict[str, dict[str, str]],
                   path: Path | str = "--pass-rates") -> None:
    """Refuse ``rates`` (``{stage: {key: rate}}``, ``source`` saying where each comes from:
    ``given``, ``measured``, ``default``) whose ``after_regeneration`` is below ``first_attempt``.

    Raises:
        PassRatesError: naming the stage, both rates and where each comes from.
    """
    for stage, r in rates.items():
        first, after = r.get("first_attempt"), r.get("after_regeneration")
        if first is None or after is None or after >= first:
            continue
        where = source.get(stage, {})

        def said(key: str) -> str:
            origin = where.get(key, "given")
            return "" if origin == "given" else f" ({'the default' if origin == 'default' else 'measured in --out'})"

        raise PassRatesError(
            f"{path}: {stage} after_regeneration {after:g}{said('after_regeneration')} is below first_attempt "
            f"{first:g}{said('first_attempt')}: after_regeneration is the share of cases passing the stage at the "
            f"first attempt or at its regeneration, so it is at least first_attempt"
            + ("" if all(where.get(k, "given") == "given" for k in ("first_attempt", "after_regeneration"))
               else f"; give both for {stage}"))


__all__ = ["DEFAULT_RATES", "GivenRates", "KEYS", "PassRatesError", "StageRates", "assumed_rates", "check_coherent",
           "load_pass_rates"]
