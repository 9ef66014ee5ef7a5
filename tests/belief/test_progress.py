"""belief run's progress line while conversations interleave: calls done of calls expected,
the rounds reached and an ETA, not only whole conversations (which finish late)."""

from __future__ import annotations

import functools
import re

from ioa_synth.belief.conversation import StudySettings
from ioa_synth.belief.progress import StudyWork, calls_per_conversation
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import sample_items


def test_calls_expected_rounds_reached_and_eta():
    settings = StudySettings(agents=4, attackers=(0, 1), rounds=3)
    # 12 utterances, 3 stance labels per benign agent, 4 probes + labels per benign agent
    assert calls_per_conversation(settings, 1) == 4 * 3 + 3 * 3 + 2 * 3 * 4 == 45
    assert calls_per_conversation(settings, 0) == 4 * 3 + 4 * 3 + 2 * 4 * 4 == 56
    now = [0.0]
    reused = [0]
    work = StudyWork(settings, [("a_k0", 0), ("a_k1", 1)], reused=lambda: reused[0], clock=lambda: now[0])
    assert work.describe() == "calls 0/101 (0%); ETA after the first calls"
    a0, a1 = work.watch("a_k0"), work.watch("a_k1")
    reused[0] = 10  # a resumed run replays 10 calls at once: done, but not a rate
    a0(10, 1)
    now[0] = 30.0
    a0(1, 2)
    a1(9, 1)
    # 20 done, 10 of them fresh in 30 s: 81 left at 1 call per 3 s
    assert work.describe() == "calls 20/101 (20%); rounds reached 1-2 of 3; ETA 4 min"
    work.finished("a_k1", ok=False)  # a failed conversation makes none of its 36 calls left
    assert work.describe().startswith("calls 20/65 (31%); rounds reached 2 of 3;")
    a1(2, 1)  # calls that were in flight when it failed still end
    a0(45, 3)
    work.finished("a_k0", ok=True)
    assert work.describe() == "calls 67/67 (100%)"


def test_run_progress_lines_show_calls_rounds_and_eta(endpoint, tmp_path, cli, monkeypatch):
    endpoint(responder=BeliefScript(agents=2, latency=0.03))
    monkeypatch.setattr("ioa_synth.belief.run.BuildProgress", functools.partial(BuildProgress, summary_every=0.2))
    out = tmp_path / "res"
    result = cli("belief", "run", "--items", sample_items(tmp_path, 2), "--out", out, "--agents", "2",
                 "--attackers", "1", "--rounds", "4", "--workers", "2")
    assert result.exit_code == 0, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("conversations: ")]
    total = 2 * calls_per_conversation(StudySettings(agents=2, rounds=4), 1)
    pattern = re.compile(r"conversations: (\d)/2 done: \d done, 0 failed; calls (\d+)/(\d+) \(\d+%\)"
                         r"(; rounds reached [\d-]+ of 4)?(; ETA [^;]+)?;")
    parsed = [pattern.match(ln) for ln in lines]
    assert lines and all(parsed), lines
    # while no conversation had finished, the line already moved: calls done, rounds reached, an ETA
    early = [m for m in parsed if m.group(1) == "0" and 0 < int(m.group(2)) < total]
    assert early and all(int(m.group(3)) == total for m in early), lines
    assert any(m.group(4) and m.group(5) and "after the first calls" not in m.group(5) for m in early), lines
    assert lines[-1].startswith(f"conversations: 2/2 done: 2 done, 0 failed; calls {total}/{total} (100%);")


def test_a_resumed_run_numbers_conversations_out_of_the_whole_job(endpoint, tmp_path, cli):
    """A resumed run counts the conversations an earlier run finished: ``[3/3]``, not ``[1/1]``."""
    endpoint(responder=BeliefScript(agents=2))
    out, items = tmp_path / "res", sample_items(tmp_path, 3)
    args = ("belief", "run", "--items", items, "--out", out, "--agents", "2", "--attackers", "1", "--rounds", "2",
            "--workers", "1")
    assert cli(*args).exit_code == 0
    records = sorted((out / "conversations").glob("*.json"))
    records[-1].unlink()  # as if the first run had stopped before its last conversation
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    assert f"[3/3] {records[-1].stem} done" in result.stderr, result.stderr
    assert "[1/1]" not in result.stderr
    assert "conversations: 3/3 done: 1 done, 0 failed, 2 done by an earlier run;" in result.stderr, result.stderr
