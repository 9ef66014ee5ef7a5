"""WordNet for the lexical baseline of the IoA paper (§5.1, Table 11): the dialogue's words
ranked by how many senses WordNet gives them, and a lexical overlap that counts a WordNet
synonym as a match ("car" / "automobile").

The data is Princeton WordNet 3.0 as Debian's ``wordnet-base`` package installs it
(``/usr/share/wordnet``: ``index.*``, ``data.*``, ``*.exc``), read with nltk's
``WordNetCorpusReader`` (the ``wordnet`` extra); nothing is downloaded at run time.
``scripts/setup.sh`` installs the package when run as root. Debian ships no ``lexnames`` file
(the numbered list of WordNet's 45 lexicographer files, the same in every 3.0 copy), which
the reader opens when it starts: :data:`LEXNAMES` supplies it; and the reader's mapping onto
nltk's downloadable copy (used by the multilingual Open Multilingual Wordnet functions only)
is switched off, so it never looks for that copy.
"""

from __future__ import annotations

import io
import os
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ioa_synth.probing.text import EXPRESSION, content_tokens

#: Where Debian's ``wordnet-base`` puts the database; ``IOA_WORDNET_DIR`` names another copy.
DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")

#: WordNet 3.0's lexicographer files by number (lexnames(5WN)); the part of speech is not needed here.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_POS_NUMBER = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


class WordNetMissing(RuntimeError):
    """The WordNet data or nltk is not installed; the message says what to install."""


def wordnet_dir() -> Path:
    """The WordNet database folder: ``IOA_WORDNET_DIR`` or :data:`DEFAULT_WORDNET_DIR`."""
    return Path(os.environ.get("IOA_WORDNET_DIR") or DEFAULT_WORDNET_DIR)


@dataclass(frozen=True)
class Lexicon:
    """Sense counts and synonyms from one WordNet copy (``reader``: nltk's corpus reader).
    Safe from several threads (evaluate's workers): nltk's reader seeks in one shared handle
    per data file, so every lookup holds ``lock``."""

    reader: Any
    lock: Any = field(default_factory=threading.Lock, compare=False, repr=False)

    def _synsets(self, word: str) -> list[Any]:
        with self.lock:
            return list(self.reader.synsets(word))

    def senses(self, word: str) -> int:
        """How many synsets WordNet gives ``word`` over all parts of speech (its base form
        found by WordNet's morphology: "banks" counts as "bank"); 0 for an unknown word."""
        return len(self._synsets(word))

    def synonyms(self, word: str) -> frozenset[str]:
        """The lower-cased lemma names of every synset of ``word`` ("car" → {"car",
        "automobile", "auto", "machine", "motorcar", ...}); multiword lemmas keep their
        underscores and so never equal a single token."""
        return frozenset(name.lower() for s in self._synsets(word) for name in s.lemma_names())


@lru_cache(maxsize=4)
def _load(root: str) -> Lexicon:
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise WordNetMissing("the WordNet baseline needs nltk: pip install -e '.[wordnet]' "
                             "(scripts/setup.sh installs it)") from None
    if not (Path(root) / "index.noun").is_file():
        raise WordNetMissing(f"no WordNet database in {root}: install Debian's wordnet-base "
                             "(apt-get install wordnet-base; scripts/setup.sh does it when run as root) "
                             "or set IOA_WORDNET_DIR to a WordNet 3.0 'dict' folder")

    class _Reader(WordNetCorpusReader):  # the lexnames file Debian leaves out
        def open(self, fileid: str) -> Any:
            if fileid == "lexnames" and not (Path(root) / "lexnames").is_file():
                return io.StringIO("".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n"
                                           for i, name in enumerate(LEXNAMES)))
            return super().open(fileid)

        def map_wn(self, version: str = "wordnet") -> None:  # the map to nltk's own copy serves OMW only
            return None

    if root not in nltk.data.path:  # nltk reads only from its allowed data folders
        nltk.data.path.append(root)
    import warnings
    with warnings.catch_warnings():  # "multilingual functions are not available": not used here
        warnings.simplefilter("ignore", UserWarning)
        return Lexicon(_Reader(root, None))


def load_wordnet(root: str | Path | None = None) -> Lexicon:
    """The WordNet at ``root`` (default :func:`wordnet_dir`), loaded once per folder.

    Raises:
        WordNetMissing: nltk or the database is not installed (the message says how to install it).
    """
    with _LOADING:  # one load per folder, even when the first callers are several workers
        return _load(str(root or wordnet_dir()))


_LOADING = threading.Lock()


def lexical_overlap(a: str | None, b: str | None, lexicon: Lexicon | None = None) -> float:
    """Overlap coefficient of the content tokens of ``a`` and ``b`` (the normaliser of
    :mod:`ioa_synth.probing.text`: case and accents folded, function words dropped), in 0-1:
    the share of the smaller side's tokens (``a``'s on a tie) found in the other side, where
    with a ``lexicon`` a token is also found when the other side has one of its WordNet
    synonyms. 0 when either side has no content token. Without a lexicon this is
    :func:`ioa_synth.probing.text.token_overlap`.

    ``"the car budget"`` vs ``"automobile costs"``: tokens {car, budget} / {automobile, costs};
    "car" matches "automobile" through WordNet, "budget" matches nothing → 1/2 = 0.5.
    """
    ta, tb = content_tokens(a), content_tokens(b)
    if not ta or not tb:
        return 0.0
    small, other = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    found = sum(1 for t in small if t in other or (lexicon is not None and lexicon.synonyms(t) & other))
    return found / len(small)


#: A word of an utterance as written (letters only: digits have no WordNet senses).
_WORD = re.compile(r"[^\W\d_]+")


def polysemous_expressions(turns: list[tuple[int, str]], lexicon: Lexicon, n: int) -> list[dict[str, Any]]:
    """The lexical baseline's selection (paper §5.1, Table 11): the ``n`` distinct content
    words of the utterances with the most WordNet senses, most senses first, ties by first
    occurrence; each as ``{"expression": the word as first written, "turn": that turn}``.

    ``turns``: ``[(turn_idx, utterance)]`` in dialogue order. Words are compared after
    :data:`~ioa_synth.probing.text.EXPRESSION` normalisation (function words never count);
    words WordNet does not know are never chosen, so fewer than ``n`` may come back.
    """
    first: dict[str, tuple[int, str, int]] = {}  # normalised word -> (order, as written, turn)
    for turn, utterance in turns:
        for m in _WORD.finditer(utterance or ""):
            words = EXPRESSION.tokens(m.group(0))
            if len(words) == 1 and words[0] not in first:
                first[words[0]] = (len(first), m.group(0), turn)
    scored = [(-lexicon.senses(w), order, written, turn) for w, (order, written, turn) in first.items()]
    ranked = sorted(s for s in scored if s[0] < 0)
    return [{"expression": written, "turn": turn} for _, _, written, turn in ranked[:n]]
