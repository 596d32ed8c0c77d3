"""BM25 retrieval over the catalog: the entries relevant to the dialogue so far (compact observation).

A small-context policy cannot read the whole catalog (about 18k tokens of SmolLM2's
tokenizer), so ``SituRecEnv(catalog_view="retrieved")`` lists only the ``catalog_k``
entries that best match the dialogue, plus the navigation index. Matching is lexical
(``bm25s``) over the lemmas the language layer reads: a product's document is its name,
category and attribute labels, i.e. the words its catalog line shows; the query is every
utterance so far, the shopper's weighted ``USER_WEIGHT`` times the assistant's (the
shopper states the need; the assistant's words add products it talked about), without
the names of places (stores, areas, fixtures): "I'll try Victorian Curio Collection"
names where to walk, not a curio cabinet.

>>> from situ_gym.scene import SceneIndex
>>> from situ_gym.scene.loader import load_scene
>>> retriever = CatalogRetriever(SceneIndex(load_scene("supermarket")))
>>> retriever.retrieve([("user", "I need frozen cod fillets.")], k=1)
['sm_p193']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

import numpy as np

from situ_gym.language.analysis import analyze
from situ_gym.language.lexicon import SceneLexicon, lemmas_of, lexicon_for
from situ_gym.language.tokens import FUNCTION_WORDS, STOPWORDS
from situ_gym.scene.index import SceneIndex

__all__ = [
    "CATALOG_VIEWS", "RETRIEVED_TITLE", "USER_WEIGHT", "CatalogRetriever", "document_words", "query_words",
    "retrieved_title", "retrieved_k",
]

logger = logging.getLogger(__name__)

CATALOG_VIEWS = ("full", "retrieved", "tools")  # "tools": situ_gym.assistant_tools
RETRIEVED_TITLE = "Catalog entries relevant to the dialogue so far"  # opens a compact catalog (prompts detect it)
USER_WEIGHT = 2.0  # a shopper's word counts twice an assistant's: the need is the shopper's
_AT_MOST = re.compile(r", best first \(at most (\d+)\)")


def retrieved_title(k: int) -> str:
    """The first words of a compact catalog: how prompts recognise the view and its ``k``."""
    return f"{RETRIEVED_TITLE}, best first (at most {k})"


def retrieved_k(catalog: str) -> int | None:
    """The ``k`` of a compact catalog's text (``retrieved_title``), ``None`` for a full catalog."""
    if not catalog.startswith(RETRIEVED_TITLE):
        return None
    m = _AT_MOST.match(catalog, len(RETRIEVED_TITLE))
    return int(m.group(1)) if m else None


def _content(text: str) -> list[str]:
    """Content lemmas of ``text``: words only (prices and sizes match too much by chance)."""
    return [w for w in lemmas_of(text) if w.isalpha() and len(w) > 1 and w not in FUNCTION_WORDS]


def document_words(index: SceneIndex, product_id: str) -> list[str]:
    """What a catalog line says about a product, as lemmas: name, category, attribute labels."""
    product = index.products[product_id]
    parts = [product.name, product.category, *(tag.partition(":")[2].replace("_", " ") for tag in product.tags)]
    return [w for part in parts for w in _content(part)]


def query_words(
    dialogue: Iterable[tuple[str, str]], lexicon: SceneLexicon | None = None
) -> tuple[list[str], list[str]]:
    """(shopper lemmas, assistant lemmas) of ``dialogue``, a list of (speaker, text) pairs,
    read through the language layer (its analysis is cached, so the growing dialogue costs
    one new analysis per turn); places the lexicon links (stores, areas, fixtures) are left
    out: they say where to walk, not what to buy."""
    user: list[str] = []
    assistant: list[str] = []
    for speaker, text in dialogue:
        u = analyze(text, lexicon)
        placed = {i for p in u.places for i in range(p.start, p.end)}
        words = [
            t.lemma for i, t in enumerate(u.tokens)
            if i not in placed and t.lemma.isalpha() and len(t.lemma) > 1
            and t.lemma not in FUNCTION_WORDS and t.lemma not in STOPWORDS
        ]
        (user if speaker == "user" else assistant).extend(words)
    return user, assistant


class CatalogRetriever:
    """A BM25 index of one store's catalog; ``retrieve`` ranks it against a dialogue.

    Deterministic: equal scores keep catalog order, and only entries that share at least
    one word with the dialogue are returned (an empty dialogue retrieves nothing).
    """

    def __init__(self, index: SceneIndex):
        import bm25s

        self.product_ids = list(index.products)
        self._bm25 = bm25s.BM25()
        corpus = [document_words(index, pid) for pid in self.product_ids]
        self._bm25.index(corpus, show_progress=False)
        self._vocabulary = set(self._bm25.vocab_dict)
        self._lexicon = lexicon_for(index)

    def _scores(self, words: list[str]) -> np.ndarray:
        known = [w for w in words if w in self._vocabulary]
        if not known:
            return np.zeros(len(self.product_ids), dtype=np.float64)
        return self._bm25.get_scores(known).astype(np.float64)

    def scores(self, dialogue: Iterable[tuple[str, str]]) -> np.ndarray:
        """One BM25 score per catalog entry (catalog order) for ``dialogue``."""
        user, assistant = query_words(dialogue, self._lexicon)
        return USER_WEIGHT * self._scores(user) + self._scores(assistant)

    def retrieve(self, dialogue: Iterable[tuple[str, str]], k: int) -> list[str]:
        """Product ids of the at most ``k`` best-matching entries, best first."""
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        scores = self.scores(dialogue)
        order = np.lexsort((np.arange(len(scores)), -scores))  # score desc, then catalog order
        return [self.product_ids[i] for i in order[:k] if scores[i] > 0.0]
