"""One chat-completions POST without the SDK's per-request machinery: on the ``openai``
client's own connection pool, or, for a plain-HTTP endpoint no proxy applies to, on a
keep-alive ``http.client`` connection per thread (:mod:`ioa_synth.llm.plain_post`).

``client.post(...)`` rebuilds everything per request: the options model (a pydantic copy,
twice), the merged headers (platform headers re-read), the URL (parsed again), an
idempotency key, its retry loop and auth-refresh wrapper. With the retries ours
(:mod:`ioa_synth.llm.retries`) none of that is needed, and on a 2-core machine it was the
largest part of the client's work per call (about 0.6 ms of a 1.8 ms round trip on
loopback, more than the rest of httpx). :class:`ChatPost` sends on the same ``httpx2``
client's transport for the endpoint's URL (same pool, proxy, TLS and timeout), with
headers built once (or through :class:`~ioa_synth.llm.plain_post.PlainPost` with the same
headers and timeouts), and raises the
SDK's own exceptions, so retries, setup errors and refusals are classified as before:
``APITimeoutError``, ``APIConnectionError``, and the ``APIStatusError`` subclass the SDK
makes for the status (``RateLimitError`` for 429, ...).
"""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any

import httpx2
import openai

from ioa_synth.llm.on_wire import reply_received, requests_sent
from ioa_synth.llm.plain_post import PlainPost, Reply


class ChatPost:
    """``POST {base_url}/chat/completions`` with a ready JSON body, for one SDK client.

    Args:
        client: the endpoint's ``openai.OpenAI`` (its base URL, key, timeout and HTTP
            client are used; its ``max_retries`` is not: the caller retries).
        plain: the SDK made its HTTP client itself (none was passed in), so that an
            ``http://`` URL no proxy applies to may be sent by :class:`PlainPost` (the
            standard library's ``http.client``, half the CPU per call); ``False``: always
            on the client's transport.
    """

    def __init__(self, client: openai.OpenAI, plain: bool = False) -> None:
        self._sdk = client
        self._http = client._client  # the SDK's httpx2.Client: its pool, proxy and TLS settings
        self._url = client.base_url.join("chat/completions")
        # the transport httpx would pick for this URL (a proxy's when one is mounted): sending on
        # it directly skips the client's auth, redirect, cookie and hook handling, none of which
        # a chat POST with the key in its headers uses (about 0.15 ms of CPU per call)
        self._transport = self._http._transport_for_url(self._url)
        headers = {**client.default_headers, **client.auth_headers}
        # what build_request would merge on every call, merged once: the HTTP client's own
        # headers, then the SDK's (JSON content type, user agent, key)
        self._headers = httpx2.Headers(self._http.headers)
        self._headers.update({k: v for k, v in headers.items() if isinstance(v, str)})
        timeout = client.timeout
        timeout = timeout if isinstance(timeout, httpx2.Timeout) else httpx2.Timeout(timeout)
        self._extensions = {"timeout": timeout.as_dict(), "trace": _on_trace}
        # the client's own transport picked for the URL: no proxy mounted for it from the environment
        direct = self._transport is self._http._transport and isinstance(self._transport, httpx2.HTTPTransport)
        self._plain = (PlainPost(self._url.host, self._url.port or 80, self._url.raw_path.decode("ascii"),
                                 dict(self._headers), timeout.connect, timeout.read)
                       if plain and direct and self._url.scheme == "http" else None)

    def __call__(self, body: bytes) -> Any:
        """Send ``body`` (UTF-8 JSON) and return the reply decoded (``None`` when it is not JSON).

        Raises:
            openai.APITimeoutError: the request timed out.
            openai.APIConnectionError: the server could not be reached or broke off.
            openai.APIStatusError: a 4xx/5xx reply (the SDK's subclass for the status).
        """
        if self._http.is_closed:  # as the client's own send
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        if self._plain is not None:
            return self._plain_call(body)
        request = self._request(body)
        try:
            response = self._transport.handle_request(request)
        except httpx2.TimeoutException as err:
            raise openai.APITimeoutError(request=request) from err
        except (httpx2.RequestError, ssl.SSLError) as err:
            raise openai.APIConnectionError(request=request) from err
        finally:
            requests_sent()  # for a transport that does not trace its steps (a no-op when it did)
        response.request = request  # what the client's send sets (the SDK's status errors read it)
        try:
            try:
                content = response.read()
                reply_received()
            except httpx2.TimeoutException as err:
                raise openai.APITimeoutError(request=request) from err
            except httpx2.RequestError as err:
                raise openai.APIConnectionError(request=request) from err
            if response.is_error:
                raise self._sdk._make_status_error_from_response(response) from None
            try:
                return json.loads(content)
            except ValueError:
                return None
        finally:
            response.close()


    def _request(self, body: bytes) -> httpx2.Request:
        return httpx2.Request("POST", self._url, content=body, headers=self._headers, extensions=self._extensions)

    def _plain_call(self, body: bytes) -> Any:
        """:meth:`__call__` through :class:`PlainPost`, with the same errors (the ``httpx2``
        request they carry is made only for an error)."""
        assert self._plain is not None
        try:
            reply: Reply = self._plain(body)
        except TimeoutError as err:
            raise openai.APITimeoutError(request=self._request(body)) from err
        except (OSError, http.client.HTTPException) as err:
            raise openai.APIConnectionError(request=self._request(body)) from err
        if reply.status >= 400:
            response = httpx2.Response(reply.status, headers=reply.headers, content=reply.content,
                                       request=self._request(body))
            raise self._sdk._make_status_error_from_response(response) from None
        try:
            return json.loads(reply.content)
        except ValueError:
            return None

    def close(self) -> None:
        """Close the connections :class:`PlainPost` opened (the SDK client closes its own)."""
        if self._plain is not None:
            self._plain.close()


def _on_trace(event: str, info: dict[str, Any]) -> None:
    """httpcore's step hook: once the request body is written, what this thread left for
    that moment runs (:mod:`ioa_synth.llm.on_wire`)."""
    if event.endswith("send_request_body.complete"):
        requests_sent()
