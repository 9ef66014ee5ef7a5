"""``POST`` to a plain-HTTP endpoint on one keep-alive ``http.client`` connection per thread.

A self-hosted server (vLLM, llama.cpp, Ollama) on the same machine or network answers a
short call in well under a second, and then the client's own work per request sets the
pace. On a 2-core machine, against a local server, a POST with a ready body cost
about 0.5 ms of CPU through the standard library's ``http.client`` and about 1.0 ms
through ``httpx``'s transport (its connection pool, the ``h11`` state machine and the
request and response models), out of a 2 ms budget per call. :class:`PlainPost` is
used for ``http://`` endpoints that no proxy applies to
(:class:`~ioa_synth.llm.transport.ChatPost` decides); TLS and proxies stay with ``httpx``.

Each thread keeps its own connection (a worker's calls are sequential), so no pool is
searched or locked per request. A connection the server has closed while it sat idle
(its keep-alive timeout) is noticed before reuse, as ``httpcore`` does (the socket reads
as ready), and replaced; a reused connection that breaks before any reply byte arrives is
replaced and the request sent once more on a fresh one.
"""

from __future__ import annotations

import http.client
import select
import socket
import threading
from dataclasses import dataclass

from ioa_synth.llm.on_wire import reply_received, requests_sent

#: Headers ``http.client`` sets itself, or that ask for what this client does not do
#: (``Accept-Encoding``: replies are read as sent, never decompressed).
_OWN_HEADERS = frozenset({"host", "content-length", "accept-encoding", "transfer-encoding"})
#: Errors of a reused connection that the server closed before reading the request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclass(frozen=True)
class Reply:
    """One HTTP reply: ``status`` code, ``headers`` as ``(name, value)`` pairs, ``content`` bytes."""

    status: int
    headers: list[tuple[str, str]]
    content: bytes


class PlainPost:
    """``POST`` bodies to one ``http://`` URL, one keep-alive connection per calling thread.

    Args:
        host / port / path: where to send (``path`` with its query, if any).
        headers: sent with every request (``Host`` and ``Content-Length`` are set per request).
        connect_timeout / read_timeout: seconds (``None``: wait forever) for connecting and
            for each send or receive on the socket.

    Raises (from :meth:`__call__`): ``TimeoutError`` (``socket.timeout``) when a step ran
    out of time; ``OSError`` or ``http.client.HTTPException`` when the server could not be
    reached or broke off; ``RuntimeError`` after :meth:`close`.
    """

    def __init__(self, host: str, port: int, path: str, headers: dict[str, str],
                 connect_timeout: float | None, read_timeout: float | None) -> None:
        self._host, self._port, self._path = host, port, path
        self._headers = {k: v for k, v in headers.items() if k.lower() not in _OWN_HEADERS}
        self._connect_timeout, self._read_timeout = connect_timeout, read_timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()  # every thread's, for close()
        self._closed = False

    def __call__(self, body: bytes) -> Reply:
        """Send ``body`` and return the whole reply (read to its end, the connection kept)."""
        conn, reused = self._connection()
        try:
            return self._exchange(conn, body)
        except _STALE:
            if not reused:
                raise
        self._drop(conn)  # the server closed it while idle: once more on a fresh connection
        conn, _ = self._connection()
        return self._exchange(conn, body)

    def close(self) -> None:
        """Close every thread's connection; later calls raise ``RuntimeError``."""
        with self._lock:
            self._closed = True
            conns, self._open = list(self._open), set()
        for conn in conns:
            _shut(conn)

    # -- one connection per thread -------------------------------------------------
    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it carried a request before."""
        if self._closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None and _readable(conn.sock):
            self._drop(conn)  # closed by the server (or junk arrived): not reusable
            conn = None
        if conn is not None and conn.sock is not None:
            return conn, True
        if conn is None:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)
            with self._lock:
                self._open.add(conn)
            self._local.conn = conn
        conn.connect()
        conn.sock.settimeout(self._read_timeout)
        return conn, False

    def _exchange(self, conn: http.client.HTTPConnection, body: bytes) -> Reply:
        try:
            try:
                conn.request("POST", self._path, body=body, headers=self._headers)
            finally:
                requests_sent()
            response = conn.getresponse()
            content = response.read()
            reply_received()
        except BaseException:
            self._drop(conn)  # mid-exchange: its state is unknown
            raise
        if response.will_close:
            conn.close()  # the server said so; the next request opens a new one
        return Reply(response.status, response.getheaders(), content)

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        _shut(conn)
        with self._lock:
            self._open.discard(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None


def _readable(sock: socket.socket) -> bool:
    """True when an idle keep-alive socket has something to read: the server's EOF (or
    bytes no request asked for); either way it cannot carry the next request."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _shut(conn: http.client.HTTPConnection) -> None:
    sock = conn.sock
    if sock is not None:
        try:  # wakes a thread blocked reading it, which close() alone does not
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    conn.close()
