"""CLI behaviour a new user meets first: one-line usage errors with exit 2,
``--version``, flags without ``<bool>``, the ``sql`` command, and setup-error hints that
name the config key or variable."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading

import pytest
from ioa_helpers import KEY

from ioa_synth import __version__
from ioa_synth.llm.client import Endpoint, LLMClient, SetupError
from ioa_synth.llm.config import ComponentConfig
from ioa_synth.testing.scripted_server import Reply, ScriptedServer


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ioa_synth", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("args, needle", [
    (["build", "--split", "test", "--out", "o", "--workers", "0"], "'--workers'"),
    (["build", "--out", "o"], "Missing option '--split'"),
    (["audit", "--out", "o"], "Missing option '--split'"),
    (["nosuch"], "No such command 'nosuch'"),
    # an unknown option: the close names, else all the command's options (click offered
    # "(Possible options: --out)" for --bogus, the "--" alone making them look alike)
    (["status", "--bogus"], "error: No such option: --bogus; this command takes --out, --json "
                            "(see 'python -m ioa_synth status --help')"),
    (["status", "--jsn"], "No such option: --jsn; did you mean --json? (see"),
    (["build", "--split", "test", "--out", "o", "--worker", "2"], "No such option: --worker; did you mean --workers?"),
])
def test_usage_errors_are_one_line_and_exit_2(args, needle, tmp_path):
    res = run(*args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert "╭" not in res.stderr and res.stdout == ""


def test_version_and_help_without_bool_metavar():
    res = run("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"ioa-synth {__version__}"
    for cmd in (["status"], ["seeds", "assign"], ["sql"]):
        res = run(*cmd, "--help")
        assert res.returncode == 0 and "--help" in res.stdout
        assert "<bool>" not in res.stdout and "╭" not in res.stdout


def test_sql_queries_the_catalog(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out, "--workers", "1")
    assert res.exit_code == 0
    res = cli("sql", out, "SELECT status, count(*) AS n FROM cases GROUP BY 1 ORDER BY 1", "--csv")
    assert res.exit_code == 0 and res.stdout == "status,n\naccepted,1\ndiscarded,1\n"
    res = cli("sql", out, "SELECT count(*) AS calls FROM llm_calls WHERE error IS NULL", "--json")
    assert json.loads(res.stdout) == [{"calls": 8}]  # one JSON document; 2 x (generator, judge) per case
    both = cli("sql", out, "SELECT 1; SELECT 2")  # one statement only (the second would hide the first)
    assert both.exit_code == 2 and both.stderr == "error: give exactly one SQL statement (got 2)\n"
    assert json.loads(cli("sql", out, "SELECT 1 AS a WHERE false", "--json").stdout) == []
    res = cli("sql", out, "SELECT status FROM cases ORDER BY 1")
    assert res.exit_code == 0 and "accepted" in res.stdout and "discarded" in res.stdout
    bad = cli("sql", out, "DELETE FROM cases")  # read-only
    assert bad.exit_code == 2 and bad.stderr.startswith("error: only queries are allowed")
    assert cli("sql", out, "SELECT count(*) FROM cases", "--csv").stdout == "count_star()\n2\n"
    assert cli("sql", tmp_path / "none", "SELECT 1").exit_code == 2


def client_for(server: ScriptedServer, component: str = "judge", base_url: str | None = None, **cfg) -> LLMClient:
    ep = Endpoint.from_config(component, ComponentConfig(max_retries=0, **cfg), base_url or server.base_url,
                              "m", KEY, embedded=False)
    return LLMClient(ep)


def refuse(status: int, message: str):
    return lambda body, headers: Reply(status=status, body={"error": {"message": message}})


@pytest.mark.parametrize("status, message, hint", [
    (401, "Incorrect API key provided: sk-test-helpers-0123456789", "JUDGE_API_KEY (or OPENAI_API_KEY)"),
    (400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
          "instead.", '"max_completion_tokens" instead of "max_tokens" in judge.request_options'),
    (400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
     'set "structured_output" for judge'),
    (404, "The model `m` does not exist or you do not have access to it.", 'set "model" for judge'),
    (400, "Unrecognized request argument supplied: seed", 'set "seed": null for judge'),
])
def test_setup_errors_name_the_config_key(status, message, hint):
    with ScriptedServer(refuse(status, message)) as server:
        client = client_for(server)
        with pytest.raises(SetupError) as err:
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda d: d, lambda rec: None)
        assert hint in str(err.value) and f"HTTP {status}" in str(err.value)
        assert KEY not in str(err.value)
        # latched: the next call raises at once, without a request
        with pytest.raises(SetupError):
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda d: d, lambda rec: None)
        assert len(server.requests) == 1


def test_base_url_without_v1_is_named():
    with ScriptedServer(lambda body, headers: Reply(status=404, body={"detail": "Not Found"})) as server:
        root = server.base_url.removesuffix("/v1")
        client = client_for(server, base_url=root)
        with pytest.raises(SetupError, match="JUDGE_BASE_URL .* may be missing /v1"):
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda d: d, lambda rec: None)


def test_a_404_web_page_at_a_v1_url_is_named_as_no_chat_route():
    """A plain web server at a URL already ending in /v1: the hint does not ask for /v1, and
    its HTML error page is shown as text."""
    page = ("<!DOCTYPE HTML><html><head><title>Error response</title></head><body><h1>Error response</h1>"
            "<p>Error code: 404</p><p>Message: File not found.</p></body></html>")
    with ScriptedServer(lambda body, headers: Reply(status=404, raw=page)) as server:
        client = client_for(server)
        with pytest.raises(SetupError) as err:
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda d: d, lambda rec: None)
    text = f"{err.value} {err.value.hint}"
    assert "no /chat/completions route" in text and "should end in /v1" not in text
    assert "<" not in str(err.value) and "File not found." in str(err.value)
    assert str(err.value).count("Error response") == 1  # the page's title is not read as text


def _listing_error(handler: type, component: str, key: str) -> SetupError:
    """The setup error of asking a server run by ``handler`` for its models (no model in the config)."""
    from ioa_synth.llm.endpoints import _first_model

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(SetupError) as err:
            _first_model(component, f"http://127.0.0.1:{server.server_port}/v1", key)
    finally:
        server.shutdown()
    return err.value


def test_a_404_on_the_model_listing_names_that_route():
    """With no model in the config the toolkit asks ``GET /models`` first; a 404 there named
    the /chat/completions route, which was never asked."""
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_error(404)

        def log_message(self, *args):
            pass

    err = _listing_error(NotFound, "simulator", KEY)
    assert "the server there has no /models route" in err.hint
    assert "chat/completions" not in f"{err} {err.hint}"


def test_context_length_400_is_a_case_error_not_setup():
    from ioa_synth.llm.client import LLMCallError

    with ScriptedServer(refuse(400, "This model's maximum context length is 8192 tokens.")) as server:
        client = client_for(server)
        with pytest.raises(LLMCallError) as err:
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda d: d, lambda rec: None)
        assert not isinstance(err.value, SetupError) and client.setup_error is None


def test_a_key_quoted_back_by_the_server_never_reaches_the_error_line(cli, seeds_file, tmp_path, monkeypatch):
    """A 401 whose message quotes the key (as some servers do, in full) is shown with the
    key redacted, whether it answers the model listing or a chat request."""
    key = "sk-quoted-back-0123456789abcdef"
    echo = lambda body, headers: Reply(status=401, body={"error": {"message": f"Incorrect API key provided: {key}"}})  # noqa: E731
    with ScriptedServer(echo) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        for args in ([], ["--config", str(_models_config(tmp_path))]):  # listing models; chat (model set)
            res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "out", *args)
            assert res.exit_code == 2
            (line,) = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
            assert "HTTP 401" in line and "***" in line and key not in res.output + res.stderr


def test_a_key_a_model_repeats_is_redacted_in_what_the_reply_gives():
    """The parsed reply is made from the redacted text, so an echoed key reaches neither the
    next prompt (the simulator reads the prober's questions) nor a record."""
    from ioa_synth.testing.scripted_server import chat_reply

    echo = lambda body, headers: chat_reply(json.dumps({"question": f"Is the key {KEY}?"}))  # noqa: E731
    with ScriptedServer(echo) as server:
        value, rec = client_for(server).complete_json([{"role": "user", "content": "x"}], None, "x",
                                                      lambda d: d, lambda rec: None)
    assert value == {"question": "Is the key ***?"} and KEY not in rec.response_text


def _models_config(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"generator": {"model": "m"}, "judge": {"model": "m"}}))
    return cfg


def test_a_key_quoted_back_when_listing_models_is_redacted():
    key = "sk-listing-0123456789abcdef"

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    err = _listing_error(Refuse, "prober", key)
    assert "HTTP 401" in str(err) and "***" in str(err) and key not in str(err)
