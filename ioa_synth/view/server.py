"""Serving the viewer: the port (the asked one, else the next free one), the host (loopback
unless told otherwise) and uvicorn, which stops on Ctrl-C."""

from __future__ import annotations

import errno
import socket
import sys
from typing import TextIO

#: How many ports after the asked one are tried.
PORT_TRIES = 50
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ServeError(OSError):
    """No port could be bound (the message says which and why)."""


def bind(host: str, port: int, err: TextIO = sys.stderr) -> socket.socket:
    """A listening socket on ``host`` at ``port`` or, when that is in use, the next free port
    (said on ``err``).

    Raises:
        ServeError: ``host`` cannot be bound, or no port of ``port`` .. ``port + PORT_TRIES - 1`` is free.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for candidate in range(port, min(port + PORT_TRIES, 65536)):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed server's TIME_WAIT is not "in use"
        try:
            sock.bind((host, candidate))
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                continue
            raise ServeError(f"cannot listen on {host}:{candidate}: {exc.strerror or exc}") from None
        sock.listen(128)
        if candidate != port:
            print(f"port {port} is in use; serving on port {candidate}", file=err, flush=True)
        return sock
    raise ServeError(f"ports {port} to {port + PORT_TRIES - 1} on {host} are all in use; give another --port")


def url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    return f"http://[{shown}]:{port}/" if ":" in shown and not shown.startswith("[") else f"http://{shown}:{port}/"


def serve(app, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (uvicorn's own signal handling stops it).

    Raises:
        KeyboardInterrupt: the server stopped on a signal (the command exits 130).
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           timeout_graceful_shutdown=3))  # a browser's open connections: 3 s at most
    server.run(sockets=[sock])
    if server.should_exit:  # stopped by a signal that uvicorn did not raise again on its way out (seen
        raise KeyboardInterrupt  # once in a test run): the command is interrupted all the same, exit 130
