"""Near-duplicate cases by content: MinHash signatures and LSH (``datasketch``) over a
case's scenario, misalignment-point texts and utterances.

``seeds check`` catches a paper used twice; this catches two cases that say the same
thing, e.g. one case copied with the members renamed. Member names are replaced by their
ids before shingling (word 3-grams, lower case), so a name swap changes nothing. A case of a
build in another language (its record's ``language``, ``build --language``) is shingled in
its language (:func:`shingles`): word 3-grams of Snowball stems, or for Chinese and
Japanese three consecutive character bigrams (character 4-grams within a run). LSH
(:class:`datasketch.MinHashLSH` at the threshold) proposes candidate pairs; the reported
similarity is the exact Jaccard index of the two shingle sets. Above the thresholds LSH can
serve with 128 permutations (about 0.95; at 1.0 it cannot be built: "b < 2"), candidates are
every case whose shingle count lies within the threshold's reach (``t·|A| <= |B| <= |A|/t``,
which a Jaccard index of ``t`` needs), so 1.0 finds exactly the identical shingle sets and no
pair is missed.

Used by ``ioa-synth check`` (pairs within and across splits; a pair spanning two splits
breaks the disjointness of the splits, which draw from disjoint seed pools) and by ``build --dedup``
(:class:`NearDuplicateIndex`: an accepted case that nearly copies an earlier one is
discarded with that reason).
"""

from __future__ import annotations

import bisect
import json
import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from datasketch import MinHash, MinHashLSH

from ioa_synth.runs.catalog import Catalog
from ioa_synth.build.record_files import record_file
from ioa_synth.text.languages import language as lang_of
from ioa_synth.text.normalise import WORD, Normaliser, jaccard

#: Default Jaccard threshold of a near-duplicate pair.
DEFAULT_THRESHOLD = 0.7
NUM_PERM = 128
SHINGLE = 3
_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=8)
def _tokens(tag: str) -> Normaliser:
    """The shingles' tokens of a language other than English: lower case, Snowball stems or
    CJK character bigrams, nothing dropped."""
    return Normaliser(WORD, casefold=False, stem="english").for_language(tag)


def case_text(profiles: dict[str, Any], turns: list[dict[str, Any]], language: str | None = None) -> str:
    """The compared text of a case: scenario, every MA's topic, surface form, readings and
    reason, and the utterances, with each member's name (and its parts) replaced by the id
    (as whole words; in Chinese and Japanese, wherever it stands: no spaces mark a word)."""
    cjk = lang_of(language).cjk
    parts = [str(profiles.get("meeting_scenario") or "")]
    for p in profiles.get("misalignment_points") or []:
        parts += [str(p.get(k) or "") for k in ("topic", "surface_form", "member_a_understanding",
                                                 "member_b_understanding", "why_undetected")]
    parts += [str(t.get("utterance") or "") for t in turns]
    text = "\n".join(parts)
    names = [(str(m.get("name") or ""), str(m.get("id") or "")) for m in profiles.get("members") or []]
    for name, mid in sorted(names, key=lambda nm: -len(nm[0])):
        for token in [name, *name.split()]:
            if len(token) > 1:
                text = text.replace(token, mid) if cjk else re.sub(rf"\b{re.escape(token)}\b", mid, text)
    return text


