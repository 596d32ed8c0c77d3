"""The LLM dialogue judge: a chat model rates a finished episode's transcript on App. C.1's seven dimensions.

The prompt gives the seven anchored definitions (``protocol="default"``: ``JUDGE_PROMPT``,
abridged to leave a small judge's context to the transcript; ``protocol="paper"``:
``PAPER_JUDGE_PROMPT``, App. C.1's definitions word for word, ``PAPER_DEFINITIONS``), the
transcript (assistant and shopper messages, the shopper's actions by entity name, the
outcome) and the catalog facts of the products the assistant named, and asks for one JSON
object with an integer 1-5 per dimension; the request carries that reply's JSON Schema
(``JUDGE_SCHEMA``: the seven dimensions, each an integer from 1 to 5). A reply that does
not validate is re-asked once quoting the error; a second failure falls back to the
rule-based judge (of the same protocol) for that episode, labelled ``"judge": "rule
(fallback: REASON)"`` (a rating the model gave says ``"llm:MODEL"``). Per episode the usage
log counts one decision, used or fallen back, and the re-asks. All episodes of a run are
rated in one batched backend call (then one batch of re-asks).
"""

from __future__ import annotations

import logging
from typing import Any

from eval.rule_judge import DIMENSIONS, DialogueJudge, RuleBasedJudge
from situ_gym.llm import METER, ChatBackend, ChatRequest, make_backend
from situ_gym.llm.replies import clean_text
from situ_gym.llm.structured import closed_object, parse_reply
from situ_gym.protocol import check_protocol
from situ_gym.records import EpisodeRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["LLMJudge", "JUDGE_PROMPT", "PAPER_DEFINITIONS", "PAPER_JUDGE_PROMPT", "JUDGE_SCHEMA", "transcript"]

logger = logging.getLogger(__name__)

JUDGE_PROMPT = """You are a strict judge of a shopping assistant's conversation with a shopper in a store.
Rate the Assistant on each dimension with an integer from 1 (very poor) to 5 (excellent):
- Informativeness: when the user needs information or guidance, does the Assistant provide specific and relevant content that supports a decision or next action rather than vague statements?
- Naturalness: are the wording, tone and pacing natural, concise and coherent, like a real shopping assistant, without system jargon or formulaic phrasing?
- Groundedness: are the claims consistent with the scene, product, state and dialogue evidence, without unsupported assertions or contradictions?
- Preference Alignment: does the Assistant respect the user's stated needs, budget, preferences and constraints, and adapt after rejection or hesitation?
- Proactiveness: do its questions, navigation guidance, comparisons, recommendations or confirmations move the user closer to completing the task rather than causing stalls?
- Non-repetition: does it avoid repeating the same question, route, product or wording without new justification, and change strategy when progress stalls?
- Overall: considering need fulfilment, efficiency, trustworthiness and the whole experience, how satisfied would the shopper be?
Reply with ONLY one JSON object with exactly these keys:
{"Informativeness": n, "Naturalness": n, "Groundedness": n, "Preference Alignment": n, "Proactiveness": n, "Non-repetition": n, "Overall": n}"""


