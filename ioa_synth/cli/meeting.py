"""``ioa-synth meeting import|probe|serve|answers|report``: the live-meeting study (paper §6.2,
App. D.5) on a team's own meetings."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ioa_synth.cli.batch_options import batch_dir_option, batch_option, create_batch_dir
from ioa_synth.cli.label_types import load_type_labels, types_option
from ioa_synth.cli.meeting_inputs import open_session as _session, probe_inputs
from ioa_synth.cli.common import (check_choice, check_out_folder, config_or_fail, fail, llm_command_errors,
                                  writable_out)
from ioa_synth.cli.options import config_option, detector_option, json_option, local_model_option, seed_option
from ioa_synth.cli.options import prompts_option
from ioa_synth.text.plural import plural

meeting_app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                          help="Probe real meetings: import a transcript, write blinded question sets, collect "
                               "answers and labels on web pages, report per detector.")


@meeting_app.command("import")
def import_(
    file: Path = typer.Argument(..., metavar="FILE", help="Transcript: WebVTT, SRT, Whisper/WhisperX JSON or 'Name: text' lines"),
    out: Path = typer.Option(..., "--out", help="New session folder"),
    fmt: str = typer.Option("auto", "--format", help="auto, vtt, srt, whisper or text"),
    alias: List[str] = typer.Option([], "--alias", help="\"Full Name=Nick\": a nickname of a speaker, replaced "
                                    "like the name (repeatable)"),
) -> None:
    """Read a transcript, replace every name by a pseudonym, write a new session folder."""
    from ioa_synth.meetings.session import Session
    from ioa_synth.meetings.transcripts import FORMATS, TranscriptError, read_transcript

    check_choice("--format", fmt, FORMATS)
    aliases = []
    for spec in alias:
        name, sep, nick = spec.partition("=")
        if not sep or not name.strip() or not nick.strip():
            fail(f"--alias {spec!r}: expected \"Full Name=Nick\" (a speaker's name, then the nickname)")
        aliases.append((name.strip(), nick.strip()))
    check_out_folder(out)
    if out.is_dir() and any(out.iterdir()):
        fail(f"--out {out} is not empty; import each transcript into a new session folder")
    writable_out(out)
    try:
        found, turns = read_transcript(file, fmt)
    except TranscriptError as exc:
        fail(str(exc))
    try:
        session = Session.create(out, found, file.name, turns, aliases)
    except ValueError as exc:
        fail(str(exc))
    typer.echo(f"{out}: {plural(len(session.turns), 'turn')} ({found}), participants "
               + ", ".join(f"{p.id} = {p.pseudonym}" for p in session.participants)
               + f"; the name map stays in {out / 'private'}")


@meeting_app.command()
def probe(
    session_dir: Path = typer.Argument(..., metavar="SESSION_DIR", help="Session folder (from 'meeting import')"),
    detector: List[str] = detector_option(),
    seed: Optional[int] = seed_option("Seed of the blind label assignment (default: per session)", default=None),
    local_model: Optional[str] = local_model_option(),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Each detector writes one question set (transcript only); the sets get blind labels A, B, C ...

    Exit status: 0, 1 a detector gave no usable set, 2 bad input or setup, 75 a --batch-dir
    wave waits for its output file, 130 interrupted.
    """
    from ioa_synth.llm.errors import LLMCallError
    from ioa_synth.meetings.probe import probe_session
    from ioa_synth.meetings.session import SessionError

    inputs = probe_inputs(session_dir, detector, batch, batch_dir)
    create_batch_dir(inputs.batch)
    done = lambda name, n: typer.echo(f"detector {name}: {n} question(s)", err=True)  # noqa: E731
    said: list[str] = []

    def note(text: str) -> None:  # the batches in flight: said when it changes, not at every poll
        if not said or said[-1] != text:
            said.append(text)
            typer.echo(text, err=True)
    try:
        with llm_command_errors():
            counts = probe_session(inputs.session, inputs.detectors, seed, local_model, on_done=done,
                                   batch=inputs.batch, note=note)
    except SessionError as exc:
        fail(str(exc))
    except LLMCallError as exc:
        fail(f"a detector gave no usable question set ({exc}); run the same command again to retry", code=1)
    typer.echo(f"{session_dir}: blinded sets " + ", ".join(f"{label} ({plural(n, 'question')})" for label, n in counts.items())
               + f"; next: ioa-synth meeting serve {session_dir}")


