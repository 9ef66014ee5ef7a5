"""``ioa-synth view`` on bad input (one ``error:`` line, exit 2), on a port in use (the next
free one, said on stderr), with a wider ``--host`` (a warning), and Ctrl-C (stops, removes
its copies). The viewer never writes into a folder."""

from __future__ import annotations

import hashlib
import signal
import socket
import tempfile
from pathlib import Path

import httpx

from ioa_helpers import one_line_error

from .conftest import start_view, stop


def test_bad_paths_are_one_error_line(cli, tmp_path):
    one_line_error(cli("view", tmp_path / "missing"), "missing: no such folder")
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    one_line_error(cli("view", tmp_path / "notes.txt"), "notes.txt is a file, not a results folder")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.json").write_text("{}", encoding="utf-8")
    one_line_error(cli("view", tmp_path / "plain"), "plain is not a results folder and holds none")
    # one bad path among good ones is refused too
    one_line_error(cli("view", tmp_path / "plain", tmp_path / "missing"), "is not a results folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "plain"]


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_port_in_use_host_warning_ctrl_c_and_nothing_written(folders):
    root = folders["build"].parent
    before = _tree(root)
    copies = set(Path(tempfile.gettempdir()).glob("ioa-synth-view-*"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc, url = start_view(root, port=port, extra=("--host", "0.0.0.0"))
        try:
            assert url.endswith(f":{port + 1}")
            for path in ("/", "/f/0/", "/f/1/", "/f/1/calls"):
                assert httpx.get(url + path).status_code == 200
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=20)
            err = proc.stderr.read()
    assert code == 130, err  # the exit status of an interrupted command (docs/errors.md)
    assert f"port {port} is in use; serving on port {port + 1}" in err
    assert "warning: --host 0.0.0.0 serves these folders to every machine" in err
    assert set(Path(tempfile.gettempdir()).glob("ioa-synth-view-*")) == copies  # its copies are gone
    assert _tree(root) == before  # nothing written into any folder


def test_loopback_by_default_and_sigterm_removes_the_copies(folders):
    copies = set(Path(tempfile.gettempdir()).glob("ioa-synth-view-*"))
    proc, url = start_view(folders["build"])
    try:
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(url + "/f/0/").status_code == 200
        assert len(set(Path(tempfile.gettempdir()).glob("ioa-synth-view-*")) - copies) == 1
    finally:
        stop(proc)  # SIGTERM
    assert "warning" not in proc.stderr.read()
    assert set(Path(tempfile.gettempdir()).glob("ioa-synth-view-*")) == copies