# SituRecBench App. C.1, "Subjective Ratings": each dimension's definition as printed (the
# paper's typographic apostrophes included); tests/protocol/test_judge_definitions.py checks
# every one against the paper's text. The paper names the last dimension "Overall
# Satisfaction"; its reply key stays "Overall", as in DIMENSIONS.
PAPER_DEFINITIONS = {
    "Informativeness": "Informativeness. When the user needs information or guidance, does the Assistant "
    "provide specific and relevant content that supports a decision or next action rather than vague "
    "statements?",
    "Naturalness": "Naturalness. Are the Assistant’s wording, tone, and conversational pacing natural, "
    "concise, and coherent, consistent with everyday shopping conversation and basic common sense, like a "
    "real shopping assistant, without system jargon or formulaic phrasing?",
    "Groundedness": "Groundedness. Are the Assistant’s claims consistent with the available scene, "
    "product, state, and dialogue evidence, without unsupported assertions, contradictions, or treating "
    "information unavailable to the user as something the user already knows?",
    "Preference Alignment": "Preference Alignment. Does the Assistant consistently respect the user’s "
    "stated needs, budget, preferences, and constraints, and adapt after rejection or hesitation?",
    "Proactiveness": "Proactiveness. When reasonable opportunities to progress occur, do the Assistant’s "
    "questions, navigation guidance, comparisons, recommendations, or confirmations move the user closer to "
    "completing the shopping task rather than causing stalls or aimless actions?",
    "Non-repetition": "Non-repetition. Does the Assistant avoid repeating the same question, route, product, "
    "or wording without new justification, and change strategy when progress continues to stall?",
    "Overall": "Overall Satisfaction. Considering need fulfillment, process efficiency, trustworthiness, and "
    "the overall experience, how satisfied are you with the Assistant’s performance across the complete "
    "interaction?",
}

PAPER_JUDGE_PROMPT = (
    "You are a strict judge of a shopping assistant's conversation with a shopper in a store. Dialogue "
    "quality is rated on the following seven anchored dimensions on a 1–5 scale (1 very poor, 5 "
    "excellent); answer Overall Satisfaction as the shopper would.\n\n"
    + "\n\n".join(PAPER_DEFINITIONS[d] for d in DIMENSIONS)
    + "\n\nReply with ONLY one JSON object with exactly these keys (an integer from 1 to 5 each; "
    "\"Overall\" is Overall Satisfaction):\n"
    '{"Informativeness": n, "Naturalness": n, "Groundedness": n, "Preference Alignment": n, '
    '"Proactiveness": n, "Non-repetition": n, "Overall": n}'
)

PROMPTS = {"default": JUDGE_PROMPT, "paper": PAPER_JUDGE_PROMPT}


def transcript(episode: EpisodeRecord, index: SceneIndex | None = None, max_chars: int = 12_000) -> str:
    """The episode as the judge reads it: messages, actions by entity name, outcome, product facts."""

    def name(eid: str | None) -> str:
        if not eid:
            return "?"
        return index.name(eid) if index is not None and eid in index.entities else eid

    lines, named = [], []
    for t in sorted(episode.turns, key=lambda t: t.turn):
        lines.append(f"Assistant: {t.response or '(no message)'}")
        lines.append(f"Shopper: {t.user_utterance}")
        ua = t.user_action
        if ua is not None and ua.name:
            target = f" {name(ua.target_id)}" if ua.target_id else ""
            ok = "" if t.result is None or t.result.ok else " (failed)"
            lines.append(f"  [shopper action: {ua.name}{target}{ok}]")
        if t.recommended_id and t.recommended_id not in named:
            named.append(t.recommended_id)
    cart = ", ".join(name(p) for p in episode.cart) or "nothing"
    text = "\n".join(lines)
    if len(text) > max_chars:  # keep the end: the outcome matters most
        text = "...\n" + text[-max_chars:]
    facts = ""
    if index is not None:
        rows = [f"- {index.name(p)}: ${index.products[p].price:.2f}, {index.products[p].category}, "
                f"tags: {', '.join(index.products[p].tags)}" for p in named if p in index.products]
        facts = ("\nCatalog facts of recommended products:\n" + "\n".join(rows)) if rows else ""
    return f"{text}\n\nOutcome: {episode.termination}; cart: {cart}.{facts}"


# The reply: an integer from 1 to 5 for each of the seven dimensions, nothing else.
JUDGE_SCHEMA = closed_object({d: {"type": "integer", "minimum": 1, "maximum": 5} for d in DIMENSIONS})


def _scores(text: str) -> tuple[dict[str, float] | None, str]:
    data, error = parse_reply(text, JUDGE_SCHEMA)
    if data is None:
        return None, error
    return {d: float(data[d]) for d in DIMENSIONS}, ""


