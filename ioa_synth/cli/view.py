"""``ioa-synth view PATH...``: read results folders in a browser (docs/view.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_SHARE, fail


@app.command(rich_help_panel=PANEL_SHARE)
def view(
    paths: List[Path] = typer.Argument(..., metavar="PATH", help="Results folders of any kind (build, evaluate, "
                                       "belief, collab, meeting session, export, reward), or folders holding some"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (the default serves this machine only)"),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port; the next free one when it is in use"),
) -> None:
    """Serve a read-only web viewer of results folders: cases, judges, regenerations, probes,
    transcripts, calls (prints the URL; Ctrl-C stops). Never writes into a folder; a folder a
    run is writing shows what it added on reload."""
    try:
        from ioa_synth.view.app import make_app
    except ImportError as exc:  # starlette or uvicorn missing
        fail(f"ioa-synth view needs starlette and uvicorn ({exc}); install them: pip install 'ioa-synth[view]'")
    from ioa_synth.view.read.folders import ViewError, open_library
    from ioa_synth.view.server import LOOPBACK, ServeError, bind, serve, url

    try:
        library = open_library(paths)
    except ViewError as exc:
        fail(str(exc))
    try:
        try:
            sock = bind(host, port)
        except ServeError as exc:
            fail(str(exc))
        if host not in LOOPBACK:
            typer.echo(f"warning: --host {host} serves these folders to every machine that can reach this one "
                       "(no login, no encryption); the default 127.0.0.1 serves this machine only", err=True)
        bound = sock.getsockname()[1]
        kinds = ", ".join(f"{f.name} ({f.kind})" for f in library.folders)
        typer.echo(f"{url(host, bound)}  ({len(library.folders)} folder(s): {kinds}); Ctrl-C stops")
        sys.stdout.flush()
        serve(make_app(library), sock)
    finally:
        library.close()
