"""``ioa-synth seeds ...``: fetch, import, assign and check seed papers.

Exit codes: 0 done; 1 leakage found, short cells, or a network failure after retries;
2 bad input (arguments, files, a query the source rejects); 130 interrupted (rerun resumes).
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.error
import warnings
from pathlib import Path
from typing import Optional

import duckdb
import requests
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ioa_synth.cli.common import check_choice
from ioa_synth.cli.options import out_dir_option
from ioa_synth.protocol.cells import DOMAINS, SPLITS, TASK_TYPES
from ioa_synth.seeds.assign import parse_per_cell, run_assign
from ioa_synth.text.plural import plural
from ioa_synth.seeds.check import run_check
from ioa_synth.seeds.fetch import DEFAULT_MAX, SOURCES, FetchResult, run_fetch
from ioa_synth.seeds.importer import run_import
from ioa_synth.seeds.pace import SourceError

seeds_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Fetch, import, assign and check seed papers.")
console = Console()


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _fetch_table(result: FetchResult) -> Table:
    t = result.tally
    table = Table(title=f"seeds fetch: {result.log.source} / {result.log.domain}")
    table.add_column("outcome")
    table.add_column("records", justify="right")
    table.add_row("kept (this run)", str(t.kept))
    table.add_row("kept (query total)", str(result.total_kept))
    table.add_row("merged duplicates (versions, DOI variants)", str(t.merged))
    for reason, n in sorted(t.dropped.items()):
        table.add_row(f"dropped: {reason}", str(n))
    table.add_row("catalog: new papers", str(result.catalog_new))
    table.add_row("catalog: merged into known papers", str(result.catalog_merged))
    return table


@seeds_app.command("fetch")
def fetch_cmd(
    source: str = typer.Option(..., "--source", help=f"one of {', '.join(SOURCES)}"),
    domain: str = typer.Option(..., "--domain", help=f"one of {', '.join(DOMAINS)}"),
    out: Path = out_dir_option("build directory (records under DIR/seeds/fetched, catalog)"),
    max_records: int = typer.Option(DEFAULT_MAX, "--max", min=1, help="kept records for this query, across resumed runs"),
    query: Optional[str] = typer.Option(None, "--query", help="extra terms in the source's own query syntax"),
    since: Optional[str] = typer.Option(None, "--since", help="only papers from this date (YYYY-MM-DD)"),
    doi_file: Optional[Path] = typer.Option(None, "--doi-file", help="resolve these DOIs through OpenAlex"),
) -> None:
    """Fetch paper records of one domain from arXiv, PubMed Central or OpenAlex (resumable)."""
    check_choice("--source", source, SOURCES)  # before the progress bar, whose teardown adds a line
    check_choice("--domain", domain, DOMAINS)
    if since is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", since):
        raise _fail(f"--since must be YYYY-MM-DD (got {since!r})")
    if source == "pmc" and not os.environ.get("NCBI_EMAIL"):
        typer.echo("warning: NCBI_EMAIL is not set; NCBI asks for a contact e-mail with every request",
                   err=True)
    err_console = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("dropped {task.fields[dropped]}"), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not err_console.is_terminal) as progress:
        task = progress.add_task(f"{source}/{domain}", total=max_records, dropped=0)

        def on_batch(result: FetchResult) -> None:
            dropped = sum(result.tally.dropped.values())
            progress.update(task, completed=result.total_kept, dropped=dropped)
            if not err_console.is_terminal:  # a log: a plain line per batch instead of the bar
                typer.echo(f"{source}/{domain}: {result.total_kept}/{max_records} kept, {dropped} dropped", err=True)

        try:
            result = run_fetch(out, source, domain, max_records=max_records, query=query, since=since,
                               doi_file=doi_file, on_batch=on_batch)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        except duckdb.Error as exc:
            raise _fail(f"catalog {out}: {exc}") from None
        except SourceError as exc:
            raise _fail(f"{exc}; records fetched so far are kept, rerun to resume") from None
        except (requests.RequestException, urllib.error.URLError, http.client.HTTPException,
                ConnectionError, TimeoutError) as exc:
            raise _fail(f"network failure after retries ({exc}); rerun to resume", 1) from None
        except KeyboardInterrupt:
            raise _fail("interrupted; rerun the same command to resume", 130) from None
    console.print(_fetch_table(result))
    console.print(f"records: {result.log.records_path}", soft_wrap=True)
    if result.message:
        typer.echo(("stopped early: " if result.stopped == "retry_later" else "") + result.message, err=True)


@seeds_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., metavar="FILE", help="JSONL of paper records (e.g. seeds/snapshot.jsonl)"),
    out: Path = out_dir_option("build directory holding the catalog"),
) -> None:
    """Load a snapshot of paper records into the catalog (licences and origins kept)."""
    try:
        stats = run_import(file, out)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    except duckdb.Error as exc:
        raise _fail(f"catalog {out}: {exc}") from None
    table = Table(title=f"seeds import: {file}")
    for col in ("domain", "records", "new papers", "merged"):
        table.add_column(col, justify="left" if col == "domain" else "right")
    for domain in stats["records"]:
        table.add_row(domain, *(str(stats[k][domain]) for k in ("records", "new", "merged")))
    console.print(table)


def _assign_table(plan, per_cell: dict[str, int], reserve: int) -> Table:
    """One row per cell (domain, task type), one column per split: ``primary/target`` and,
    with ``--reserve``, ``+reserve``. Rows rather than task-type columns so every name
    stays whole at 80 columns (five task-type headers beside the domain names do not fit);
    a cell too long for the terminal folds instead of being cut."""
    splits = [s for s in SPLITS if per_cell.get(s)]
    table = Table(title="seeds assign: primary/target" + (f" +reserve (of {reserve})" if reserve else "") + " per cell",
                  caption="short cells in red")
    table.add_column("domain", overflow="fold")
    table.add_column("task type", overflow="fold")
    for split in splits:
        table.add_column(split, justify="right", overflow="fold")
    count: dict[tuple, int] = {}
    for row in plan.rows:
        key = (row["split"], row["domain"], row["task_type"], row["role"])
        count[key] = count.get(key, 0) + 1
    for domain in DOMAINS:
        labels = [domain, plural(plan.available.get(domain, 0), "paper")]
        for i, task in enumerate(TASK_TYPES):
            values = []
            for split in splits:
                p, r = count.get((split, domain, task, "primary"), 0), count.get((split, domain, task, "reserve"), 0)
                text = f"{p}/{per_cell[split]}" + (f" +{r}" if reserve else "")
                short = (split, domain, task) in plan.short or (split, domain, task) in plan.reserve_short
                values.append(f"[red]{text}[/red]" if short else text)
            table.add_row(labels[i] if i < len(labels) else "", task, *values, end_section=i == len(TASK_TYPES) - 1)
    return table


def _by_split(cells) -> str:
    """``train 27, val 9, test 7``: how many of ``cells`` ((split, domain, task) keys) per split."""
    return ", ".join(f"{split} {n}" for split in SPLITS if (n := sum(key[0] == split for key in cells)))


def _short_summary(plan) -> str:
    """How many cells lack primary tuples, per split: the one line that reports them."""
    return (f"{plural(len(plan.short), 'cell')} short of primary tuples ({_by_split(plan.short)}; "
            f"{plural(sum(plan.short.values()), 'tuple')} missing, see the table)")


def _report_reserve_short(plan, reserve: int) -> None:
    """One warning line for all the cells that got fewer than ``reserve`` reserve tuples."""
    if plan.reserve_short:
        typer.echo(f"warning: {plural(len(plan.reserve_short), 'cell')} have fewer than "
                   f"{plural(reserve, 'reserve tuple')} ({_by_split(plan.reserve_short)}; see the +N counts in "
                   "the table): a case discarded in those cells is not replaced", err=True)


@seeds_app.command("assign")
def assign_cmd(
    out: Path = out_dir_option("build directory holding the catalog"),
    per_cell: str = typer.Option("train=40,val=4,test=10", "--per-cell", help="primary tuples per cell and split"),
    rng_seed: int = typer.Option(0, "--rng-seed", help="same catalog + seed = same assignment"),
    reserve: int = typer.Option(0, "--reserve", min=0, help="reserve tuples per cell and split"),
    allow_short: bool = typer.Option(False, "--allow-short", help="write the assignment even if cells are short"),
    replace: bool = typer.Option(False, "--replace",
                                 help="delete seed files of an earlier assignment that this one does not write"),
) -> None:
    """Draw disjoint seed tuples per split from the catalog's papers; write DIR/seeds/<split>.jsonl."""
    try:
        counts = parse_per_cell(per_cell)
        plan, written = run_assign(out, counts, reserve=reserve, rng_seed=rng_seed, allow_short=allow_short,
                                   replace=replace)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    except duckdb.Error as exc:
        raise _fail(f"catalog {out}: {exc}") from None
    console.print(_assign_table(plan, counts, reserve))
    if plan.short and not allow_short:
        raise _fail(f"{_short_summary(plan)}; nothing written (add papers, lower --per-cell, or pass --allow-short)",
                    1)
    if plan.short:
        typer.echo(f"warning: {_short_summary(plan)}; written anyway (--allow-short)", err=True)
    _report_reserve_short(plan, reserve)
    for path in written:
        console.print(f"wrote {path}", soft_wrap=True)


@seeds_app.command("check")
def check_cmd(out: Path = out_dir_option("build directory holding the assignment")) -> None:
    """Leakage report: exit 1 if any paper is used in two splits (or twice in one)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            findings, counts = run_check(out)
        for warning in caught:
            typer.echo(f"warning: {warning.message}", err=True)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    except duckdb.Error as exc:
        raise _fail(f"catalog {out}: {exc}") from None
    table = Table(title="seeds check: seed tuples per split")
    for split in counts:
        table.add_column(split, justify="right")
    table.add_row(*(str(n) for n in counts.values()))
    console.print(table)
    if not findings:
        console.print("no leakage: every paper is used once")
        return
    for f in findings:
        typer.echo(f"{f.kind}: {f.titles[0][:80]!r} in {', '.join(f.splits)}: {', '.join(f.seed_ids)} "
                   f"(shared {', '.join(f.shared[:2])})", err=True)
    leaks = sum(f.kind == "leak" for f in findings)
    raise _fail(f"{plural(leaks, 'paper')} leaked across splits, {plural(len(findings) - leaks, 'paper')} reused "
                "within a split", 1)