def _reply_scores(result: Any) -> tuple[dict[str, float] | None, str]:
    if result.error is not None:
        return None, str(result.error)
    return _scores(result.text)


class LLMJudge(DialogueJudge):
    """``model``: a ChatBackend or a spec "hf:..." / "openai:..."; greedy decoding.

    ``protocol`` picks the prompt (``PROMPTS``) and the fallback's protocol. A rating the
    model gave is labelled ``"judge": "llm:MODEL"``; a rule-based fallback
    ``"judge": "rule (fallback: REASON)"``.
    """

    def __init__(self, model: ChatBackend | str | None = None, *, base_url: str | None = None,
                 cache: Any = None, max_tokens: int = 120, protocol: str = "default"):
        if model is None:
            raise ValueError("the LLM judge needs a chat model: pass --judge-model hf:... or openai:...")
        self.protocol = check_protocol(protocol)
        self.prompt = PROMPTS[self.protocol]
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.name = f"llm:{self.backend.model}"
        self.max_tokens = int(max_tokens)
        self._rule = RuleBasedJudge(protocol=self.protocol)

    def _request(self, messages: list[dict[str, str]], episode: EpisodeRecord) -> ChatRequest:
        return ChatRequest(messages, role="judge", max_tokens=self.max_tokens, temperature=0.0, json_mode=True,
                           schema=JUDGE_SCHEMA, conversation=f"judge:{episode.episode_id}")

    def rate(self, episode: EpisodeRecord, task: Any = None, index: SceneIndex | None = None) -> dict[str, Any]:
        return self.rate_batch([(episode, task, index)])[0]

    def rate_batch(self, items: list[tuple[EpisodeRecord, Any, SceneIndex | None]]) -> list[dict[str, Any]]:
        """Rate several episodes with one backend batch (plus one batch of re-asks).

        A request the backend could not answer (``ChatResult.error``: context length,
        content filter) is not re-asked: that episode gets the rule-based fallback, its
        label naming the error (the episode was played; only its rating is missing)."""
        episodes = [ep for ep, _task, _index in items]
        messages = [
            [{"role": "system", "content": self.prompt}, {"role": "user", "content": transcript(ep, index)}]
            for ep, _task, index in items
        ]
        model = self.backend.model
        replies = self.backend.chat_batch([self._request(m, ep) for m, ep in zip(messages, episodes, strict=True)])
        parsed = [_reply_scores(r) for r in replies]
        # A transcript the model cannot take (context length, content filter) is not re-asked.
        redo = [i for i, (s, _) in enumerate(parsed) if s is None and replies[i].error is None]
        if redo:
            METER.add("judge", model=model, reasks=len(redo))
            retries = [
                messages[i] + [{"role": "assistant", "content": clean_text(replies[i].text)},
                               {"role": "user", "content": f"That reply was not usable: {parsed[i][1]}. "
                                                           "Answer with only the JSON object."}]
                for i in redo
            ]
            again = self.backend.chat_batch([self._request(m, episodes[i]) for m, i in zip(retries, redo, strict=True)])
            for i, reply in zip(redo, again, strict=True):
                parsed[i] = _reply_scores(reply)
        out = []
        for (ep, task, index), (scores, error) in zip(items, parsed, strict=True):
            if scores is None:
                METER.add("judge", model=model, decisions=1, fallbacks=1)
                logger.warning("judge: unusable reply for %s after one re-ask (%s); rule-based scores used",
                               ep.episode_id, error)
                rule = self._rule.rate(ep, task, index)
                reason = error if len(error) <= 120 else error[:117] + "..."
                out.append({d: rule[d] for d in DIMENSIONS} | {"judge": f"rule (fallback: {reason})"})
            else:
                METER.add("judge", model=model, decisions=1, used=1)
                out.append(scores | {"judge": self.name})
        return out
