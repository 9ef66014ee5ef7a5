"""Turn source abstracts into plain text.

- JATS (PMC, JATS 1.x tag library): :func:`jats_abstract` takes the main ``<abstract>``
  (not author summaries, teasers or editor summaries), writes each ``<sec>`` as
  ``Title: text`` on its own line and flattens inline tags; MathML keeps only its text.
- Strings with markup inside (OpenAlex abstracts with ``<jats:p>``/HTML tags, the
  ``Bio.Entrez`` parser's abstract strings with literal ``<i>`` and raw ``<mml:math>``):
  :func:`strip_markup`.
- arXiv ``<summary>``: :func:`arxiv_summary` joins hard line wraps; a line indented with
  spaces starts a new paragraph (arXiv metadata convention). TeX is kept as published.
- Entities are unescaped everywhere (twice, for double-escaped sources).
"""

from __future__ import annotations

import html
import re
from typing import Iterable

from lxml import etree

MML_NS = "http://www.w3.org/1998/Math/MathML"
XLINK_NS = "http://www.w3.org/1999/xlink"

#: JATS/HTML elements that end a line of text.
BLOCK_TAGS = frozenset({"p", "sec", "title", "list", "list-item", "li", "ul", "ol", "div", "br",
                        "abstracttext", "disp-quote", "def-list", "def-item", "table-wrap"})
#: ``abstract-type`` values that are not the paper's abstract.
SKIPPED_ABSTRACT_TYPES = frozenset({"summary", "author-summary", "teaser", "editor",
                                    "editor-summary", "precis", "graphical", "toc", "web-summary",
                                    "short", "lay-summary", "video", "executive-summary",
                                    "executive_summary", "plain-language-summary"})
#: JATS elements dropped with their content (citation and footnote markers); their tail stays.
DROPPED_TAGS = frozenset({"xref", "fn"})
_DROPPED = re.compile(r"<((?:[\w-]+:)?(?:xref|fn))\b[^>]*?(?:/>|>.*?</\1\s*>)", re.S)
_TAG = re.compile(r"</?([A-Za-z][\w.-]*:)?([A-Za-z][\w.-]*)(?:\s[^<>]*)?/?>")
_MATH = re.compile(r"<((?:[\w-]+:)?math)\b[^>]*>.*?</\1\s*>", re.S)
_LABEL = re.compile(r"^(?:abstract|ABSTRACT|Abstract|SUMMARY|Summary)\b[\s:.\-–—]*(?=[A-Z0-9(\"'])")
_ENGLISH = frozenset("the of and to in a is that for with on as are by this we be an from at which "
                     "or it these our can has have was were not their its between using based "
                     "also than more".split())


def _local(tag: object) -> str:
    return etree.QName(tag).localname.lower() if isinstance(tag, str) else ""


def unescape(text: str) -> str:
    """Unescape HTML/XML entities, twice (``&amp;lt;`` → ``<``)."""
    return html.unescape(html.unescape(text))


