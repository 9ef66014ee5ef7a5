"""Options that several commands take, each declared once: flag, type, bounds, check and
help text.

A command uses them as parameter defaults, the way typer takes ``typer.Option(...)``::

    from ioa_synth.cli.options import config_option, local_model_option, workers_option

    @app.command()
    def run(
        out: Path = typer.Option(..., "--out", help="Results folder"),
        config: Optional[Path] = config_option(),
        workers: int = workers_option("Calls"),
        local_model: Optional[str] = local_model_option(),
    ) -> None: ...

Each factory returns a fresh ``typer.Option``. Where the help text says something about
the command (what ``--limit`` counts, what the workers are), the command passes that part;
the rest of the text is the same everywhere. Options with a fixed set of values check them
in a callback: a bad value is one ``error:`` line and exit 2 before the command runs.
"""

from __future__ import annotations

from typing import Any, Optional

import typer

from ioa_synth.cli.common import build_dir_callback, check_choice
from ioa_synth.llm.local_weights import LOCAL_MODELS
from ioa_synth.protocol.cells import SPLITS

#: Help of ``--out`` for a build directory (build, status, show, regenerate, audit, ...).
BUILD_DIR_HELP = "Build directory (records, catalog.duckdb)"
#: The default near-duplicate threshold, equal to ``ioa_synth.build.dedup.DEFAULT_THRESHOLD``
#: (not imported here: that module loads datasketch, and every ``--help`` would pay for it).
DEFAULT_THRESHOLD = 0.7
#: Upper bound of ``--workers``: requests in flight at once.
MAX_WORKERS = 256


def out_dir_option(help: str = BUILD_DIR_HELP) -> Any:
    """``--out DIR``, a build directory (required), checked by
    :func:`~ioa_synth.cli.common.build_dir_callback`: a file, a results folder of another
    command or a meeting session folder is refused with one line."""
    return typer.Option(..., "--out", help=help, callback=build_dir_callback)


def config_option(detail: str | None = None) -> Any:
    """``--config FILE``: the per-component LLM settings (``ioa_synth.llm.config``), optional.
    ``detail`` (e.g. which block the command reads) follows the common text."""
    return typer.Option(None, "--config", help="Per-component LLM settings (JSON)" + (f", {detail}" if detail else ""))


def _local_model_choice(value: Optional[str]) -> Optional[str]:
    check_choice("--local-model", value, LOCAL_MODELS)
    return value


def local_model_option(detail: str | None = None) -> Any:
    """``--local-model NAME``: the embedded model serving the components that have no base
    URL; one of :data:`~ioa_synth.llm.local_weights.LOCAL_MODELS` (checked). ``detail``
    says which component uses it when that is not every one."""
    return typer.Option(None, "--local-model", callback=_local_model_choice,
                        help=f"{' or '.join(LOCAL_MODELS)} (embedded model{' ' + detail if detail else ''})")


def workers_option(what: str, default: int = 4) -> Any:
    """``--workers N``: how many ``what`` (cases, calls ...) are in flight at once, 1 to
    :data:`MAX_WORKERS`. On the embedded model alone a command lowers it
    (:func:`~ioa_synth.cli.common.lowered_workers`)."""
    return typer.Option(default, "--workers", min=1, max=MAX_WORKERS, help=f"{what} in flight at once")


def limit_option(help: str) -> Any:
    """``--limit N`` (N ≥ 1, default: no limit); ``help`` says which N the command keeps."""
    return typer.Option(None, "--limit", min=1, help=help)


#: Largest ``--seed``: 2**32 - 1, the range every consumer of a seed here takes. numpy's
#: ``default_rng`` refuses a negative seed and its legacy ``numpy.random.seed`` (and
#: scikit-learn's ``random_state``) anything past 2**32 - 1; llama.cpp's server keeps a
#: request's ``seed`` as an unsigned 32-bit value, while the OpenAI API and vLLM take a
#: signed 64-bit one. A command adds the seed to each component's seed base before the
#: per-call seed is reduced to ``[0, 2**31)`` (``ioa_synth.llm.request.SEED_RANGE``), and
#: stores it in ``run.json`` and ``catalog.duckdb`` as given, so the intersection,
#: 0..2**32 - 1, is what a seed may be.
MAX_SEED = 2**32 - 1


