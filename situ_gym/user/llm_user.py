"""The LLM shopper: a chat model role-plays the task's profile and goal (paper Sec. 3.2, App. A.3).

The system message holds the profile (persona, demographics, Big Five, interaction
settings), the private goal, budget, disclosure and acceptance policies, the store's
tools and the reply format; it is the same on every turn. Each turn appends one user
message with what the shopper can know now (the assistant's latest words, the result of
its last action, its own Set-of-Mark caption and the SoM image for vision backends, what
it holds, newly inspected products, the tools it may use now with its own handles; the
places on its map on the first turn only, as they do not change), and
then the reply it went on with, so the prompt grows by appending (``RoleChat``; whole
oldest turns are dropped, rarely, to stay within ``budget_tokens``). It must answer::

    {"utterance": "...", "tool_call": {"name": "...", "arguments": {...}},
     "revealed": null | "category" | "use" | "budget" | "avoid" | "need", "give_up": false}

Each request carries that reply's JSON Schema (:meth:`LLMUser.reply_schema`): the tool call
is an ``anyOf`` over the store's legal tools, each with its argument names and, for target
arguments, the enum of handles that ``situ_gym.actions.validate_user_call`` accepts this
turn; ``revealed`` lists only details not yet revealed; the utterance is bounded. A
reply that still does not parse or validate is re-asked once, quoting the error; a
second failure becomes a safe fallback (``idle`` and a short utterance). Per turn the
usage log counts one decision, used or fallen back, and the re-asks. A request the
backend could not answer (``ChatResult.error``: context length, content filter) raises,
ending the episode with that cause. The shopper never sees the assistant's handles, the
target product or the reference set.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from situ_gym.actions import LEGAL_TOOLS, TOOLS, render_tool_schema, validate_user_call
from situ_gym.actions.tools import ANGLE_RANGE, DISTANCES
from situ_gym.llm import METER, ChatBackend, ChatRequest, chat_lockstep, make_backend
from situ_gym.llm.replies import RoleChat, clean_text, extract_json
from situ_gym.llm.structured import bounded_string, closed_object, schema_errors
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Profile, Task
from situ_gym.som.labels import caption
from situ_gym.user.base import INTENTS, UserObservation, UserSimulator, UserTurn
from situ_gym.user.rule.persona import CAREFUL

__all__ = ["LLMUser", "FALLBACK_UTTERANCE", "UTTERANCE_CHARS", "shopper_system_prompt", "tool_call_schema"]

logger = logging.getLogger(__name__)

FALLBACK_UTTERANCE = "Sorry, I got a bit lost. Could you say that again?"
UTTERANCE_CHARS = 150  # one or two short sentences; with max_tokens this bounds a reply's length
_KINDS = ("category", "use", "budget", "avoid", "need")


def _backend(model: ChatBackend | str | None, base_url: str | None, cache: Any) -> ChatBackend:
    if model is None:
        raise ValueError("the LLM shopper needs a chat model: pass model='hf:...' or 'openai:...' (--user-model)")
    return make_backend(model, base_url=base_url, cache=cache)


# ---------------------------------------------------------------------- tool-call schema
def _value_schema(kind: object) -> dict[str, Any]:
    """JSON Schema of a non-target argument kind of ``situ_gym.actions.TOOLS``."""
    if kind == "angle":
        lo, hi = ANGLE_RANGE
        return {"type": "integer", "minimum": math.ceil(lo), "maximum": math.floor(hi)}
    if kind == "distance":
        return {"enum": list(DISTANCES)}
    return {"enum": list(kind)}  # type: ignore[call-overload]


def _sample_value(kind: object) -> Any:
    """One legal value of a non-target argument kind (to test a call's legality)."""
    if kind == "angle":
        return float(math.ceil(ANGLE_RANGE[0]))
    if kind == "distance":
        return next(iter(DISTANCES))
    return kind[0]  # type: ignore[index]


def _call_schema(name: str, arguments: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return closed_object({"name": {"const": name}, "arguments": closed_object(arguments, required)})


def tool_call_schema(
    store: str,
    handles: Mapping[str, Sequence[str]] | Sequence[str],
    legal: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """JSON Schema of one tool call in ``store``: ``anyOf`` one variant per legal tool.

    Argument names, required arguments and value kinds come from ``situ_gym.actions.TOOLS``;
    a target argument (kind "handle") is an enum of ``handles`` (per argument name, or one
    list for all). With ``legal`` (a call -> bool, e.g. a ``validate_user_call`` closure) only
    what it accepts is offered: each handle with each combination of word arguments
    (``approach``) is tried, tools with no legal target are left out, and so is an
    untargeted tool it refuses (``drop_item`` with empty hands).

    >>> s = tool_call_schema("supermarket", {"item": ["3"], "fixture": []})
    >>> [v["properties"]["name"]["const"] for v in s["anyOf"]][-4:]
    ['pick_up_item', 'add_to_cart', 'drop_item', 'idle']
    >>> s["anyOf"][-3]["properties"]["arguments"]["properties"]
    {'item': {'enum': ['3']}}
    """
    variants = []
    for name in LEGAL_TOOLS[store]:
        spec = TOOLS[name]
        targets = [a for a, k in spec.arguments.items() if k == "handle"]
        words = [a for a, k in spec.arguments.items() if isinstance(k, tuple)]
        sample = {a: _sample_value(k) for a, k in spec.arguments.items() if k != "handle"}
        if not targets:
            if legal is None or legal({"name": name, "arguments": sample}):
                variants.append(_call_schema(name, {a: _value_schema(k) for a, k in spec.arguments.items()},
                                             spec.required))
            continue
        # Which handles, with which word arguments, are legal now; grouped by handle list.
        (target,) = targets  # a targeted tool names one entity (situ_gym.actions.TARGET_ARGUMENT)
        choices = handles.get(target, ()) if isinstance(handles, Mapping) else handles
        by_words: dict[tuple, list[str]] = {}
        for combo in itertools.product(*(spec.arguments[a] for a in words)):  # type: ignore[misc]
            for handle in choices:
                call = {"name": name, "arguments": {**sample, **dict(zip(words, combo, strict=True)), target: handle}}
                if legal is None or legal(call):
                    by_words.setdefault(combo, []).append(str(handle))
        by_handles: dict[tuple[str, ...], list[tuple]] = {}
        for combo, legal_handles in by_words.items():
            by_handles.setdefault(tuple(legal_handles), []).append(combo)
        for legal_handles, combos in by_handles.items():
            for fixed in ([None] if len(words) <= 1 else combos):  # several word arguments: one variant each
                arguments = {}
                for a, kind in spec.arguments.items():
                    if a == target:
                        arguments[a] = {"enum": list(legal_handles)}
                    elif a in words:
                        values = [c[words.index(a)] for c in combos] if fixed is None else [fixed[words.index(a)]]
                        arguments[a] = {"enum": values}
                    else:
                        arguments[a] = _value_schema(kind)
                variants.append(_call_schema(name, arguments, spec.required))
    return {"anyOf": variants}


def _describe_tools(schema: dict[str, Any]) -> str:
    """The tools of a tool-call schema: the free ones by name, the targeted ones with the
    handles each may take now."""
    free: list[str] = []
    targeted: dict[str, list[str]] = {}
    for variant in schema["anyOf"]:
        name = variant["properties"]["name"]["const"]
        args = variant["properties"]["arguments"]["properties"]
        if not any(TOOLS[name].arguments[a] == "handle" for a in args):
            free.append(name)
            continue
        parts = [f"{arg}: {'|'.join(str(v) for v in sub['enum'])}" for arg, sub in args.items()]
        targeted.setdefault(name, []).append(f"{name}({', '.join(parts)})")
    lines = [f"- {', '.join(free)}"] if free else []
    return "\n".join(lines + [f"- {' or '.join(forms)}" for forms in targeted.values()])


# ---------------------------------------------------------------------- prompt
def shopper_system_prompt(task: Task, profile: Profile) -> str:
    """The role-play instructions: profile, goal, policies, tools and reply format (private to the shopper)."""
    it = profile.interaction
    demo = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(profile.demographics.items()))
    big5 = ", ".join(f"{k} {v:.2f}" for k, v in sorted(profile.big_five.items()))
    order = "\n".join(f"  {i + 1}. [{d.kind}] {d.text}" for i, d in enumerate(task.disclosure))
    acc = task.acceptance
    needs = ", ".join(task.required_tags) or "none"
    avoids = ", ".join(task.avoided_tags) or "none"
    # Conscientiousness in words, at the rule shopper's threshold (Persona.checks_details).
    if profile.big_five.get("conscientiousness", 0.5) >= CAREFUL:
        diligence = ("you are careful and thorough: check a product's details yourself (pick it up or check it) "
                     "before buying, even when the assistant has described it, and follow guidance you accept "
                     "consistently")
    else:
        diligence = ("you are easy-going about details: you may rely on what the assistant tells you about a "
                     "product instead of checking it yourself, and you sometimes drift from guidance")
    return (
        f"You are {profile.name}, a shopper in a store, talking to a shopping assistant on your smart glasses.\n"
        f"Persona: {profile.persona}\nGender: {profile.gender}. {demo}.\n"
        f"Big Five (0-1): {big5}.\nConscientiousness: {diligence}.\n"
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
        f"Your tools (one per turn; handles are the labels in square brackets of your own view):\n"
        f"{render_tool_schema(task.store)}\n\n"
        "Each turn, answer with ONLY one JSON object, no other text:\n"
        '{"utterance": "what you say (one or two short sentences)", '
        '"tool_call": {"name": "<tool>", "arguments": {...}}, '
        '"revealed": null or the kind of the ONE detail you reveal now (category|use|budget|avoid|need), '
        '"give_up": false}\n'
        "Use only the tools and handles each turn message says you may use now. "
        "Never say a marker label (the numbers or letters in square brackets of your view) in your utterance: "
        "the assistant sees different labels, and labels may not be disclosed in dialogue. Name products and "
        "places by their names or say where they are; labels go only in tool_call arguments."
    )


class LLMUser(UserSimulator):
    """A chat model playing the shopper (module docstring).

    Arguments: ``model`` (a ChatBackend or a spec "hf:..." / "openai:..."), ``base_url``
    (OpenAI-compatible endpoint), ``cache`` (response cache file), ``images`` (send the
    shopper's SoM image; default: the backend's ``supports_images``), ``temperature``,
    ``max_tokens`` (room for the longest reply the schema allows), ``budget_tokens`` (the
    prompt size beyond which whole oldest turns are dropped).
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
        max_tokens: int = 240,
        budget_tokens: int = 6000,
    ):
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        self.backend = _backend(model, base_url, cache)
        self.images = bool(getattr(self.backend, "supports_images", False)) if images is None else bool(images)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.budget_tokens = int(budget_tokens)
        self.fallbacks: list[dict[str, Any]] = []  # (turn, error) of every fallback this episode

    def reset(self, task: Task, profile: Profile, index: SceneIndex, rng: np.random.Generator) -> None:
        self.task, self.profile, self.index = task, profile, index
        self.store = task.store
        self._seed = int(rng.integers(2**31))
        self.chat = RoleChat(shopper_system_prompt(task, profile), budget_tokens=self.budget_tokens)
        self.conversation = f"user:{task.id}:{self._seed}"
        self._revealed: list[str] = []
        self._shown_inspected: set[str] = set()
        self.fallbacks = []

    # ------------------------------------------------------------------ schema
    def reply_schema(self, obs: UserObservation) -> dict[str, Any]:
        """The JSON Schema of a legal reply this turn (module docstring)."""

        def legal(call: dict[str, Any]) -> bool:
            return validate_user_call(call, store=self.store, view=obs.view, held_item=obs.held_item,
                                      index=self.index)[0] is not None

        to_reveal = [k for k in dict.fromkeys(d.kind for d in self.task.disclosure) if k not in self._revealed]
        return closed_object({
            "utterance": bounded_string(UTTERANCE_CHARS),
            "tool_call": tool_call_schema(self.store, list(obs.view.handles), legal),
            "revealed": {"enum": [None, *to_reveal]},
            "give_up": {"type": "boolean"},
        })

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
        rows = []
        for pid, d in obs.inspected.items():
            if pid in self._shown_inspected:
                continue
            attrs = ", ".join(f"{k}: {v}" for k, v in sorted((d.get("attributes") or {}).items()))
            tags = ", ".join(d.get("tags") or [])
            rows.append(f"- {d.get('name', self.index.name(pid))}: ${float(d.get('price', 0)):.2f}; {attrs}; tags: {tags}")
        return "\n".join(rows)

    def turn_message(self, obs: UserObservation, schema: dict[str, Any] | None = None) -> str:
        """This turn's user message: only what the shopper can know now, in its own handles."""
        schema = schema or self.reply_schema(obs)
        revealed = ", ".join(self._revealed) or "nothing yet"
        inspected = self._inspected(obs)
        if obs.turn == 1 and len(obs.history) > 1:  # joined late: the dialogue so far, once
            earlier = "\n".join(f"{who.capitalize()}: {text}" for who, text in obs.history[:-1])
            lead = f"Dialogue so far:\n{earlier}\n\n"
        else:
            lead = ""
        return (
            f"Turn {obs.turn}.\n{lead}The assistant just said: {obs.assistant_response or '(nothing)'}\n"
            f"Result of your last action: {obs.last_result or 'none'}\n"
            f"Details you have already revealed: {revealed}\n\n"
            f"What you see (your labels):\n{caption(obs.view, self.index, held_item=obs.held_item, cart=obs.cart)}\n"
            + (f"Places on your map, not in view now: {self._places(obs)}\n" if obs.turn == 1 else "")
            + (f"Products you just inspected:\n{inspected}\n" if inspected else "")
            + f"\nYour tools now, with the handles you may use:\n{_describe_tools(schema['properties']['tool_call'])}\n\n"
            "Reply with the JSON object only."
        )

    # ------------------------------------------------------------------ reply
    def _parse(self, text: str, obs: UserObservation, schema: dict[str, Any]) -> tuple[UserTurn | None, str]:
        """The turn of a usable reply, else the reason: the env's validator judges the tool call
        (its message names the bad handle), the schema the rest."""
        try:
            data = extract_json(text)
        except ValueError as exc:
            return None, str(exc)
        call = data.get("tool_call")
        if isinstance(call, dict) and "arguments" not in call:
            call = data["tool_call"] = {**call, "arguments": {}}
        # The schema requires every field (strict structured output needs that), but a model
        # that is not held to it may leave out the two whose absence has one meaning.
        data.setdefault("revealed", None)
        data.setdefault("give_up", False)
        primitive, checked = validate_user_call(
            call, store=self.store, view=obs.view, held_item=obs.held_item, index=self.index
        )
        if primitive is None:
            return None, f"invalid tool_call: {checked.error}"
        errors = schema_errors(data, schema)
        if errors:
            return None, "reply does not match the schema: " + "; ".join(errors)
        utterance = data["utterance"]
        if not utterance.strip():
            return None, '"utterance" must not be blank'
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

    def _request(self, messages: list[dict[str, Any]], seed: int, schema: dict[str, Any]) -> ChatRequest:
        return ChatRequest(
            messages, role="user", max_tokens=self.max_tokens, temperature=self.temperature,
            seed=seed, json_mode=True, schema=schema, conversation=self.conversation,
        )

    def respond(self, obs: UserObservation) -> UserTurn:
        schema = self.reply_schema(obs)
        text = clean_text(self.turn_message(obs, schema))  # a lone surrogate cannot be sent
        images = [obs.view.image] if self.images and obs.view.image is not None else []
        messages = self.chat.messages(text, images)
        seed = self._seed + obs.turn
        model = self.backend.model
        (first,) = chat_lockstep(self.backend, [self._request(messages, seed, schema)])
        reply = clean_text(first.raise_for_error().text)  # lone surrogates: see situ_gym.llm.replies
        turn, error = self._parse(reply, obs, schema)
        if turn is None:
            METER.add("user", model=model, reasks=1)
            retry = messages + [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"That reply was not usable: {error}. "
                                            "Answer again with only the JSON object."},
            ]
            (second,) = chat_lockstep(self.backend, [self._request(retry, seed + 7919, schema)])
            reply = clean_text(second.raise_for_error().text)
            turn, error = self._parse(reply, obs, schema)
        if turn is None:
            METER.add("user", model=model, decisions=1, fallbacks=1)
            self.fallbacks.append({"turn": obs.turn, "error": error})
            logger.warning("shopper turn %d: unusable reply after one re-ask (%s); idling", obs.turn, error)
            turn = UserTurn(utterance=FALLBACK_UTTERANCE, tool_call={"name": "idle", "arguments": {}}, intent="ask")
            reply = json.dumps({"utterance": turn.utterance, "tool_call": turn.tool_call, "revealed": None,
                                "give_up": False})
        else:
            METER.add("user", model=model, decisions=1, used=1)
        self.chat.commit(text, reply)
        self._shown_inspected.update(obs.inspected)
        self._revealed.extend(turn.revealed)
        return turn
