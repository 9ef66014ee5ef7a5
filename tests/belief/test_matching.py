"""Alias matching uses the toolkit's one normaliser: on every string tried it gives what the
belief study's own normaliser gave before (so no screening label or import decision moves)."""

from __future__ import annotations

import csv
import json
import random
import re
import sys
import unicodedata
from pathlib import Path

from ioa_helpers import json_strings
from ioa_synth.belief.matching import mentions, normalize, sample_label, share_alias

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "belief"

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def _former_rule(text: str) -> str:
    """The belief study's former normaliser, kept here as the reference: NFKD without
    combining marks, lower case, every non-word character and ``_`` a space, whitespace
    collapsed."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(_PUNCT.sub(" ", plain.lower()).replace("_", " ").split())


def _sample_strings() -> list[str]:
    out = [s for line in (SAMPLES / "items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
           for s in json_strings(json.loads(line))]
    out += json_strings(json.loads((SAMPLES / "counterfact.json").read_text(encoding="utf-8")))
    for name, delimiter in (("popqa.tsv", "\t"), ("simpleqa.csv", ",")):
        with open(SAMPLES / name, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter=delimiter))
        out += [cell for row in rows for cell in row]
        out += [s for row in rows for cell in row if cell.startswith("[") for s in json_strings(json.loads(cell))]
    return out


TRICKY = [
    "", " ", "\t\n", "Déjà-vu, São_Paulo!", "Straße", "STRASSE", "İstanbul", "ΣΊΣΥΦΟΣ", "Ångström",
    "ﬁnal ﬂow", "ＦＵＬＬ　ｗｉｄｔｈ１２３", "Dr. J.R.R. Tolkien's", "rock-'n'-roll", "U.S.A.", "C++ / C#",
    "3.14159", "1,000,000", "٣٤ ½ ²", "snake_case__x_", "a\u00a0b\u2003c\u3000d\x1ce", "naïve café",
    "Zürich (ZH)", "Москва", "東京都", "😀 smile", "e\u0301", "\u0301", "Œuvre Æsir", "ǅemal", "ﬀ",
    "Bank of Japan", "the Beatles", "Marie Skłodowska-Curie", "Ørsted", "Đorđe", "ł", "1868", "1990s",
]


def test_the_shared_normaliser_equals_the_former_one():
    strings = _sample_strings()
    assert len(strings) > 500  # the sample files were read
    rng = random.Random(20260516)
    pool = "".join(TRICKY) + "_-'.,;:!?()[]{}\"/\\ \t\n" + "".join(chr(c) for c in range(0x250))
    strings += TRICKY
    strings += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 16))) for _ in range(3000)]
    # any code point but the surrogates
    strings += ["".join(chr(c) for c in (rng.randrange(0xD800) if rng.random() < 0.6 else
                                         rng.randrange(0xE000, sys.maxunicode + 1) for _ in range(rng.randint(1, 12))))
                for _ in range(3000)]
    differ = [s for s in strings if normalize(s) != _former_rule(s)]
    assert not differ, differ[:5]


def test_matching_rules_on_tricky_strings():
    assert normalize("Déjà-vu, São_Paulo!") == "deja vu sao paulo"
    assert normalize("Straße") == "straße"  # lower case, not casefold
    assert mentions("I'd say SÃO PAULO, surely.", ["Sao Paulo"]) and not mentions("Paulownia", ["Paul"])
    assert not mentions("anything", ["", "!!"])  # an alias that normalises to nothing never matches
    assert share_alias(["U.S.A."], ["usa", "u s a"]) and not share_alias(["?"], ["!"])
    assert sample_label("Canberra, not Sydney", ["Canberra"], ["Sydney"]) == "both"
    assert sample_label("It is 1868.", ["1868"], ["1869"]) == "true"
    assert sample_label("no idea", ["Canberra"], ["Sydney"]) is None
