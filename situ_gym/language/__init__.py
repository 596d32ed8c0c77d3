"""The one place where text is read: normalisation, lemmas, entity linking, utterance analysis.

>>> from situ_gym.scene import SceneIndex
>>> from situ_gym.scene.loader import load_scene
>>> lex = lexicon_for(SceneIndex(load_scene("supermarket")))
>>> u = analyze("How about the Sunny Fields Honey Oat Clusters? They're $4.19.", lex)
>>> u.act, u.proposed
('Recommend', ('sm_p001',))
>>> analyze("What's the most you'd want to pay?", lex).asks
('budget',)
"""

from situ_gym.language.analysis import (
    ACTS,
    DIRECTIONS,
    DISTANCES,
    RELATIONS,
    SLOT_KINDS,
    SLOTS,
    Budget,
    Explanation,
    NavInstruction,
    Question,
    Utterance,
    analyze,
)
from situ_gym.language.attempts import (
    Attempt,
    put_forward,
    raised_by,
    recommendation_attempt,
    turned_down,
)
from situ_gym.language.dialogue import analyze_reply, in_reply
from situ_gym.language.lexicon import Mention, PlaceMention, SceneLexicon, TagMention, lexicon_for
from situ_gym.language.tokens import MAX_CHARS, Token, lemma, normalize, sentence_spans, tokenize

__all__ = [
    "ACTS", "DIRECTIONS", "DISTANCES", "RELATIONS", "SLOTS", "SLOT_KINDS", "MAX_CHARS",
    "analyze_reply", "in_reply", "Attempt", "put_forward", "raised_by", "recommendation_attempt", "turned_down",
    "Budget", "Explanation", "NavInstruction", "Question", "Utterance", "analyze",
    "Mention", "PlaceMention", "SceneLexicon", "TagMention", "lexicon_for",
    "Token", "lemma", "normalize", "sentence_spans", "tokenize",
]
