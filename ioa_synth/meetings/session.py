"""A live-meeting session folder (paper §6.2, App. D.5) and its pseudonymised transcript.

Layout of ``SESSION_DIR``::

    session.json          participants (id + pseudonym) and the pseudonymised turns
    sets.json             the blinded question sets, by label A, B, C ... (after ``probe``)
    answers/<P>.json      a participant's answers to every set (page 1)
    labels/<P>.json       a participant's validity labels and survey (page 2)
    catalog.duckdb        every model call of ``probe`` (and the merge judge of ``report``)
    private/names.json    real name -> participant id: never read by anything that calls a model
    private/links.json    answer-page token -> participant id
    private/blinding.json label -> detector name, read only by ``report``
    private/aliases.json  the ``--alias`` nicknames given at import (when any)

Names are replaced before anything else happens (:mod:`ioa_synth.meetings.pseudonyms`): the
import writes only pseudonymised text outside ``private/``, the source file's name included.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ioa_synth.meetings.pseudonyms import Participant, pseudonymise, resolve_aliases, speakers
from ioa_synth.meetings.transcripts import Cue
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.runs.manifest import ensure_manifest

__all__ = ["Participant", "Session", "SessionError", "pseudonymise"]


class SessionError(ValueError):
    """A session folder that cannot serve the requested step (one line)."""


def write_private(path: Path, value: Any) -> None:
    """Write ``value`` as JSON at ``path`` inside a session's ``private/`` folder, atomically:
    the folder is the owner's alone (0700) and the file too (0600), since it holds real names
    or answer-page tokens that no other user of a shared machine may read."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    write_json_atomic(path, value)
    path.chmod(0o600)


class Session:
    """An imported session folder (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        path = self.folder / "session.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise SessionError(f"{folder}: not a meeting session (no readable session.json; "
                               "create one with 'ioa-synth meeting import')") from None
        self.data = data
        self.session_id: str = data["session_id"]
        self.participants = [Participant(p["id"], p["pseudonym"]) for p in data["participants"]]
        self.turns: list[dict[str, Any]] = data["turns"]

    @staticmethod
    def create(folder: Path, fmt: str, source: str, turns: list[Cue],
               aliases: list[tuple[str, str]] = ()) -> "Session":
        """Pseudonymise ``turns`` (and the ``source`` file name; ``aliases``: ``(speaker's name,
        nickname)`` pairs, see :func:`ioa_synth.meetings.pseudonyms.pseudonymise`) and write a new
        session into ``folder`` (private map and answer-page tokens included); ``session.json``
        last, so a folder without it is no session.

        Raises:
            ValueError: an alias names no speaker (nothing written).
        """
        aliases = resolve_aliases(list(aliases), speakers(turns))
        participants, names, pturns, replace = pseudonymise(turns, aliases)
        folder.mkdir(parents=True, exist_ok=True)
        write_private(folder / "private" / "names.json", names)
        if aliases:
            write_private(folder / "private" / "aliases.json", [{"name": n, "alias": a} for n, a in aliases])
        write_private(folder / "private" / "links.json", {secrets.token_urlsafe(18): p.id for p in participants})
        write_json_atomic(folder / "session.json", {
            "session_id": uuid.uuid4().hex[:12], "format": fmt, "source": replace(source),
            "participants": [{"id": p.id, "pseudonym": p.pseudonym} for p in participants], "turns": pturns})
        # the folder's manifest; no argument is kept (the transcript's file name may name people)
        ensure_manifest(folder, "meeting", "meeting import", settings={"format": fmt}, argv=[])
        return Session(folder)

    # ---- files -------------------------------------------------------------------------
    def path(self, *parts: str) -> Path:
        """A path inside the session folder."""
        return self.folder.joinpath(*parts)

    def read(self, *parts: str, default: Any = None) -> Any:
        """The JSON file at ``parts`` (``default`` when it does not exist)."""
        try:
            return json.loads(self.path(*parts).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default

    def write(self, value: Any, *parts: str) -> None:
        """Write ``value`` as JSON at ``parts``, atomically (owner-only under ``private/``)."""
        if parts and parts[0] == "private":
            write_private(self.path(*parts), value)
        else:
            write_json_atomic(self.path(*parts), value)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the session's write lock (across threads and processes: an ``flock`` on
        ``SESSION_DIR/.lock``). The file exists only while the lock is held: however the
        body ends (a refused form, an exception), the file is removed and the lock released,
        so no ``.lock`` is left behind. A holder that re-opened a file another one removed
        meanwhile opens the new one (the lock is always on the file at the path); the file
        of a killed holder is harmless (the kernel drops its lock) and is reused."""
        lock = self.path(".lock")
        while True:
            fh = open(lock, "a")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX)
                held = os.fstat(fh.fileno())
                try:
                    current = os.stat(lock)
                except FileNotFoundError:
                    current = None
            except BaseException:
                fh.close()
                raise
            if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
                break
            fh.close()  # removed by the holder before us: lock the file now at the path
        try:
            yield
        finally:
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()

    # ---- views -------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Participant ids in order."""
        return [p.id for p in self.participants]

    def pseudonym(self, pid: str) -> str:
        """The pseudonym of participant ``pid``."""
        return next(p.pseudonym for p in self.participants if p.id == pid)

    def question_sets(self) -> dict[str, list[dict[str, Any]]]:
        """``{label: [{"question", "options"}]}`` in label order.

        Raises:
            SessionError: the session has not been probed.
        """
        sets = self.read("sets.json")
        if not sets or not sets.get("sets"):
            raise SessionError(f"{self.folder}: no question sets yet; run 'ioa-synth meeting probe {self.folder} "
                               "--detector NAME=CONFIG ...' first")
        return {label: sets["sets"][label] for label in sorted(sets["sets"])}

    def links(self) -> dict[str, str]:
        """``{token: participant id}``."""
        return self.read("private", "links.json", default={})

    def answers(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{participant: {label: {question number: option letter}}}`` of those who answered."""
        out = {}
        for pid in self.ids:
            saved = self.read("answers", f"{pid}.json")
            if saved is not None:
                out[pid] = saved["answers"]
        return out

    def labels(self) -> dict[str, dict[str, Any]]:
        """``{participant: {"labels": {label: {n: validity}}, "survey": {...}}}`` of those who labelled."""
        return {pid: saved for pid in self.ids if (saved := self.read("labels", f"{pid}.json")) is not None}