def shingles(text: str, language: str | None = None) -> set[str]:
    """Word :data:`SHINGLE`-grams of ``text`` in lower case (the words themselves when shorter).
    In another ``language`` than English (BCP-47): of its Snowball stems, or for Chinese and
    Japanese of its character bigrams (:meth:`~ioa_synth.text.normalise.Normaliser.for_language`)."""
    lang = lang_of(language)
    words = [w.lower() for w in _WORD.findall(text)] if lang.english else _tokens(lang.tag).tokens(text)
    if len(words) < SHINGLE:
        return set(words)
    return {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def signature(grams: set[str]) -> MinHash:
    mh = MinHash(num_perm=NUM_PERM, seed=1)
    mh.update_batch([g.encode("utf-8") for g in sorted(grams)])
    return mh


def lsh_index(threshold: float) -> MinHashLSH | None:
    """A :class:`MinHashLSH` at ``threshold``, or ``None`` when datasketch cannot build one
    (it raises ValueError "The number of bands are too small (b < 2)" above about 0.95 with
    :data:`NUM_PERM` permutations, and at 1.0)."""
    try:
        return MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    except ValueError:
        return None


class SizeWindow:
    """Exact candidates for high thresholds: the indexed shingle sets whose size a Jaccard
    index of ``threshold`` allows (``t·|A| <= |B| <= |A|/t``; at 1.0, the same size)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._sizes: list[int] = []
        self._ids: dict[int, list[str]] = {}

    def insert(self, case_id: str, grams: set[str]) -> None:
        n = len(grams)
        if n not in self._ids:
            bisect.insort(self._sizes, n)
        self._ids.setdefault(n, []).append(case_id)

    def query(self, grams: set[str]) -> Iterable[str]:
        n, t = len(grams), self.threshold
        low, high = math.ceil(n * t - 1e-9), math.floor(n / t + 1e-9)
        for size in self._sizes[bisect.bisect_left(self._sizes, low):bisect.bisect_right(self._sizes, high)]:
            yield from self._ids[size]


@dataclass
class Pair:
    """Two near-duplicate cases (``a`` the earlier) and their Jaccard ``similarity``."""

    a: str
    b: str
    split_a: str
    split_b: str
    similarity: float

    @property
    def cross_split(self) -> bool:
        return self.split_a != self.split_b


class NearDuplicateIndex:
    """Cases seen so far (thread-safe): :meth:`add` one and get the earlier case it nearly copies."""

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, language: str | None = None) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold {threshold} must be in (0, 1]")
        self.threshold, self.language = threshold, language
        self._lsh = lsh_index(threshold)
        self._window = SizeWindow(threshold) if self._lsh is None else None
        self._grams: dict[str, tuple[str, set[str]]] = {}
        self._lock = threading.Lock()

    @classmethod
    def of_build(cls, catalog: Catalog, threshold: float, language: str | None = None) -> NearDuplicateIndex:
        """An index holding every accepted case of the build directory, in case-id order
        (``language``: of the cases to come; each stored case is read in its record's)."""
        index = cls(threshold, language)
        for case_id, split, record in accepted_records(catalog):
            index.add(case_id, split, record["profiles"], record["dialogue"]["turns"], language=record.get("language"))
        return index

    def add(self, case_id: str, split: str, profiles: dict[str, Any], turns: list[dict[str, Any]],
            keep_duplicate: bool = True, language: str | None = None) -> Pair | None:
        """Index a case; return its most similar earlier case at or above the threshold
        (``None`` when there is none). With ``keep_duplicate`` false a near-copy is not indexed.
        ``language``: the case's (default: the index's)."""
        language = language or self.language
        grams = shingles(case_text(profiles, turns, language), language)
        mh = signature(grams) if self._lsh is not None else None
        with self._lock:
            best: Pair | None = None
            for other in self.candidates(grams, mh):
                other_split, other_grams = self._grams[other]
                sim = jaccard(grams, other_grams)
                if sim >= self.threshold and (best is None or sim > best.similarity):
                    best = Pair(other, case_id, other_split, split, sim)
            if best is None or keep_duplicate:
                if case_id not in self._grams:
                    if self._lsh is not None:
                        self._lsh.insert(case_id, mh)
                    else:
                        self._window.insert(case_id, grams)
                self._grams[case_id] = (split, grams)
            return best

    def candidates(self, grams: set[str], mh: MinHash | None = None) -> list[str]:
        """Indexed cases that may reach the threshold with ``grams`` (``mh``: its signature,
        computed when not given and LSH is used)."""
        if self._lsh is None:
            return list(self._window.query(grams))
        return self._lsh.query(mh if mh is not None else signature(grams))

    def grams(self, case_id: str) -> tuple[str, set[str]]:
        """``(split, shingle set)`` of an indexed case."""
        return self._grams[case_id]

    def near_copy(self, case_id: str, profiles: Any, dialogue: Any) -> str | None:
        """``build --dedup``: the discard reason when the accepted case ``case_id`` (pydantic
        stage outputs) nearly copies an earlier case, else ``None`` (and the case is indexed)."""
        split = case_id.split("/", 1)[0]
        pair = self.add(case_id, split, profiles.model_dump(), [t.model_dump() for t in dialogue.turns],
                        keep_duplicate=False)
        if pair is None:
            return None
        return f"near-duplicate of {pair.a} (Jaccard {pair.similarity:.2f} >= {self.threshold})"


def accepted_records(catalog: Catalog) -> list[tuple[str, str, dict[str, Any]]]:
    """``(case_id, split, record)`` of every readable accepted record, in split and case-id order."""
    out = []
    for case_id, split, path in catalog.execute(
            "SELECT case_id, split, path FROM cases WHERE status = 'accepted' ORDER BY split, case_id"):
        try:
            record = json.loads(record_file(catalog, case_id).read_text(encoding="utf-8"))
            record["profiles"], record["dialogue"]["turns"]
        except (OSError, TypeError, ValueError, KeyError):
            continue
        out.append((case_id, split, record))
    return out


def near_duplicates(catalog: Catalog, threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every pair of accepted cases at or above ``threshold``, within and across splits,
    most similar first."""
    index = NearDuplicateIndex(threshold)
    records = accepted_records(catalog)
    pairs: list[Pair] = []
    for case_id, split, record in records:
        index.add(case_id, split, record["profiles"], record["dialogue"]["turns"], language=record.get("language"))
    for case_id, split, record in records:  # every pair once: against the cases indexed before it
        grams = index.grams(case_id)[1]
        for other in index.candidates(grams):
            other_split, other_grams = index.grams(other)
            if (other_split, other) < (split, case_id):
                sim = jaccard(grams, other_grams)
                if sim >= threshold:
                    pairs.append(Pair(other, case_id, other_split, split, sim))
    return sorted(pairs, key=lambda p: (-p.similarity, p.a, p.b))


__all__ = ["DEFAULT_THRESHOLD", "NearDuplicateIndex", "Pair", "accepted_records", "case_text", "near_duplicates",
           "shingles"]
