"""The cases a reward scores against, by split (paper §6.1: GRPO trains on the train split and
evaluates on val). A prompt row names its case by ``case_id`` (path relative to the split
folder ``train prompts --data`` read) and ``split`` (``train``, ``val``, ...); the same relative
path may name a different dialogue in each split (``business/planning_003`` in ``train/`` and
in ``val/``), so a row is resolved by both, never by its case id alone.

:class:`CaseIndex` holds the cases of one or more split folders (or of a build directory's
split folders) keyed by ``(split, case id)``. A row of a split the reward was not given is
refused (:class:`SplitMismatchError`), never scored against another split's case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ioa_synth.evaluate.inputs import InputError, load_cases
from ioa_synth.probing.cases import EvalCase
from ioa_synth.text.plural import plural
from ioa_synth.train.files import SPLIT_NAMES, split_of

#: The split of cases in a folder not named like a split (as ``train prompts`` writes it).
UNKNOWN = "unknown"

#: What the reward's ``data`` may be: one folder or several.
Data = str | Path | Sequence[str | Path]


class UnknownCaseError(LookupError):
    """A ``case_id`` that is not a case of the reward's ``data`` (the message names it)."""


class SplitMismatchError(UnknownCaseError):
    """A row of a split the reward holds no folder of, or a case id several splits hold
    when the row does not say its split (the message says which folders to give)."""


def data_folders(data: Data) -> list[Path]:
    """The split folders of ``data``: each folder given; a folder holding split folders
    (a build directory ``DIR`` with ``train/``, ``val/``...) stands for each of them."""
    folders = [Path(data)] if isinstance(data, (str, Path)) else [Path(d) for d in data]
    out: list[Path] = []
    for folder in folders:
        subs = sorted(p for p in folder.iterdir() if p.is_dir() and p.name in SPLIT_NAMES) if folder.is_dir() else []
        for f in subs or [folder]:
            if f not in out:
                out.append(f)
    return out


def split_key(case_id: str, split: str | None = None) -> tuple[str | None, str]:
    """``(split, case id relative to its split folder)`` of a row: a case id starting with a
    split folder (``train/business/x``, from ``train prompts --data DIR``) gives that split.

    Raises:
        SplitMismatchError: the case id's folder and ``split`` name different splits.
    """
    head, _, rest = str(case_id).partition("/")
    if rest and head in SPLIT_NAMES:
        if split not in (None, "", head):
            raise SplitMismatchError(f"case_id {case_id!r} lies in a {head!r} folder but its row says split {split!r}")
        return head, rest
    return (split or None), str(case_id)


class CaseIndex:
    """The cases of the reward's split folders, by ``(split, case id)``.

    Raises (from the constructor):
        ioa_synth.evaluate.inputs.InputError: a folder that is not a folder of cases, or
            two folders of the same split holding the same case id.
    """

    def __init__(self, data: Data, cases: list[EvalCase] | None = None) -> None:
        self.folders = data_folders(data)
        self.cases: dict[tuple[str, str], EvalCase] = {}
        self.where: dict[str, Path] = {}
        for folder in self.folders:
            loaded = cases if cases is not None and len(self.folders) == 1 else load_cases(folder)
            for case in loaded:
                split, rel = split_key(case.case_id, split_of(folder, case.case_id))
                split = split or UNKNOWN
                if (split, rel) in self.cases:
                    raise InputError(f"case {rel!r} of split {split!r} is in {self.where[split]} and in {folder}; "
                                     "give each split's folder once")
                self.cases[(split, rel)] = case
                self.where.setdefault(split, folder)

    @property
    def splits(self) -> list[str]:
        return sorted(self.where)

    def _holds(self) -> str:
        return ", ".join(f"{s} ({self.where[s]})" for s in self.splits)

    def find(self, case_id: str, split: str | None = None) -> EvalCase:
        """The case a row names.

        Raises:
            UnknownCaseError: no such case in the row's split folder.
            SplitMismatchError: the row's split is not among the reward's folders, or the
                row says no split and several splits hold the case id.
        """
        split, rel = split_key(case_id, split)
        if split is None and len(self.splits) == 1:
            split = self.splits[0]
        elif split is None:
            found = [s for s in self.splits if (s, rel) in self.cases]
            if len(found) > 1:
                raise SplitMismatchError(f"case_id {case_id!r} is a case of {len(found)} splits "
                                         f"({', '.join(found)}); the row must give its split")
            if found:
                return self.cases[(found[0], rel)]
            raise UnknownCaseError(f"case_id {case_id!r} is not a case of {self._holds()}{self._example()}")
        if split not in self.where:
            others = ", ".join(str(f) for f in self.folders)
            raise SplitMismatchError(
                f"case_id {case_id!r} is a {split!r} case, but the reward holds only {self._holds()}: it would be "
                f"scored against another split's dialogue; give the reward the {split} folder too "
                f"(data=[{others}, .../{split}], or the build directory holding both)")
        try:
            return self.cases[(split, rel)]
        except KeyError:
            n = sum(s == split for s, _ in self.cases)
            raise UnknownCaseError(f"case_id {case_id!r} is not a case of {self.where[split]} "
                                   f"({plural(n, 'case')}{self._example(split)})") from None

    def _example(self, split: str | None = None) -> str:
        ids = [rel for s, rel in self.cases if split is None or s == split]
        return f", e.g. {ids[0]!r}" if ids else ""
