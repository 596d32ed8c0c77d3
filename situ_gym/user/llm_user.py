"""The LLM shopper: a chat model role-plays the task's profile and goal (paper Sec. 3.2, App. A.3).

Each turn the model gets a system prompt with the profile (persona, demographics, Big
Five, interaction settings), the private goal, budget, disclosure and acceptance
policies, then a user message with what the shopper can know now: the assistant's
latest words, the dialogue so far, its own Set-of-Mark caption (and the SoM image for
vision backends), what it holds, has inspected and has in the cart, and its legal tool
actions with its own handles. It must answer with one JSON object::

    {"utterance": "...", "tool_call": {"name": "...", "arguments": {...}},
     "revealed": null | "category" | "use" | "budget" | "avoid" | "need", "give_up": false}

The tool call is checked with ``situ_gym.actions.validate_user_call`` (the env's own
validator). A reply that does not parse or validate is re-asked once, quoting the
error; a second failure becomes a safe fallback (``idle`` and a short utterance), counted
as a fallback in the usage log. The shopper never sees the assistant's handles, the
target product or the reference set.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from situ_gym.actions import render_tool_schema, validate_user_call
from situ_gym.llm import METER, ChatBackend, ChatRequest, chat_lockstep, extract_json, make_backend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Profile, Task
from situ_gym.som.labels import caption
from situ_gym.user.base import INTENTS, UserObservation, UserSimulator, UserTurn

__all__ = ["LLMUser", "FALLBACK_UTTERANCE", "shopper_system_prompt"]

logger = logging.getLogger(__name__)

FALLBACK_UTTERANCE = "Sorry, I got a bit lost. Could you say that again?"
_KINDS = ("category", "use", "budget", "avoid", "need")
_HISTORY_LINES = 16  # recent dialogue lines kept in the prompt (small models have short contexts)


def _backend(model: ChatBackend | str | None, base_url: str | None, cache: Any) -> ChatBackend:
    if model is None:
        raise ValueError("the LLM shopper needs a chat model: pass model='hf:...' or 'openai:...' (--user-model)")
    return make_backend(model, base_url=base_url, cache=cache)


def shopper_system_prompt(task: Task, profile: Profile) -> str:
    """The role-play instructions: profile, goal and policies (private to the shopper)."""
    it = profile.interaction
    demo = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(profile.demographics.items()))
    big5 = ", ".join(f"{k} {v:.2f}" for k, v in sorted(profile.big_five.items()))
    order = "\n".join(f"  {i + 1}. [{d.kind}] {d.text}" for i, d in enumerate(task.disclosure))
    acc = task.acceptance
    needs = ", ".join(task.required_tags) or "none"
    avoids = ", ".join(task.avoided_tags) or "none"
    return (
        f"You are {profile.name}, a shopper in a store, talking to a shopping assistant on your smart glasses.\n"
        f"Persona: {profile.persona}\nGender: {profile.gender}. {demo}.\n"
        f"Big Five (0-1): {big5}.\n"
        f"Style: {it.behavior_style}; talkativeness {it.talkativeness}; price sensitivity {it.price_sensitivity}; "
        f"wants explanations: {it.explanation_seeking}; open to substitutes: {it.substitute_willingness}; "
        f"follows navigation advice about {round(it.navigation_following * 100)}% of the time; "
        f"gives up after about {it.patience} unhelpful turns.\n\n"
        f"Your private goal: {task.request}\nCategory: {task.category}. Budget: at most ${task.budget:.2f}. "
        f"Must have: {needs}. Must avoid: {avoids}.\n"
        f"Disclosure policy: do not tell everything at once. Reveal at most ONE of these details per turn, "
        f"in this order, when it fits the conversation:\n{order}\n"
        f"Acceptance policy: {'inspect a product before buying it' if acc.inspect_before_buying else 'you may buy without inspecting'}; "
        f"you want about {acc.explanations_needed} explanations before deciding; "
        f"{'substitutes that meet the requirements are acceptable' if acc.accept_substitutes else 'only the right product will do'}; "
        f"when you reject something you {acc.rejection_style} (give a reason / ask to clarify / ask to compare).\n"
        "Buy (add_to_cart) only a product that fits your goal, budget and requirements. "
        "If the assistant is unhelpful for too long, give up politely.\n\n"
        "Each turn, answer with ONLY one JSON object, no other text:\n"
        '{"utterance": "what you say (one or two short sentences)", '
        '"tool_call": {"name": "<tool>", "arguments": {...}}, '
        '"revealed": null or the kind of the ONE detail you reveal now (category|use|budget|avoid|need), '
        '"give_up": false}\n'
        "Use only the tools and the handles (labels in square brackets) listed in the turn message."
    )


class LLMUser(UserSimulator):
    """A chat model playing the shopper (module docstring).

    Arguments: ``model`` (a ChatBackend or a spec "hf:..." / "openai:..."), ``base_url``
    (OpenAI-compatible endpoint), ``cache`` (response cache file), ``images`` (send the
    shopper's SoM image; default: the backend's ``supports_images``), ``temperature``,
    ``max_tokens``.
    """

    name = "llm"

    def __init__(
        self,
        model: ChatBackend | str | None = None,
        *,
        base_url: str | None = None,
        cache: Any = None,
        images: bool | None = None,
        temperature: float = 0.7,
        max_tokens: int = 96,
    ):
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        self.backend = _backend(model, base_url, cache)
        self.images = bool(getattr(self.backend, "supports_images", False)) if images is None else bool(images)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.fallbacks: list[dict[str, Any]] = []  # (turn, error) of every fallback this episode

    def reset(self, task: Task, profile: Profile, index: SceneIndex, rng: np.random.Generator) -> None:
        self.task, self.profile, self.index = task, profile, index
        self.store = task.store
        self._seed = int(rng.integers(2**31))
        self._system = shopper_system_prompt(task, profile)
        self._revealed: list[str] = []
        self.fallbacks = []

    # ------------------------------------------------------------------ prompt
    def _places(self, obs: UserObservation) -> str:
        visible = {v.handle for v in obs.view.visible}
        rows = [
            f"[{h}] {self.index.name(eid)}"
            for h, eid in obs.view.handles.items()
            if h not in visible and eid not in self.index.products
        ]
        return "; ".join(rows) if rows else "none"

    def _inspected(self, obs: UserObservation) -> str:
        if not obs.inspected:
            return "nothing yet"
        rows = []
        for pid, d in obs.inspected.items():
            attrs = ", ".join(f"{k}: {v}" for k, v in sorted((d.get("attributes") or {}).items()))
            tags = ", ".join(d.get("tags") or [])
            rows.append(f"- {d.get('name', self.index.name(pid))}: ${float(d.get('price', 0)):.2f}; {attrs}; tags: {tags}")
        return "\n".join(rows)

    def turn_message(self, obs: UserObservation) -> str:
        """The per-turn text: only what the shopper can know now, in its own handles."""
        history = "\n".join(f"{who.capitalize()}: {text}" for who, text in obs.history[-_HISTORY_LINES:])
        revealed = ", ".join(self._revealed) or "nothing yet"
        return (
            f"Turn {obs.turn}.\nDialogue so far:\n{history or '(nothing yet)'}\n\n"
            f"The assistant just said: {obs.assistant_response or '(nothing)'}\n"
            f"Result of your last action: {obs.last_result or 'none'}\n"
            f"Details you have already revealed: {revealed}\n\n"
            f"What you see (your labels):\n{caption(obs.view, self.index, held_item=obs.held_item, cart=obs.cart)}\n"
            f"Places you can walk to: {self._places(obs)}\n"
            f"Products you inspected:\n{self._inspected(obs)}\n\n"
            f"Your tools (use your own labels as handles):\n{render_tool_schema(self.store)}\n\n"
            "Reply with the JSON object only."
        )

    def _messages(self, obs: UserObservation) -> list[dict[str, Any]]:
        text = self.turn_message(obs)
        content: Any = text
        if self.images and obs.view.image is not None:
            content = [{"type": "image", "image": obs.view.image}, {"type": "text", "text": text}]
        return [{"role": "system", "content": self._system}, {"role": "user", "content": content}]

    # ------------------------------------------------------------------ reply
    def _parse(self, text: str, obs: UserObservation) -> tuple[UserTurn | None, str]:
        try:
            data = extract_json(text)
        except ValueError as exc:
            return None, str(exc)
        utterance = data.get("utterance")
        if not isinstance(utterance, str) or not utterance.strip():
            return None, '"utterance" must be a non-empty string'
        call = data.get("tool_call")
        if isinstance(call, dict) and "arguments" not in call:
            call = {**call, "arguments": {}}
        primitive, checked = validate_user_call(
            call, store=self.store, view=obs.view, held_item=obs.held_item, index=self.index
        )
        if primitive is None:
            return None, f"invalid tool_call: {checked.error}"
        revealed = data.get("revealed")
        kinds = [revealed] if revealed in _KINDS and revealed not in self._revealed else []
        gave_up = data.get("give_up") is True
        return (
            UserTurn(
                utterance=utterance.strip(),
                tool_call={"name": call["name"], "arguments": dict(call.get("arguments") or {})},
                revealed=kinds,
                gave_up=gave_up,
                intent=self._intent(call["name"], gave_up, obs.turn),
            ),
            "",
        )

    @staticmethod
    def _intent(tool: str, gave_up: bool, turn: int) -> str:
        if gave_up:
            return "give_up"
        if tool == "add_to_cart":
            return "buy"
        if tool in ("pick_up_item", "check_item"):
            return "inspect"
        if tool.startswith("move_to"):
            return "follow"
        intent = "open" if turn == 1 else ("explore" if tool != "idle" else "answer")
        return intent if intent in INTENTS else "explore"

    def _request(self, messages: list[dict[str, Any]], seed: int) -> ChatRequest:
        return ChatRequest(
            messages, role="user", max_tokens=self.max_tokens, temperature=self.temperature,
            seed=seed, json_mode=True,
        )

    def respond(self, obs: UserObservation) -> UserTurn:
        messages = self._messages(obs)
        seed = self._seed + obs.turn
        (first,) = chat_lockstep(self.backend, [self._request(messages, seed)])
        turn, error = self._parse(first.text, obs)
        if turn is None:
            METER.add("user", model=self.backend.model, reasks=1)
            retry = messages + [
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": f"That reply was not usable: {error}. "
                                            "Answer again with only the JSON object."},
            ]
            (second,) = chat_lockstep(self.backend, [self._request(retry, seed + 7919)])
            turn, error = self._parse(second.text, obs)
        if turn is None:
            METER.add("user", model=self.backend.model, fallbacks=1)
            self.fallbacks.append({"turn": obs.turn, "error": error})
            logger.warning("shopper turn %d: unusable reply after one re-ask (%s); idling", obs.turn, error)
            turn = UserTurn(utterance=FALLBACK_UTTERANCE, tool_call={"name": "idle", "arguments": {}}, intent="ask")
        self._revealed.extend(turn.revealed)
        return turn