def tidy(text: str) -> str:
    """Collapse runs of blanks inside each line, drop empty lines, strip the ends."""
    lines = (" ".join(line.split()) for line in text.replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def math_text(element: etree._Element) -> str:
    """Plain text of a MathML ``<math>``: its ``alttext`` if given, else its tokens run together."""
    alt = element.get("alttext")
    if alt and alt.strip():
        return alt.strip()
    return "".join(t.strip() for t in element.itertext())


def element_text(element: etree._Element) -> str:
    """Text of an XML element: inline tags flattened, block tags on their own lines, math as text."""
    parts: list[str] = []

    def walk(el: etree._Element) -> None:
        name = _local(el.tag)
        if name in DROPPED_TAGS:
            return  # a citation or footnote marker: "(p < 0.01)<xref>1</xref>." -> "(p < 0.01)."
        if name == "math":
            parts.append(math_text(el))
        elif name == "alternatives":  # the same formula several ways: keep one
            first = next((c for c in el if _local(c.tag) in ("math", "tex-math")), None)
            if first is not None:
                walk_with_tail(first, tail=False)
        elif isinstance(el.tag, str):
            block = name in BLOCK_TAGS
            if block:
                parts.append("\n")
            parts.append(el.text or "")
            for child in el:
                walk_with_tail(child)
            if block:
                parts.append("\n")

    def walk_with_tail(el: etree._Element, tail: bool = True) -> None:
        walk(el)
        if tail and el.tail:
            parts.append(el.tail)

    walk(element)
    return tidy(unescape("".join(parts)))


def _sections(abstract: etree._Element) -> Iterable[str]:
    for child in abstract:
        name = _local(child.tag)
        if name == "sec":
            title = child.find("{*}title")
            head = element_text(title) if title is not None else ""
            body = " ".join(
                element_text(c) for c in child if _local(c.tag) not in ("title", "sec", "label")
            ).strip()
            if head or body:
                yield f"{head}: {body}" if head and body else head or body
            for sub in child.iterfind("{*}sec"):
                yield from _sections(sub)
        elif name in ("title", "label", "object-id"):
            continue  # a heading such as "Abstract"
        elif isinstance(child.tag, str):
            text = element_text(child)
            if text:
                yield " ".join(text.split("\n"))


def jats_abstract(article: etree._Element) -> str | None:
    """Plain text of the main abstract of a JATS ``<article>``, or None if it has none.

    The first untyped ``<abstract>`` in ``front/article-meta`` (the main one, even when an
    executive summary or teaser comes first), else the first whose ``abstract-type`` is
    not one of :data:`SKIPPED_ABSTRACT_TYPES`; sections become ``Title: text`` lines in
    order; citation and footnote markers are dropped.
    """
    abstracts = list(article.iterfind(".//{*}article-meta/{*}abstract"))
    ordered = [a for a in abstracts if not a.get("abstract-type")] + [a for a in abstracts if a.get("abstract-type")]
    for abstract in ordered:
        kind = (abstract.get("abstract-type") or "").lower()
        if kind in SKIPPED_ABSTRACT_TYPES:
            continue
        text = tidy("\n".join(_sections(abstract)))
        if text:
            return text
    return None


def strip_markup(text: str | None) -> str:
    """Plain text from a string that may hold HTML/JATS/MathML tags and entities.

    MathML blocks become their token text; ``<xref>``/``<fn>`` markers vanish with their
    content; block tags become line breaks, inline tags vanish (``LE<sub>min</sub>`` → ``LEmin``). A ``<`` not followed by a letter (``p<0.05``)
    is kept.
    """
    if not text:
        return ""

    def math(m: re.Match[str]) -> str:
        try:
            el = etree.fromstring(m.group(0).encode(), etree.XMLParser(recover=True, no_network=True))
        except etree.XMLSyntaxError:
            el = None
        return math_text(el) if el is not None else ""

    def tag(m: re.Match[str]) -> str:
        return "\n" if m.group(2).lower() in BLOCK_TAGS else ""

    text = _MATH.sub(math, text)
    text = _DROPPED.sub("", text)
    text = _TAG.sub(tag, text)
    return tidy(unescape(text.replace("\\n", "\n")))


def openalex_abstract(rebuilt: str | None) -> str | None:
    """Clean an abstract rebuilt from OpenAlex's inverted index; None if empty.

    Strips markup and a leading "Abstract"/"Summary" label, which OpenAlex keeps as a token.
    """
    text = strip_markup(rebuilt)
    text = _LABEL.sub("", text, count=1).strip()
    return " ".join(text.split()) or None


def arxiv_summary(summary: str | None) -> str | None:
    """Plain text of an arXiv ``<summary>``: wraps joined, indented lines start paragraphs."""
    if not summary:
        return None
    paragraphs: list[list[str]] = []
    for i, line in enumerate(unescape(summary).split("\n")):
        if not line.strip():
            continue
        if not paragraphs or (i > 0 and line[:1].isspace()):
            paragraphs.append([])
        paragraphs[-1].append(line.strip())
    text = "\n".join(" ".join(p) for p in paragraphs)
    return tidy(text) or None


def looks_english(text: str, min_words: int = 20, min_share: float = 0.12) -> bool:
    """Heuristic language check for sources without language metadata (arXiv).

    True when the text is short (under ``min_words`` words: not enough evidence) or at least
    ``min_share`` of its words are common English function words.
    """
    words = re.findall(r"[^\W\d_]+", text.lower())
    if len(words) < min_words:
        return True
    return sum(w in _ENGLISH for w in words) / len(words) >= min_share
