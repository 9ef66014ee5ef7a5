"""The one error line for text that is not JSON (every reader of JSON and JSONL files)."""

from __future__ import annotations

import json

import pytest

from ioa_synth.core.jsonl import json_problem


def _error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    return info.value


def test_a_decoder_message_that_ends_in_at_is_finished_not_cut():
    # a new user's config with an unterminated string read "invalid JSON at line 10, column 23:
    # Unterminated string starting at", the decoder's own words cut before its position
    line = json_problem("config.json", _error('{\n  "a": "open'))
    assert line == "config.json: invalid JSON at line 2, column 8: Unterminated string starting there"
    assert json_problem("x.jsonl:3", _error('{"a": 1,}'), in_line=True) == \
        "x.jsonl:3: invalid JSON at column 9: Expecting property name enclosed in double quotes"
