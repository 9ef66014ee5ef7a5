"""The content gates' thresholds as one typed model, documented in docs/build.md
("Content gates"); used by :mod:`ioa_synth.protocol.gates` and
:mod:`ioa_synth.protocol.gates_form`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class GateThresholds(BaseModel):
    """The gates' thresholds, in one typed place beside the rubric.

    Tuned on realistic text: the careful dialogues in ``tests/protocol/test_gates.py`` (written as
    a human would) pass, the copied/placeholder outputs of a 1.5B model fail.
    """

    placeholders: tuple[str, ...] = Field(
        ("n/a", "na", "tbd", "todo", "tba", "none", "null", "text", "string", "placeholder", "xxx",
         "lorem ipsum", "etc", "same", "same as above", "unknown"),
        description="whole-field values (normalised: lower case, outer punctuation stripped) that are placeholders; "
                    "a field with no letter or digit ('...', '…', '-') and a field in angle brackets ('<text>') "
                    "are placeholders too")
    min_understanding_words: int = Field(
        5, description="fewest words in member_a_understanding / member_b_understanding: a concrete reading "
                       "('the 2023 Q4 invoices from the ERP export') needs more than a label")
    copied_description_words: int = Field(
        6, description="a text field sharing this many consecutive words with one of the prompt's field "
                       "descriptions was copied from the prompt")
    max_understanding_overlap: float = Field(
        0.5, description="Jaccard overlap of the two understandings' stemmed content-token sets at or above which "
                         "they count as the same reading (two careful, distinct readings of one term share well "
                         "under a third of their content words; two wordings of one textbook definition, as a 1.5B "
                         "model wrote them, share 0.64)")
    number_words: tuple[str, ...] = Field(
        ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "twenty",
         "thirty", "forty", "fifty", "hundred", "thousand", "million", "billion", "few", "dozen", "half", "quarter"),
        description="words that, like a token with a digit, state a quantity (see max_quantity_understanding_overlap)")
    max_quantity_understanding_overlap: float = Field(
        0.8, description="overlap at or above which two understandings that name different quantities are still the "
                         "same reading (a long copy with one number changed); below it, different quantities make "
                         "different readings ('.05 million dollars' vs '.04 million dollars', 'over 1 million "
                         "transactions across nine fields' vs 'a few hundred transactions across five fields', "
                         "recorded from the demo)")
    surface_form_coverage: float = Field(
        0.66, description="share of a surface form's stemmed content tokens that one utterance must contain for "
                          "the MA to count as voiced (1-2 tokens: all; 3 tokens: 2; 4: 3)")
    repeated_utterance_overlap: float = Field(
        0.8, description="an utterance of at least 4 content tokens whose content-token set overlaps an earlier "
                         "utterance's this much (Jaccard) repeats it: every turn must add something")
    private_ngram_words: int = Field(
        4, description="an utterance sharing a run of this many stemmed content tokens with an understanding or a "
                       "private_state states it aloud; runs at least half made of surface-form tokens are exempt "
                       "(saying the shared phrase is the point)")
    thought_outline_words: int = Field(
        5, description="an inner thought sharing a run of this many stemmed content tokens with an outline turn's "
                       "description restates the outline instead of the speaker's private reading (the demo model "
                       "wrote 'I asked if there are any concerns related to the training process' for the outline's "
                       "'M2 asks if there are any concerns related to the training process'); runs at least half "
                       "made of surface-form tokens are exempt")
    cutoff_margin_chars: int = Field(
        2, description="a text field this many characters or fewer short of its schema maxLength was cut off by the "
                       "grammar (the demo model's cut texts sit exactly at the limit; finished sentences end well "
                       "short of it)")
    field_name_words: tuple[str, ...] = Field(
        ("member_a_understanding", "member_b_understanding", "why_undetected", "surface_form", "private_state",
         "hidden_assumptions", "meeting_scenario", "conversation_outline", "misalignment_points", "inner_thought",
         "speaker_id", "speaker_name", "turn_idx", "ma_ids"),
        description="schema field names that never occur in prose; one inside a text field means the model wrote "
                    "part of the JSON object into a value")
    json_syntax: tuple[str, ...] = Field(
        (r"""["']\s*:\s*["'{\[]""", r"""[{\[]\s*["']\w+["']\s*:""", r"""["']\s*,\s*["']\w+["']\s*:"""),
        description="regular expressions of JSON syntax inside a text value: a quoted key or value followed by a "
                    "colon and a quote or bracket, an opening brace or bracket before a quoted key, a comma between "
                    "a quoted value and a quoted key")
    surface_punctuation: str = Field(
        r"(?:(?!\s)[\W_]){2,}",
        description="regular expression of stray punctuation in a surface form (two or more punctuation marks in a "
                    "row; a surface form ending like unfinished_text fails the same way, a final full stop is "
                    "ignored): the phrase both members say is words, and the demo model's 'designed "
                    "toenerateHuman-like,._.,' is token debris")
    unfinished_text: str = Field(
        r"[,;:]\s*$",
        description="regular expression of a text field's ending that leaves its sentence unfinished (a trailing "
                    "comma, semicolon or colon): the demo model's utterance 'As we begin our discussion on the "
                    "paper's abstract,' is half a sentence")
    meta_terms: tuple[str, ...] = Field(
        (r"\bMA\d+\b", r"\bmisalignment points?\b", r"\bthis case'?s plan\b", r"\bhidden disagreements?\b"),
        description="regular expressions (case-insensitive) of the benchmark's own vocabulary, which never belongs in "
                    "a case's in-world text (the ma_ids lists aside): the demo model wrote 'This case's plan involves "
                    "exactly 3 misalignment points (MA1, MA2, MA3)' into a meeting scenario")
    foreign_script: str = Field(
        r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]",
        description="regular expression of characters (CJK ideographs, kana, Hangul) that do not belong in the "
                    "English text of a case: a small model pushed away from repeating itself drifts into them "
                    "mid-word ('to train模型')")
    question_words: tuple[str, ...] = Field(
        ("what", "why", "how", "when", "where", "which", "who", "whom", "whose", "is", "are", "do", "does", "did",
         "can", "could", "should", "would", "will", "shall"),
        description="a surface form starting with one of these words (and more than one word long), or containing "
                    "'?', is a question, not a phrase both members use")
    max_surface_words: int = Field(
        6, description="most words in a surface form: the phrase both members say is short (two to six words); a "
                       "longer one is a definition or a sentence (the demo model wrote 'the ratio of the number of "
                       "tokens predicted correctly by the model divided')")
    statement_words: tuple[str, ...] = Field(
        ("is", "are", "was", "were", "means", "refers"),
        description="a surface form containing one of these words (after its first word) states something about the "
                    "phrase ('an identifier is a name given to a variable') instead of being the phrase")
    dangling_words: tuple[str, ...] = Field(
        ("the", "a", "an", "of", "to", "and", "or", "nor", "but", "for", "with", "in", "on", "at", "by", "from", "as",
         "into", "than", "that", "which", "between", "about", "its", "their", "our"),
        description="words a surface form cannot end on: articles, prepositions, conjunctions and possessives leave "
                    "the phrase unfinished ('the metric used to assess the', cut at the plan's word limit)")
    stock_names: tuple[str, ...] = Field(
        ("john doe", "jane doe", "john smith", "jane smith", "joe bloggs", "john q public", "richard roe",
         "alice", "bob", "alice smith", "bob smith", "first last", "firstname lastname", "name surname",
         "person a", "person b", "member a", "member b", "participant a", "participant b"),
        description="member names (titles dropped, lower case) that are stock placeholders, not people")
    max_member_overlap: float = Field(
        0.8, description="Jaccard overlap of content stems, without the members' names and ids, between M1's and "
                         "M2's private_state, or between any hidden assumption of M1 and one of M2, at or above which "
                         "the two hold the same one (a copy with the name swapped shares 1.0; two premises about one "
                         "object share up to 0.73), unless exactly one of the two is negated")
    max_why_undetected_overlap: float = Field(
        0.6, description="Jaccard overlap of content stems of two MAs' why_undetected at or above which one reason "
                         "was repeated for both")
