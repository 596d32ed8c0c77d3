"""The judge interface and the rule-based judge: the seven 1-5 dimensions of App. C.1.

``DialogueJudge.rate(episode, task, index)`` returns the seven dimensions plus ``"judge"``.
``RuleBasedJudge`` derives each from the record (deterministic, no model); the LLM judge
(``eval.llm_judge.LLMJudge``) implements the same interface, and ``eval.judge.make_judge``
picks one by name. Every rule maps a fraction f in [0, 1] to ``1 + 4 f``:

* Informativeness: among turns answering a user question or request (read by
  ``situ_gym.language``; all turns when the user never asked), the share of responses
  with specific content: a catalog product or place, a price, or a catalog label.
* Naturalness: mean per-response score, 1 minus 1/3 per flaw: system jargon (entity ids,
  bracketed handles, JSON/field names, snake_case), bad length (< 3 or > 80 words),
  formulaic phrasing (a stock phrase, or the same first four words as an earlier response);
  an invalid assistant output counts one flaw more.
* Groundedness: checkable claims in responses: each "$x" price must equal the price of a
  product named in the same response (or of any catalog product when none is named); each
  Recommend must name a catalog product and, when it says ``visible_now``, that product
  must be in the view it acted on. No checkable claim: 3.
* Preference Alignment: the share of recommendations (Recommend turns) that break none of
  the constraints the user had revealed *before* that turn (budget, avoided tag, needed
  tag, category; from the task's disclosure items and ``TurnRecord.revealed``), minus a
  re-recommendation of a product the user already declined (``do_not_add_to_cart`` or a
  rejection right after it). No recommendation or no task: 3. Under ``protocol="paper"``
  the constraints are what the shopper's words state (budget, wanted and avoided tags,
  category, read by the language layer from replies that name no product: a reply about
  one product judges it, it does not state a need); no task is read.
* Proactiveness: the share of turns that move things on: Navigate, Recommend, Explain,
  AnswerQuestion, Compare, HandleRejection, ConfirmPurchase from a valid output, or
  Greet/AskPreference/ClarifyNeed within the first three turns; +0.5 (capped at 5) when the
  episode ends in a purchase.
* Non-repetition: 1 minus the share of turns that repeat an earlier response nearly word
  for word (word-set Jaccard >= 0.8), the same product recommendation, or the previous
  turn's navigation goal after the user did not move.
* Overall: 0.7 * mean of the six above + 0.3 * outcome, outcome = 5 (reference item
  bought), 4 (other item bought) or 2 (no purchase), clipped to [1, 5]. Under
  ``protocol="paper"`` the outcome is what the transcript shows: 5 when something was
  bought, 2 otherwise (the reference set is hidden task data).

``protocol="paper"`` (SituRecBench 3.4: the judge "rates each complete interaction based on
its textual record") makes the judge ignore the ``task`` argument and the episode's hidden
fields (reference set, target, budget, ``TurnRecord.revealed``); the catalog (``index``)
stays, since the assistant's observation holds it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from situ_gym.language import analyze, lexicon_for
from situ_gym.language import patterns as P
from situ_gym.protocol import check_protocol
from situ_gym.records import EpisodeRecord, TurnRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["DIMENSIONS", "DialogueJudge", "RuleBasedJudge"]

DIMENSIONS = (
    "Informativeness",
    "Naturalness",
    "Groundedness",
    "Preference Alignment",
    "Proactiveness",
    "Non-repetition",
    "Overall",
)

_PROGRESS = {"Navigate", "Recommend", "Explain", "AnswerQuestion", "Compare", "HandleRejection", "ConfirmPurchase"}
_ELICIT = {"Greet", "AskPreference", "ClarifyNeed"}


def _scale(f: float) -> float:
    return round(1.0 + 4.0 * min(1.0, max(0.0, f)), 3)


def _words(text: str) -> list[str]:
    return [t.low for t in analyze(text).tokens if t.text[:1].isalnum()]


class DialogueJudge(ABC):
    """Rates one finished episode on the seven App. C.1 dimensions (1-5)."""

    name: str = "judge"

    @abstractmethod
    def rate(self, episode: EpisodeRecord, task: Any = None, index: SceneIndex | None = None) -> dict[str, Any]:
        """``{dimension: score for DIMENSIONS} | {"judge": self.name}``."""

    def rate_batch(self, items: list[tuple[EpisodeRecord, Any, SceneIndex | None]]) -> list[dict[str, Any]]:
        """``rate`` of each ``(episode, task, index)``; a model-backed judge batches its requests."""
        return [self.rate(*item) for item in items]


class RuleBasedJudge(DialogueJudge):
    """Deterministic ratings from the trajectory, the catalog and (default protocol) the task.

    ``protocol="paper"``: from the trajectory and the catalog alone (module doc)."""

    name = "rule-based"

    def __init__(self, protocol: str = "default"):
        self.protocol = check_protocol(protocol)

    def rate(self, episode: EpisodeRecord, task: Any = None, index: SceneIndex | None = None) -> dict[str, Any]:
        paper = self.protocol == "paper"
        turns = sorted(episode.turns, key=lambda t: t.turn)
        if not turns:
            scores = {d: 1.0 for d in DIMENSIONS}
            return scores | {"judge": self.name}
        preference = self._stated_preference(turns, index) if paper else self._preference(turns, task, index)
        scores = {
            "Informativeness": self._informativeness(turns, index),
            "Naturalness": self._naturalness(turns),
            "Groundedness": self._groundedness(turns, index),
            "Preference Alignment": preference,
            "Proactiveness": self._proactiveness(turns, episode),
            "Non-repetition": self._nonrepetition(turns),
        }
        outcome = 2.0
        if episode.cart and paper:  # the transcript shows a purchase, not whether it was a reference item
            outcome = 5.0
        elif episode.cart:
            outcome = 5.0 if set(episode.cart) & set(episode.reference_set) else 4.0
        mean6 = sum(scores.values()) / len(scores)
        scores["Overall"] = round(min(5.0, max(1.0, 0.7 * mean6 + 0.3 * outcome)), 3)
        return scores | {"judge": self.name}

    # -------------------------------------------------------------- dimensions

    @staticmethod
    def _specific(text: str, index: SceneIndex | None) -> bool:
        """Specific content: a product, place, price or catalog label (read by the language layer)."""
        u = analyze(text, lexicon_for(index) if index is not None else None)
        if u.prices:
            return True
        if index is None:
            return any(t.text[:1].isdigit() for t in u.tokens)
        return bool(u.products or u.places or [t for t in u.tags if not t.in_name])

    def _informativeness(self, turns: list[TurnRecord], index: SceneIndex | None) -> float:
        asked = [
            t for prev, t in zip(turns, turns[1:], strict=False)
            if (lambda u: u.questions or u.requests)(analyze(prev.user_utterance))
        ]
        pool = asked or turns
        return _scale(sum(self._specific(t.response, index) for t in pool) / len(pool))

    @staticmethod
    def _naturalness(turns: list[TurnRecord]) -> float:
        openings: set[tuple[str, ...]] = set()
        total = 0.0
        for t in turns:
            words = _words(t.response)
            flaws = 0
            if P.JUDGE_JARGON.search(t.response):
                flaws += 1
            if not 3 <= len(words) <= 80:
                flaws += 1
            opening = tuple(words[:4])
            low = t.response.lower()
            if any(s in low for s in P.STOCK_PHRASES) or (len(opening) == 4 and opening in openings):
                flaws += 1
            openings.add(opening)
            if not t.assistant_valid:
                flaws += 1
            total += max(0.0, 1.0 - flaws / 3.0)
        return _scale(total / len(turns))

    @staticmethod
    def _groundedness(turns: list[TurnRecord], index: SceneIndex | None) -> float:
        if index is None:
            return 3.0
        claims = ok = 0
        all_prices = {round(p.price, 2) for p in index.products.values()}
        lex = lexicon_for(index)
        for t in turns:
            u = analyze(t.response, lex, visible=frozenset(t.visible_before))
            allowed = {round(index.products[p].price, 2) for p in u.products} or all_prices
            for price in u.prices:
                claims += 1
                ok += round(price, 2) in allowed
            if t.action_type == "Recommend":
                claims += 1
                rid = t.recommended_id
                good = rid is not None and rid in index.products
                if good and isinstance(t.action, dict) and t.action.get("visible_now") is True:
                    good = rid in t.visible_before
                ok += good
        return 3.0 if claims == 0 else _scale(ok / claims)

    @staticmethod
    def _violates(pid: str, constraints: list[tuple[str, Any]], index: SceneIndex) -> bool:
        p = index.products[pid]
        for kind, value in constraints:
            if kind == "budget" and isinstance(value, (int, float)) and p.price > float(value):
                return True
            if kind == "avoid" and isinstance(value, str) and value in p.tags:
                return True
            if kind == "need" and isinstance(value, str) and value not in p.tags:
                return True
            if kind == "category" and isinstance(value, str) and value.lower() != p.category.lower():
                return True
        return False

    def _aligned_share(self, turns: list[TurnRecord], index: SceneIndex, fits, learn) -> float:
        """Preference Alignment on a 1-5 scale: the share of Recommend turns whose product
        ``fits(pid)`` what was known then and had not been declined (3 without any).
        ``learn(turn)`` takes in what a turn made known, binding from the next turn on."""
        declined: set[str] = set()
        recs = good = 0
        prev: TurnRecord | None = None
        for t in turns:
            if prev is not None and prev.recommended_id and analyze(prev.user_utterance).rejects:
                declined.add(prev.recommended_id)
            rid = t.recommended_id
            if t.action_type == "Recommend" and rid and rid in index.products:
                recs += 1
                good += fits(rid) and rid not in declined
            learn(t)
            ua = t.user_action
            if ua is not None and ua.name == "do_not_add_to_cart" and ua.target_id:
                declined.add(ua.target_id)
            prev = t
        return 3.0 if recs == 0 else _scale(good / recs)

    def _preference(self, turns: list[TurnRecord], task: Any, index: SceneIndex | None) -> float:
        """Preference Alignment against the goal details the shopper disclosed (the hidden task)."""
        if task is None or index is None:
            return 3.0
        by_kind: dict[str, list[Any]] = {}
        for item in task.disclosure:
            value = item.value
            if item.kind == "budget" and value is None:
                value = task.budget
            if item.kind == "category" and value is None:
                value = task.category
            by_kind.setdefault(item.kind, []).append(value)
        revealed: list[tuple[str, Any]] = []

        def learn(t: TurnRecord) -> None:
            for kind in t.revealed:  # disclosed this turn
                revealed.extend((kind, value) for value in by_kind.get(kind, []))

        return self._aligned_share(turns, index, lambda rid: not self._violates(rid, revealed, index), learn)

    def _stated_preference(self, turns: list[TurnRecord], index: SceneIndex | None) -> float:
        """Preference Alignment from the shopper's own words (``protocol="paper"``): the
        constraints stated before each recommendation, read by the language layer."""
        if index is None:
            return 3.0
        lex = lexicon_for(index)
        known: dict[str, Any] = {"budget": None, "needs": set(), "avoids": set(), "categories": ()}

        def fits(rid: str) -> bool:
            constraints = [("need", n) for n in sorted(known["needs"])]
            constraints += [("avoid", a) for a in sorted(known["avoids"])]
            constraints += [known["budget"]] if known["budget"] else []
            cats = known["categories"]
            in_category = not cats or index.products[rid].category.lower() in cats
            return in_category and not self._violates(rid, constraints, index)

        def learn(t: TurnRecord) -> None:
            u = analyze(t.user_utterance, lex)
            if u.products:  # words about a product ("the X isn't creamy") state no constraint
                return
            if u.budget is not None:
                # "about $10" is no hard cap: a tenth over it still respects it
                known["budget"] = ("budget", u.budget.amount * (1.1 if u.budget.bound == "about" else 1.0))
            if u.categories:
                known["categories"] = tuple(c.lower() for c in u.categories)
            named = {c.lower() for c in u.categories}
            # a tag that only repeats the category named ("peanut butter") is no extra need
            wants = {w for w in u.wants if w.partition(":")[2].lower() not in named}
            known["needs"] = (known["needs"] - set(u.avoids)) | wants  # the latest word on a tag wins
            known["avoids"] = (known["avoids"] - wants) | set(u.avoids)

        return self._aligned_share(turns, index, fits, learn)

    @staticmethod
    def _proactiveness(turns: list[TurnRecord], episode: EpisodeRecord) -> float:
        moving = sum(
            1
            for i, t in enumerate(turns)
            if t.assistant_valid
            and (t.action_type in _PROGRESS or (t.action_type in _ELICIT and i < 3))
        )
        score = _scale(moving / len(turns))
        return min(5.0, score + 0.5) if episode.cart else score

    @staticmethod
    def _nonrepetition(turns: list[TurnRecord]) -> float:
        seen_words: list[set[str]] = []
        recommended: set[str] = set()
        repeats = 0
        prev: TurnRecord | None = None
        for t in turns:
            words = set(_words(t.response))
            rep = any(
                words and (len(words & w) / len(words | w)) >= 0.8 for w in seen_words
            )
            if t.action_type == "Recommend" and t.recommended_id:
                rep = rep or t.recommended_id in recommended
                recommended.add(t.recommended_id)
            if (
                prev is not None
                and t.navigation_goal_id
                and t.navigation_goal_id == prev.navigation_goal_id
                and (prev.result is None or prev.result.displacement < 0.05)
            ):
                rep = True
            repeats += rep
            seen_words.append(words)
            prev = t
        return _scale(1.0 - repeats / len(turns))
