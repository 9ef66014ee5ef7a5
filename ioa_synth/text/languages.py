"""The languages a build can be written in (``build --language TAG``): one registry that every
string rule reads, so that a rule asks the language instead of assuming English.

The paper's IoA-Suite is English only (its "Limitations" section names other languages, "with
different conventions for indirectness and explicit disagreement", as open). English stays the
default and every English rule stays as it was; a :class:`Language` says, for one other
language:

- ``snowball``: the Snowball stemmer's language name (``snowballstemmer``), or ``None`` for
  Chinese and Japanese, which are not written with spaces between words: their text is compared
  by overlapping character bigrams of its CJK runs (:data:`CJK_NGRAM`; Latin-script words inside
  it stay whole words), without a segmenter;
- ``function_words``: the words (for Chinese and Japanese, the characters) that carry no reading
  of their own, which content tokens drop (short lists written for this toolkit, not a corpus
  list);
- ``negations``: the words (Chinese, Japanese: substrings) that negate a statement;
- ``lingua``: the language's name in ``lingua-language-detector`` (the language gate), and
  ``neighbours``: the languages its detector also tells it from besides English;
- ``conventions``: how speakers of the language commonly voice disagreement without saying it
  outright, in this toolkit's own words; the build's prompts give it to the generator and the
  judges (docs/build.md, "Other languages").

Tags are BCP-47 (``de``, ``de-DE``, ``zh-Hans-CN``, ``ja-JP``): the primary language subtag
chooses the entry; :func:`language` raises :class:`UnknownLanguage` for any other.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache

#: The default language of a build (the paper's): records and settings without a language are English.
DEFAULT_LANGUAGE = "en"
#: Characters compared as character n-grams: CJK ideographs (with extension A and the
#: compatibility block), hiragana, katakana (with the long-vowel mark and half-width forms).
CJK_CHARS = "\u3041-\u3096\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
#: A run of hiragana, or of the other CJK characters: Japanese text splits where its script
#: changes, so that particles and endings (hiragana) do not join the kanji and katakana of the
#: words around them into one n-gram (Chinese has no hiragana: its runs stay whole).
CJK_RUNS = ("([\u3041-\u3096]+|[\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
            "\uff66-\uff9f]+)")
#: Length of the character n-grams of CJK text.
CJK_NGRAM = 2

_HIRAGANA = [chr(c) for c in range(0x3041, 0x3097)]


class UnknownLanguage(ValueError):
    """A language tag that no :class:`Language` serves (the message lists the ones that do)."""


@dataclass(frozen=True)
class Language:
    """One language of the registry (see the module docstring for each field)."""

    tag: str
    name: str
    snowball: str | None
    lingua: str
    function_words: frozenset[str] = frozenset()
    negations: tuple[str, ...] = ()
    neighbours: tuple[str, ...] = ()
    conventions: str = ""
    #: Japanese: a token of hiragana alone is grammar (particles, endings), dropped like a function word
    hiragana_is_function: bool = field(default=False)

    @property
    def cjk(self) -> bool:
        """True when text is compared by character n-grams (no spaces between words)."""
        return self.snowball is None and self.tag != DEFAULT_LANGUAGE

    @property
    def english(self) -> bool:
        return self.tag == DEFAULT_LANGUAGE

    def stop_tokens(self) -> frozenset[str]:
        """The tokens content tokens drop: :attr:`function_words`; for a CJK language also every
        n-gram made of function characters only (with Japanese, of hiragana only)."""
        if not self.cjk:
            return self.function_words
        chars = set(self.function_words) | (set(_HIRAGANA) if self.hiragana_is_function else set())
        grams = {"".join(p) for n in range(1, CJK_NGRAM + 1) for p in itertools.product(sorted(chars), repeat=n)}
        return frozenset(grams | self.function_words)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LANGUAGES: dict[str, Language] = {lang.tag: lang for lang in (
    Language("en", "English", "english", "ENGLISH"),
    Language(
        "de", "German", "german", "GERMAN",
        _words("""der die das den dem des ein eine einen einem einer eines und oder aber doch sondern denn
                  ich du er sie es wir ihr mich mir dich dir uns euch ihn ihm ihnen sich mein meine dein deine
                  unser unsere euer sein seine ihre ist sind war waren bin bist seid sein wird werden wurde
                  hat haben hatte hatten habe kann können muss müssen soll sollen will wollen würde
                  zu zum zur von vom mit bei für auf an am im in aus nach über unter vor als wie so dass
                  auch noch schon nur sehr ja nein mal dann da hier dort wenn ob also"""),
        ("nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals", "nichts"),
        conventions=(
            "German workplace talk is often direct about facts, so disagreement that stays hidden tends "
            "to hide in agreement on a word rather than in politeness: both people say the same term "
            "(a compound noun, a deadline, a figure) and each fills it in differently. When people do "
            "soften, they use the subjunctive (\"wäre es nicht sinnvoll ...\", \"ich würde eher ...\"), "
            "particles such as \"eigentlich\", \"eher\", \"doch\" or \"vielleicht\", and a \"ja, aber\" that "
            "grants the point before moving past it. Formal address (Sie) is usual between colleagues "
            "who are not close; first names with du are common in young teams.")),
    Language(
        "es", "Spanish", "spanish", "SPANISH",
        _words("""el la los las un una unos unas lo al del de a en con por para sin sobre entre y o u e ni
                  pero sino que como si ya muy más menos también solo yo tú él ella nosotros vosotros ellos
                  ellas me te se nos os le les mi mis tu tus su sus nuestro nuestra es son era eran fue
                  ser estar está están estamos hay ha han he hemos haber tiene tienen puede pueden
                  este esta estos estas ese esa eso esto aquí allí"""),
        ("no", "nunca", "jamás", "ningún", "ninguna", "ninguno", "nada", "tampoco"),
        conventions=(
            "In Spanish-speaking workplaces open contradiction of a colleague, and above all of a "
            "superior, is often avoided in favour of keeping the relationship warm. Doubt is voiced as a "
            "question or a suggestion (\"¿y si lo miramos otra vez?\", \"quizás convendría ...\"), with the "
            "conditional (\"yo lo haría ...\"), or by agreeing first (\"sí, claro, aunque ...\"). A quick "
            "\"vale\" or \"de acuerdo\" can close a topic without settling it. Tú between peers is common "
            "in Spain; usted is more usual with seniors and in much of Latin America.")),
    Language(
        "fr", "French", "french", "FRENCH",
        _words("""le la les l un une des du de d au aux à en dans par pour avec sans sur sous entre et ou
                  mais donc or ni car que qu qui quoi si comme plus moins aussi très je tu il elle on nous
                  vous ils elles me m te t se s lui leur leurs mon ma mes ton ta tes son sa ses notre nos
                  votre vos est sont était étaient être été a ont avait avoir ai avons avez fait peut
                  peuvent ce cet cette ces ça cela ceci y"""),
        ("ne", "pas", "jamais", "rien", "aucun", "aucune", "personne", "guère"),
        conventions=(
            "French professional talk tolerates open debate of ideas, but criticism of a person's work "
            "is usually wrapped: a conditional (\"il faudrait peut-être ...\", \"on pourrait ...\"), a "
            "concession first (\"c'est vrai, mais ...\", \"certes ...\"), understatement (\"ce n'est pas "
            "tout à fait ce que j'avais en tête\"), or a question that invites the other to revise. "
            "\"D'accord\" and \"ça marche\" can mean \"I heard you\" rather than \"I agree\". Vous is the "
            "default between colleagues who are not close.")),
    Language(
        "zh", "Chinese", None, "CHINESE",
        frozenset("的了是在我你他她它们这那和与也就都很吧呢吗啊呀么个有会要能可以对把被给让从到"),
        ("不", "没", "别", "未", "无", "非"),
        neighbours=("ja",),
        conventions=(
            "In Chinese workplace conversation, keeping face (面子) for both sides and the harmony of the "
            "group usually weigh more than stating a disagreement plainly, especially towards someone "
            "senior. Reservations come as hedges and deferrals: \"我再考虑一下\" (let me think about it "
            "more), \"原则上没问题\" (no problem in principle), \"可以研究研究\" (we can look into it), a "
            "question about details, or a long pause filled with agreement words such as \"好的\" or "
            "\"嗯\" that acknowledge without committing. People address each other by title and surname "
            "(王经理, 李老师) more than by given name.")),
    Language(
        "ja", "Japanese", None, "JAPANESE",
        frozenset("、。「」『』・"),
        ("ない", "ません", "なかった", "ず", "ぬ", "無い"),
        neighbours=("zh",),
        hiragana_is_function=True,
        conventions=(
            "Japanese business conversation avoids a direct \"no\" (いいえ is rare in meetings). "
            "Disagreement is read from context: \"検討します\" (we will consider it) and "
            "\"前向きに検討します\" often mean a polite refusal, \"ちょっと難しいかもしれません\" (it might be a "
            "little difficult) means it will not happen, and a sentence left unfinished (\"それはちょっと"
            "…\") signals a problem without naming it. Aizuchi such as \"はい\", \"なるほど\" and \"そうですね\" "
            "show that one is listening, not that one agrees. Colleagues use surnames with さん and the "
            "polite です/ます forms; keigo rises towards seniors and clients.")),
)}


def supported_languages() -> tuple[str, ...]:
    """The primary subtags of the registry, in a stable order (English first)."""
    return tuple(_LANGUAGES)


_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")


@lru_cache(maxsize=64)
def language(tag: str | None) -> Language:
    """The :class:`Language` of the BCP-47 ``tag`` (its primary subtag, in any case, with
    ``-`` or the POSIX ``_`` between subtags: ``de``, ``DE``, ``de_DE``, ``zh-Hans-CN``;
    ``None``: English, the default).

    Raises:
        UnknownLanguage: the tag is empty (an unset shell variable, ``--language "$L"``, must
            not quietly mean English), malformed, or its language is not in the registry."""
    if tag is None:
        return _LANGUAGES[DEFAULT_LANGUAGE]
    if not tag.strip():
        raise UnknownLanguage(f"--language is empty; give a language tag (e.g. de, ja-JP, zh-Hans) or leave the "
                              f"option out for English; supported: {', '.join(supported_languages())}")
    if not _TAG.match(tag):
        raise UnknownLanguage(f"--language {tag!r} is not a BCP-47 language tag (e.g. de, ja-JP, zh-Hans); "
                              f"supported: {', '.join(supported_languages())}")
    found = _LANGUAGES.get(re.split(r"[-_]", tag, maxsplit=1)[0].lower())
    if found is None:
        raise UnknownLanguage(f"--language {tag!r}: no rules for this language; supported: "
                              f"{', '.join(supported_languages())}")
    return found


def language_tag(tag: str | None) -> str:
    """The registry's tag for ``tag`` (``"de-DE"`` → ``"de"``; ``None`` → ``"en"``); raises
    :class:`UnknownLanguage` like :func:`language`."""
    return language(tag).tag