def seed_option(help: str, default: Optional[int] = 0) -> Any:
    """``--seed S``: an RNG seed from 0 to :data:`MAX_SEED` (a value outside is one
    ``error:`` line and exit 2 before the command runs); ``help`` names what it seeds."""
    return typer.Option(default, "--seed", min=0, max=MAX_SEED,
                        help=f"{help} (0 to {MAX_SEED:,}: the seeds numpy and llama.cpp take)")


def sample_option(what: str = "cases", strata: str = "cell (domain x task type)") -> Any:
    """``--sample N`` (N >= 1, default: every case): a random sample of ``what`` stratified by
    ``strata``, drawn with ``--seed`` (:func:`ioa_synth.protocol.sample.stratified_sample`,
    whose docstring gives the allocation rule). Unlike ``--limit`` (the first N by path)."""
    return typer.Option(None, "--sample", min=1, metavar="N",
                        help=f"Random sample of N {what} stratified by {strata}: one per stratum when N >= "
                             "strata, the rest in proportion to their size (largest remainders), fewer strata "
                             "drawn at random when N < strata; the same --seed gives the same sample; N above "
                             f"the number of {what} is an error. --limit still takes the first N by path")


def json_option(help: str = "Print JSON instead of tables") -> Any:
    """``--json``: print the command's result as JSON on stdout; ``help`` says which JSON
    and what it replaces when that is not a table."""
    return typer.Option(False, "--json", help=help)


def _split_choice(value: Optional[str]) -> Optional[str]:
    check_choice("--split", value, SPLITS)
    return value


def split_option(help: str | None = None) -> Any:
    """``--split NAME``, one of train, val, test (checked). Without ``help`` it is required;
    with it, optional (``help`` says what no value means)."""
    if help is None:
        return typer.Option(..., "--split", help="train, val or test", callback=_split_choice)
    return typer.Option(None, "--split", help=help, callback=_split_choice)


def threshold_option(help: str) -> Any:
    """``--threshold J``: Jaccard similarity of a near-duplicate pair (0.01 to 1, default
    :data:`DEFAULT_THRESHOLD`; ``ioa_synth.build.dedup``); ``help`` says what it decides."""
    return typer.Option(DEFAULT_THRESHOLD, "--threshold", min=0.01, max=1.0, help=help)


def _access_choice(value: str) -> str:
    from ioa_synth.probing.access import ACCESS_LEVELS

    check_choice("--access", value, ACCESS_LEVELS)
    return value


def access_option() -> Any:
    """``--access LEVEL``: what the prober sees (``ioa_synth.evaluate.access``), checked."""
    return typer.Option("public", "--access", callback=_access_choice,
                        help="Prober access: public, thoughts, private, private+thoughts")


def detector_option(required: bool = True) -> Any:
    """``--detector NAME=CONFIG`` (repeatable): a named prober configuration; parse each
    with ``ioa_synth.probing.detectors.parse_detector``. Optional when ``required`` is false
    (the value is then an empty list)."""
    return typer.Option(... if required else [], "--detector",
                        help="NAME=CONFIG: a prober configuration (JSON config file with a \"prober\" block); "
                             "repeat for each detector")



def prompts_option() -> Any:
    """``--prompts DIR``: templates replacing the packaged ones by name for this run
    (docs/prompts.md), over the config's ``"prompts"`` key. Declare it last among the
    command's options: with no ``--prompts`` its check then sees the parsed ``--config``.
    Read, checked and installed by :func:`ioa_synth.cli.prompts.apply_prompts` while the
    command line is parsed, so that a bad folder is one ``error:`` line (exit 2) before
    anything is written or sent."""
    from ioa_synth.cli.prompts import apply_prompts

    return typer.Option(None, "--prompts", callback=apply_prompts, metavar="DIR",
                        help="Folder of prompt templates replacing the project's by name (default: the "
                             "config's \"prompts\" key; see 'ioa-synth prompts list')")
