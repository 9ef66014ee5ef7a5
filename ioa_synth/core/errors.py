"""The errors that end a call or a whole run, shared by every layer (the LLM client raises
them; an atomic write raises :class:`StorageFull`). :mod:`ioa_synth.llm.errors` re-exports them
with the LLM-specific ones (setup errors, provider refusals, cancelled calls)."""

from __future__ import annotations


class LLMCallError(RuntimeError):
    """A request that could not produce a usable reply after all retries."""


class StopRun(LLMCallError):
    """Base of the errors that stop a whole run rather than fail one case; a case that
    meets one keeps its status (``pending`` for a new case)."""


class StorageFull(StopRun):
    """A file of the run could not be written because the disk (or the quota, or the file
    size limit) is full: the run stops with one line naming ``path`` and what to do; what
    was stored before stays valid and the next run resumes from it."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}; free space on that disk (or move the folder to "
                         "another one) and run the same command again to resume (what was stored is kept)")
        self.path = path


def reason_of(exc: BaseException) -> str:
    """``exc`` as the reason in an error line, without Python's class names: a missing key
    is ``missing field 'x'``, a file error its ``strerror`` (``No such file or directory``),
    anything else its own text."""
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}" if exc.args else "a field is missing"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
