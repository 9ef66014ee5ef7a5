"""Guard of the build's per-call work: counts, never wall time.

A build of a few cases against the scripted endpoint (every reply valid and passing, so
a case is exactly 4 calls) counts what the content gates and the request schemas cost per
case: words given to the stemmer, schema builds, catalog transactions. The bounds hold
with room for the content the scripted server writes; a change that stems a text again per
field or per pair, rebuilds a schema per call, or commits the catalog per call breaks them.
"""

from __future__ import annotations

from collections import Counter

import pytest

from ioa_synth.protocol import gates_text, plan
from ioa_synth.runs import catalog as catalog_module

CASES = 6

#: Words stemmed per case (both stages' gates), each text of an output once: 319 for the
#: scripted case; 409 when a text was stemmed again per check and per pair.
MAX_STEMMED_WORDS_PER_CASE = 360


@pytest.fixture
def counts(monkeypatch) -> Counter:
    seen: Counter = Counter()
    real_stemmed = gates_text._stemmed

    def stemmed(text, content):
        out = real_stemmed(text, content)
        seen["stemmed_words"] += len(out)
        seen["stem_calls"] += 1
        seen["list", (text, content)] += 1
        return out

    monkeypatch.setattr(gates_text, "_stemmed", stemmed)

    real_stage1, real_stage2 = plan.CasePlan.stage1_schema, plan.stage2_schema

    def stage1_schema(self):
        seen["stage1_schema"] += 1
        return real_stage1(self)

    def stage2_schema(profiles, **kwargs):
        seen["stage2_schema"] += 1
        return real_stage2(profiles, **kwargs)

    monkeypatch.setattr(plan.CasePlan, "stage1_schema", stage1_schema)
    from ioa_synth.build import stages

    real_request_schema = stages.stage1_request_schema

    def stage1_request_schema(*args, **kwargs):  # the plan mode's schema (protocol mode builds no CasePlan one)
        seen["stage1_request_schema"] += 1
        return real_request_schema(*args, **kwargs)

    monkeypatch.setattr(stages, "stage1_request_schema", stage1_request_schema)
    monkeypatch.setattr("ioa_synth.build.stages.stage2_schema", stage2_schema)

    real_commit = catalog_module.Catalog._commit_batch

    def commit(self, entries):
        seen["commits"] += 1
        return real_commit(self, entries)

    monkeypatch.setattr(catalog_module.Catalog, "_commit_batch", commit)
    return seen


def test_gate_and_schema_work_per_case_stays_bounded(cli, endpoint, seeds_file, tmp_path, counts):
    server = endpoint()
    res = cli("build", "--seeds", seeds_file(CASES), "--split", "test", "--out", tmp_path / "out", "--workers", "2")
    assert res.exit_code == 0, res.output
    chats = [r for r in server.requests if r["path"].rstrip("/").endswith("/chat/completions")]
    assert len(chats) == 4 * CASES  # all passed at the first attempt: 4 calls a case
    # one schema per generator call, none per judge call or per retry of the same request
    # (the next case's stage-1 request is made ahead; with 2 workers the case it was made for
    # may have started already on the other worker, wasting one at the end of the queue)
    assert CASES <= counts["stage1_request_schema"] <= CASES + 2 and counts["stage2_schema"] == CASES
    assert counts["stage1_schema"] <= CASES  # the scaffold's plan schema, at most once per case
    assert 0 < counts["stemmed_words"] <= MAX_STEMMED_WORDS_PER_CASE * CASES, counts
    # the catalog commits in batches over a time window, not once per call or per case
    assert counts["commits"] < CASES, counts


def test_a_text_is_stemmed_once_per_output_and_not_carried_over(counts):
    from ioa_synth.testing.scripted_case import valid_stage1, valid_stage2
    from ioa_synth.protocol.gates import stage1_gate_failures, stage2_gate_failures
    from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

    profiles = Stage1Output.model_validate(valid_stage1(4))
    dialogue = Stage2Output.model_validate(valid_stage2(6))
    for check in (lambda: stage1_gate_failures(profiles), lambda: stage2_gate_failures(dialogue, profiles)):
        counts.clear()
        assert check() == []
        lists = {k[1]: n for k, n in counts.items() if isinstance(k, tuple)}
        # the same hidden assumption compared with each of the other member's, an utterance
        # checked for coverage, repeats and leaks: stemmed once within the output
        assert lists and max(lists.values()) == 1, {" ".join(w): n for w, n in lists.items() if n > 1}
        first = counts["stem_calls"]
        assert check() == []
        assert counts["stem_calls"] == 2 * first  # the next output is stemmed anew: nothing carried over


def test_storing_is_off_the_worker_path_and_requests_skip_the_sdk_machinery(cli, endpoint, seeds_file, tmp_path,
                                                                             monkeypatch):
    """A worker makes requests and journals each reply's call row before it goes on (the
    next request depends on the reply: ``tests/runs/test_resume_durable.py``), nothing more: the
    record files and status rows of a case are made on the catalog's writer thread, never
    by a worker journaling its own rows, and a chat request does not go through the
    SDK's per-request machinery (``OpenAI.post``: options copies, header merge, URL parse).
    What the stage-2 gates compare dialogues with is made once per case: ahead, on the
    helper thread, while the stage-1 judge call is on the wire, or by the case's own thread
    when the helper's job was still held back because another worker was answering a reply
    (``tests/llm/test_requests_ahead.py`` proves the holding and the hand-over)."""
    import threading

    import openai

    from ioa_synth.build import records, stage2_inputs
    from ioa_synth.runs import recorder as calls

    where: Counter = Counter()

    def on_thread(name, real):
        def wrapped(*args, **kwargs):
            where[name, threading.current_thread().name.split("_")[0]] += 1
            return real(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(calls, "call_row", on_thread("call_row", calls.call_row))
    monkeypatch.setattr(records, "write_bytes_atomic", on_thread("record", records.write_bytes_atomic))
    monkeypatch.setattr(openai.OpenAI, "post", on_thread("sdk_post", openai.OpenAI.post))
    monkeypatch.setattr(stage2_inputs, "profile_reference", on_thread("reference", stage2_inputs.profile_reference))
    endpoint()
    res = cli("build", "--seeds", seeds_file(3), "--split", "test", "--out", tmp_path / "out", "--workers", "2")
    assert res.exit_code == 0, res.output
    # the call rows are journaled by the worker before it gets the reply (the unit's next
    # request depends on it); the writer makes the records while the worker's next request is
    # on the wire; the last case's, which no request follows, the writer's idle wake-up or the
    # run's closing drain does (or the thread recording the run's estimate, whose write drains
    # what is pending)
    made: Counter = Counter()
    for (what, who), n in where.items():
        if what != "reference":
            made[what, "off the worker path" if who in ("catalog-writer", "MainThread", "estimate") else who] += n
    assert made == Counter({("call_row", "case"): 12, ("record", "off the worker path"): 3}), where
    references = {who: n for (what, who), n in where.items() if what == "reference"}
    assert sum(references.values()) == 3 and set(references) <= {"ahead", "case"}, where
