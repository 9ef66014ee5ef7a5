"""Free-text replies (a chat turn, a fenced code block) through the one client: used as
text, not JSON; one cut off at ``max_tokens`` is kept (JSON cut off is still rejected)."""

from __future__ import annotations

from ioa_synth.collab.replies import extract_code, first_sentence
from ioa_synth.llm.client import LLMClient
from ioa_synth.llm.config import ComponentConfig
from ioa_synth.llm.endpoint import Endpoint
from ioa_synth.llm.replies import reply_json, reply_text
from ioa_synth.testing.scripted_server import ScriptedServer, chat_reply


def _client(server) -> LLMClient:
    cfg = ComponentConfig(content_retries=1, max_retries=0)
    return LLMClient(Endpoint.from_config("discusser", cfg, server.base_url, "scripted", "sk-x", embedded=False))


def test_text_kept_when_cut_off_json_rejected():
    replies = iter([chat_reply("A turn that ran lo", finish_reason="length"),
                    chat_reply('{"ready": tr', finish_reason="length"), chat_reply('{"ready": tr', finish_reason="length")])
    with ScriptedServer(lambda body, headers: next(replies)) as server:
        client = _client(server)
        text, rec = client.complete_json([{"role": "user", "content": "hi"}], None, "text", str, lambda r: None,
                                         decode=reply_text)
        assert text == "A turn that ran lo" and rec.finish_reason == "length"
        assert "response_format" not in server.requests[0]["body"]
        failed = []
        try:
            client.complete_json([{"role": "user", "content": "hi"}], {"type": "object"}, "vote", dict, failed.append,
                                 decode=reply_json)
        except Exception as exc:  # noqa: BLE001 - the client's LLMCallError
            assert "cut off" in str(exc)
        assert len(failed) == 2
        client.close()


def test_code_and_sentence_extraction():
    reply = "Here it is:\n```python\ndef f():\n    return 1\n```\nand a note\n```\nx = 2\n```"
    assert extract_code(reply) == "def f():\n    return 1\n"
    assert extract_code("def g():\n    pass") == "def g():\n    pass\n"
    assert extract_code("```python\ndef h():\n    return 2") == "def h():\n    return 2\n"  # unclosed fence
    assert first_sentence("I read it as bytes. Then more.") == "I read it as bytes."
    assert first_sentence("no stop here") == "no stop here"
