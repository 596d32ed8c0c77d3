"""The LLM dialogue judge: a chat model rates a finished episode's transcript on App. C.1's seven dimensions.

The prompt gives the seven anchored definitions, the transcript (assistant and shopper
messages, the shopper's actions by entity name, the outcome) and the catalog facts of
the products the assistant named, and asks for one JSON object with an integer 1-5 per
dimension. A reply that does not parse or misses a dimension is re-asked once quoting
the error; a second failure falls back to the rule-based judge for that episode (noted
in ``judge_note`` and counted as a fallback in the usage log). All episodes of a run are
rated in one batched backend call (then one batch of re-asks).
"""

from __future__ import annotations

import logging
from typing import Any

from eval.rule_judge import DIMENSIONS, DialogueJudge, RuleBasedJudge
from situ_gym.llm import METER, ChatBackend, ChatRequest, extract_json, make_backend
from situ_gym.records import EpisodeRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["LLMJudge", "JUDGE_PROMPT", "transcript"]

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


def _scores(text: str) -> tuple[dict[str, float] | None, str]:
    try:
        data = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    scores = {}
    for dim in DIMENSIONS:
        value = lowered.get(dim.lower())
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 5:
            return None, f'"{dim}" must be a number from 1 to 5, got {value!r}'
        scores[dim] = float(value)
    return scores, ""


class LLMJudge(DialogueJudge):
    """``model``: a ChatBackend or a spec "hf:..." / "openai:..."; greedy decoding."""

    def __init__(self, model: ChatBackend | str | None = None, *, base_url: str | None = None,
                 cache: Any = None, max_tokens: int = 120):
        if model is None:
            raise ValueError("the LLM judge needs a chat model: pass --judge-model hf:... or openai:...")
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.name = f"llm:{self.backend.model}"
        self.max_tokens = int(max_tokens)
        self._rule = RuleBasedJudge()

    def _request(self, messages: list[dict[str, str]]) -> ChatRequest:
        return ChatRequest(messages, role="judge", max_tokens=self.max_tokens, temperature=0.0, json_mode=True)

    def rate(self, episode: EpisodeRecord, task: Any = None, index: SceneIndex | None = None) -> dict[str, Any]:
        return self.rate_batch([(episode, task, index)])[0]

    def rate_batch(self, items: list[tuple[EpisodeRecord, Any, SceneIndex | None]]) -> list[dict[str, Any]]:
        """Rate several episodes with one backend batch (plus one batch of re-asks)."""
        messages = [
            [{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": transcript(ep, index)}]
            for ep, _task, index in items
        ]
        replies = self.backend.chat_batch([self._request(m) for m in messages])
        parsed = [_scores(r.text) for r in replies]
        redo = [i for i, (s, _) in enumerate(parsed) if s is None]
        if redo:
            METER.add("judge", model=self.backend.model, reasks=len(redo))
            retries = [
                messages[i] + [{"role": "assistant", "content": replies[i].text},
                               {"role": "user", "content": f"That reply was not usable: {parsed[i][1]}. "
                                                           "Answer with only the JSON object."}]
                for i in redo
            ]
            for i, reply in zip(redo, self.backend.chat_batch([self._request(m) for m in retries]), strict=True):
                parsed[i] = _scores(reply.text)
        out = []
        for (ep, task, index), (scores, error) in zip(items, parsed, strict=True):
            if scores is None:
                METER.add("judge", model=self.backend.model, fallbacks=1)
                logger.warning("judge: unusable reply for %s after one re-ask (%s); rule-based scores used",
                               ep.episode_id, error)
                rule = self._rule.rate(ep, task, index)
                out.append({d: rule[d] for d in DIMENSIONS} | {"judge": self.name,
                                                               "judge_note": f"rule-based fallback: {error}"})
            else:
                out.append(scores | {"judge": self.name})
        return out