@meeting_app.command()
def serve(
    session_dir: Path = typer.Argument(..., metavar="SESSION_DIR", help="Session folder with question sets"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0 for other devices)"),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port"),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the current forms as files into this folder "
                                          "instead of serving"),
) -> None:
    """Serve the answer pages and print one personal link per participant (Ctrl-C stops)."""
    from ioa_synth.meetings.exchange import export_forms
    from ioa_synth.meetings.forms import FormError
    from ioa_synth.meetings.session import SessionError
    from ioa_synth.meetings.web import make_app

    session = _session(session_dir)
    try:
        if export is not None:
            check_out_folder(export, "--export")
            paths = export_forms(session, export)
            typer.echo(f"{len(paths)} file(s) in {export}; fill the JSON forms, then: ioa-synth meeting answers "
                       f"{session_dir} FILE ...")
            return
        app = make_app(session_dir)
    except (SessionError, FormError) as exc:
        fail(str(exc))
    names = {pid: name for name, pid in session.read("private", "names.json", default={}).items()}
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    for token, pid in session.links().items():
        typer.echo(f"{pid} ({session.pseudonym(pid)}; {names.get(pid, '?')}): http://{shown}:{port}/p/{token}")
    typer.echo("serving; Ctrl-C stops (answers are saved as they arrive)", err=True)
    sys.stdout.flush()  # the links must reach a pipe before the server blocks
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")


@meeting_app.command()
def answers(
    session_dir: Path = typer.Argument(..., metavar="SESSION_DIR", help="Session folder"),
    files: List[Path] = typer.Argument(..., metavar="FILE", help="Filled forms from 'meeting serve --export'"),
) -> None:
    """Import filled forms: all are checked first, then all are stored (or none)."""
    from ioa_synth.meetings.exchange import import_forms
    from ioa_synth.meetings.forms import FormError
    from ioa_synth.meetings.session import SessionError

    session = _session(session_dir)
    try:
        stored = import_forms(session, files)
    except (FormError, SessionError) as exc:
        fail(str(exc))
    typer.echo("stored: " + ", ".join(f"{pid} {kind}" for pid, kind in stored.items()))


@meeting_app.command()
def report(
    session_dirs: List[Path] = typer.Argument(..., metavar="SESSION_DIR", help="Finished session folders"),
    rule: str = typer.Option("any", "--rule", help="Validated disagreement: any, majority or unanimous 'valid' labels"),
    as_json: bool = json_option("Print the report as JSON on stdout instead of tables, and write no file unless "
                                "--out is given"),
    out: Optional[Path] = typer.Option(None, "--out", help="Where report.json and report.md go (default: the "
                                       "session folder; needed with several sessions unless --json)"),
    merge_judge: bool = typer.Option(False, "--merge-judge", help="Pooled recall: merge the validated discoveries "
                                     "with the merge_judge component (MERGE_JUDGE_BASE_URL or the embedded model)"),
    config: Optional[Path] = config_option("its merge_judge block"),
    local_model: Optional[str] = local_model_option("of the merge judge"),
    types: Optional[Path] = types_option("adds validated disagreements per type and detector (Table 20)"),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Per session and detector (blinding lifted); across sessions pooled as the paper (Valid, Validity,
    PR pooled, Likert per participant, best-set majority), per-session means as an extra view, and the
    paired bootstrap over sessions.

    Shows tables and writes report.json and report.md (into the session folder or --out);
    with --json prints the report as JSON instead and writes the files only into --out."""
    from ioa_synth.llm.errors import LLMCallError
    from ioa_synth.meetings.pooled import pooled_recall
    from ioa_synth.meetings.render import markdown, tables
    from ioa_synth.meetings.report import RULES, build_report
    from ioa_synth.meetings.session import SessionError
    from ioa_synth.reports.output import wide_console
    from ioa_synth.core.atomic import write_json_atomic, write_text_atomic

    check_choice("--rule", rule, tuple(RULES))
    if out is None and len(session_dirs) > 1 and not as_json:
        fail("several sessions: give --out FOLDER for report.json and report.md (or --json to print the report)")
    target = check_out_folder(out, "--out") or session_dirs[0]
    write = out is not None or not as_json
    sessions = [_session(d) for d in session_dirs]
    seen: dict[str, Path] = {}
    for d, s in zip(session_dirs, sessions):
        if s.session_id in seen:  # the same meeting twice would count as two, and pair with itself
            fail(f"{d} is the session {seen[s.session_id]} again (session_id {s.session_id}); give each meeting once")
        seen[s.session_id] = d
    cfg = config_or_fail(config)
    type_of = load_type_labels(types) if types is not None else None
    merge = (lambda s, v: pooled_recall(s, v, rule, cfg, local_model)) if merge_judge else None
    try:
        with llm_command_errors():
            result = build_report(sessions, rule, merge)
    except SessionError as exc:
        fail(str(exc))
    except LLMCallError as exc:
        fail(f"the merge judge gave no usable grouping ({exc}); run the same command again to retry", code=1)
    extra = []
    if type_of is not None:
        from ioa_synth.typelabels.tables import meeting_table, meeting_types

        result["types"] = {"labels": str(types)} | meeting_types(result, type_of)
        extra.append(meeting_table(result["types"]))
    if write:
        from ioa_synth.evaluate.analysis.render import to_markdown

        write_json_atomic(target / "report.json", result)
        write_text_atomic(target / "report.md", markdown(result) + "".join("\n" + to_markdown(t) for t in extra))
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        from ioa_synth.evaluate.analysis.render import to_rich

        console = wide_console()
        for table in [*tables(result), *map(to_rich, extra)]:
            console.print(table)
    if write:
        typer.echo(f"wrote {target / 'report.json'} and {target / 'report.md'}", err=True)
