"""ChatAssistant: an assistant served by a chat backend (an OpenAI-compatible endpoint or a local model).

The prompt is rendered by ``agents.prompting`` (the same system message, catalog and
per-turn text as ``--agent hf``), kept as one growing chat per episode. Each request
carries the env's assistant-output schema (:func:`assistant_schema`: the four fields of
ARCHITECTURE's contract, the action types with their required fields in this store, the
expected user action over the store's legal tools with the handles of the current
caption, catalog ids and names as enums, bounded strings), so a local model decodes only
well-formed turns and an OpenAI-compatible server gets it as ``response_format``. A
request the backend could not answer (context length, content filter) comes back as its
``EpisodeError`` in place of that episode's text, ending that episode only. With
``images=True`` the latest user turn also carries the assistant's Set-of-Mark view and
the map (older turns keep their text only, to bound the request size). Under an App. D.4
ablation (``info["ablation"]`` at reset) the view is never sent, whichever the protocol (the
paper's observation has no ``som_rgb``; the default's is a black frame): the map alone is,
as the paper keeps the map and pose in both conditions; prompt and schema follow the
condition too. ``act_batch`` sends every open episode's request as one backend batch.

Under ``SituRecEnv(catalog_view="tools")`` (the reset info carries the env's tool handle) the
observation lists no product; every request also carries the catalog/map tools
(``situ_gym.assistant_tools.TOOL_SCHEMAS``) through the OpenAI tool-calling API. A reply that
calls tools gets them run by the env within the turn (recorded in the turn's ``tool_calls``),
their results appended as ``role: "tool"`` messages, and is asked again, at most
``max_tool_rounds`` times per turn; the last request of a turn has ``tool_choice="none"``, so
the turn ends with an answer, parsed as always. Only backends with ``supports_tools`` (the
OpenAI-compatible one) can do this: the local ``hf:`` backend cannot call tools, and a chat
assistant on it refuses the tools view at reset with a ValueError saying so.

    python -m eval.rollout --agent openai --model gpt-4o --images ...                 # hosted API
    python -m eval.rollout --agent openai --model NAME --base-url http://127.0.0.1:8000/v1 ...
    python -m eval.rollout --agent openai --model NAME --env-kwargs '{"catalog_view": "tools"}' ...
"""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any

from agents.base import Assistant
from agents.obs_text import Caption, Marked, parse_caption, parse_nav_targets
from agents.prompting import (
    NO_CAPTION,
    catalog_names,
    check_ablation,
    render_messages,
    state_text,
    turn_text,
)
from situ_gym.actions import ACTION_TYPES, MAX_RANKING, REQUIRED_FIELDS
from situ_gym.actions.parse import TARGET_APPROACHES
from situ_gym.actions.tools import LEGAL_TOOLS
from situ_gym.llm import ChatBackend, ChatRequest, EpisodeError, make_backend
from situ_gym.llm.structured import bounded_string, closed_object
from situ_gym.user.llm_user import tool_call_schema

__all__ = ["ChatAssistant", "OpenAIAssistant", "assistant_schema"]

logger = logging.getLogger(__name__)

# Bounds of the schema's free strings, in characters (with max_tokens they bound a turn's length).
RESPONSE_CHARS = 400
_EPISODES = itertools.count(1)  # this process's chat-assistant episodes: their conversation keys
REASON_CHARS = 160
NAME_CHARS = 120
MAX_TOOL_ROUNDS = 4  # tool-calling replies per turn before the turn must answer


# Tools whose product the no-caption ablation lets the assistant leave out (the env's parser
# accepts them without an item under no_view=True).
_INSPECT_TOOLS = ("pick_up_item", "check_item")


def _blind_caption(targets: list) -> Caption:
    """The no-caption ablation's targets as a caption: every fixed target of the navigation
    index with its approaches (all valid, visible or not), no product handles."""
    cap = Caption()
    for t in targets:
        kind = cap.areas if t.kind.startswith("area") else cap.stores if t.kind == "store" else cap.fixtures
        kind.append(Marked(t.handle, t.name, t.approaches))
    return cap


def assistant_schema(observation: dict[str, Any], store: str, *, ablation: str | None = None) -> dict[str, Any]:
    """JSON Schema of one assistant turn in ``store`` for ``observation`` (the env's action).

    Action types and their required fields come from ``situ_gym.actions``; handles from the
    observation's caption (products, fixtures with their approaches, stores, areas) and
    navigation targets, product ids and names from its catalog, where it lists them. Under
    the no-caption ablation (App. D.4) the fixed handles come from the navigation index, a
    product is named by its catalog name, and the inspect tool may leave it out: what the
    prompt allows and the env's parser accepts.
    """
    blind = check_ablation(ablation) == NO_CAPTION
    targets = parse_nav_targets(str(observation.get("catalog", "")))
    names = catalog_names(observation)
    if blind:
        cap = _blind_caption(targets)
        items = sorted(set(names.values()))
    else:
        cap = parse_caption(str(observation.get("visible", "")))
        items = [m.handle for m in cap.products] + ([cap.holding[0]] if cap.holding else [])
    marked = {m.handle: m for m in [*cap.fixtures, *cap.stores, *cap.areas]}
    handles = {"item": list(dict.fromkeys(items)), "fixture": [m.handle for m in cap.fixtures],
               "store": [m.handle for m in cap.stores], "area": [m.handle for m in cap.areas]}

    def offered(call: dict[str, Any]) -> bool:  # an approach the caption lists for that target
        args = call["arguments"]
        target = next((args[a] for a in ("fixture", "store") if a in args), None)
        m = marked.get(target)
        return m is None or not m.approaches or args.get("approach") in m.approaches

    fields = {
        "display_name": {"enum": sorted(set(names.values()))} if names else bounded_string(NAME_CHARS),
        "visible_now": {"type": "boolean"},
        "reason": bounded_string(REASON_CHARS),
        "navigation_goal": {"enum": list(dict.fromkeys(t.handle for t in targets))} if targets
        else bounded_string(NAME_CHARS),
        "next_waypoint": {"enum": [None, *handles["store"], *handles["area"]]},
        "target_approach": {"enum": list(TARGET_APPROACHES)},
    }
    actions = []
    for kind in ACTION_TYPES:
        required = REQUIRED_FIELDS[store].get(kind, ())
        props = {"type": {"const": kind}} | {f: fields[f] for f in required}
        props.setdefault("reason", fields["reason"])  # optional where the store does not require it
        actions.append(closed_object(props, ["type", *required]))
    ranking = {"enum": list(names)} if names else bounded_string(NAME_CHARS)
    expected = tool_call_schema(store, handles, offered)
    if blind:
        for variant in expected["anyOf"]:
            if variant["properties"]["name"].get("const") in _INSPECT_TOOLS:
                variant["properties"]["arguments"]["required"] = []
        if not any(v["properties"]["name"].get("const") in _INSPECT_TOOLS for v in expected["anyOf"]):
            # No catalog name to offer (a catalog view listing none): the item-less form.
            tool = next(t for t in _INSPECT_TOOLS if t in LEGAL_TOOLS[store])
            expected["anyOf"].append(closed_object({"name": {"const": tool}, "arguments": closed_object({}, [])}))
    return closed_object({
        "response": bounded_string(RESPONSE_CHARS),
        "assistant_actions": {"type": "array", "items": {"anyOf": actions}, "minItems": 1, "maxItems": 1},
        "expected_user_action": expected,
        "ranking": {"type": "array", "items": ranking, "maxItems": MAX_RANKING},
    })


class ChatAssistant(Assistant):
    """``model``: a backend spec ("openai:NAME", "hf:...") or a ChatBackend; ``base_url`` for
    OpenAI-compatible servers; ``images`` sends the SoM view and map; ``cache`` a response
    cache file; ``temperature`` (0: greedy), ``max_tokens``, ``seed``; ``max_tool_rounds``: the
    tool-calling replies a turn may have under the tools view (see the module docstring)."""

    name = "chat"

    def __init__(
        self,
        model: str | ChatBackend,
        *,
        base_url: str | None = None,
        images: bool = False,
        cache: Any = None,
        temperature: float = 0.0,
        max_tokens: int = 384,
        seed: int = 0,
        max_tool_rounds: int = MAX_TOOL_ROUNDS,
    ):
        if not isinstance(max_tool_rounds, int) or isinstance(max_tool_rounds, bool) or max_tool_rounds < 0:
            raise ValueError(f"max_tool_rounds must be a non-negative integer, got {max_tool_rounds!r}")
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.max_tool_rounds = max_tool_rounds
        self.images = bool(images)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self._slots: list[dict[str, Any]] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.reset_batch([observation], [info], seeds=[seed])

    def reset_batch(self, observations: list[dict[str, Any]], infos: list[dict[str, Any]], *,
                    seeds: list[int | None] | None = None) -> None:
        seeds = seeds if seeds is not None else [None] * len(infos)
        if not len(observations) == len(infos) == len(seeds):
            raise ValueError(f"reset_batch needs equal lengths, got {len(observations)}, {len(infos)}, {len(seeds)}")
        self._slots = []
        for info, seed in zip(infos, seeds, strict=True):
            if "store" not in info:
                raise ValueError(f"info must carry 'store', got keys {sorted(info)!r}")
            tools = info.get("tools")
            if tools is not None and not getattr(self.backend, "supports_tools", False):
                raise ValueError(f"the chat backend {self.backend.model!r} cannot call tools (the local hf: backend "
                                 "has no tool calling): use an OpenAI-compatible endpoint (openai:NAME) for "
                                 "catalog_view='tools', or catalog_view 'full' or 'retrieved'")
            self._slots.append({"store": info["store"], "ablation": check_ablation(info.get("ablation")),
                                "seed": self.seed if seed is None else int(seed),
                                "turn": 0, "messages": None, "seen": "", "shown": {}, "state": None,
                                "conversation": f"assistant:{next(_EPISODES)}", "tools": tools})

    def _with_images(self, messages: list[dict[str, Any]], obs: dict[str, Any],
                     ablation: str | None = None) -> list[dict[str, Any]]:
        """The chat as sent: the last user message gets the SoM view and map images (the tool
        calls and results of the turn so far, if any, follow it).

        The view only when the episode is not ablated and the observation has one: under an
        ablation the default protocol's ``som_rgb`` is a black frame, which is no input the
        paper gives (App. D.4), and the paper's protocol has no ``som_rgb`` at all."""
        if not self.images:
            return messages
        at = max(k for k, m in enumerate(messages) if m["role"] == "user")  # the last one: tool results may follow
        last = messages[at]
        parts: list[dict[str, Any]] = []
        if ablation is None and obs.get("som_rgb") is not None:
            parts.append({"type": "image", "image": obs["som_rgb"]})
        if obs.get("map") is not None:
            parts.append({"type": "image", "image": obs["map"]})
        if not parts:
            return messages
        return [*messages[:at], {"role": "user", "content": parts + [{"type": "text", "text": last["content"]}]},
                *messages[at + 1:]]

    def act(self, observation: dict[str, Any]) -> str:
        (text,) = self.act_batch([observation])
        if isinstance(text, EpisodeError):
            raise text
        return text

    def check_first_prompt(self, observation: dict[str, Any]) -> None:
        """Send the first request of the episode just reset and raise its EpisodeError (a
        prompt beyond the model's context, say), so that the rollout stops before any episode.
        With the response cache on, the episode's own first request is then a cache hit."""
        self.act(observation)

    def act_batch(self, observations: list[dict[str, Any]], *,
                  episodes: list[int] | None = None) -> list[str | EpisodeError]:
        if not self._slots:
            raise RuntimeError("call reset() or reset_batch() before act()")
        episodes = list(range(len(self._slots))) if episodes is None else episodes
        if len(episodes) != len(observations) or any(not 0 <= i < len(self._slots) for i in episodes):
            raise ValueError(f"episodes {episodes!r} must name one open episode per observation")
        observed = dict(zip(episodes, observations, strict=True))
        for i, obs in observed.items():
            slot = self._slots[i]
            ablation = slot["ablation"]
            if slot["messages"] is None:
                slot["messages"] = render_messages(obs, slot["store"], ablation=ablation)
            else:
                text = turn_text(obs, slot["seen"], slot["shown"], slot["state"], ablation=ablation)
                slot["messages"].append({"role": "user", "content": text})
            slot["seen"] = str(obs.get("history", ""))
            # compact view: catalog entries arrive per turn
            slot["state"] = state_text(obs, slot["shown"], ablation=ablation)
            slot["shown"].update(catalog_names(obs))
            slot["rounds"] = 0
        texts: dict[int, str | EpisodeError] = {}
        pending = list(observed)
        while pending:  # tool-calling replies ask again (the tools view), at most max_tool_rounds times
            results = self.backend.chat_batch([self._request(i, observed[i]) for i in pending])
            calling = []
            for i, res in zip(pending, results, strict=True):
                slot = self._slots[i]
                if isinstance(res.error, EpisodeError):  # this episode ends with the error's cause
                    texts[i] = res.error
                    continue
                res.raise_for_error()
                if slot["tools"] is not None and res.tool_calls and slot["rounds"] < self.max_tool_rounds:
                    self._run_tools(slot, res)
                    calling.append(i)
                    continue
                slot["messages"].append({"role": "assistant", "content": res.text})
                slot["turn"] += 1
                texts[i] = res.text
            pending = calling
        return [texts[i] for i in episodes]

    def _request(self, i: int, obs: dict[str, Any]) -> ChatRequest:
        """The request of episode ``i``'s turn so far; under the tools view with the tools, which
        its last allowed round may no longer call (``tool_choice="none"``)."""
        slot = self._slots[i]
        ablation = slot["ablation"]
        tools = {}
        if slot["tools"] is not None:
            tools = {"tools": list(slot["tools"].schemas),
                     "tool_choice": "auto" if slot["rounds"] < self.max_tool_rounds else "none"}
        return ChatRequest(self._with_images(slot["messages"], obs, ablation), role="assistant",
                           max_tokens=self.max_tokens, temperature=self.temperature,
                           seed=slot["seed"] * 1009 + slot["turn"], json_mode=True,
                           schema=assistant_schema(obs, slot["store"], ablation=ablation),
                           conversation=slot["conversation"], **tools)

    def _run_tools(self, slot: dict[str, Any], res: Any) -> None:
        """The reply's tool calls, run by the env (which records them in the turn), and their
        results, appended to the episode's chat in the API's form."""
        calls, results = [], []
        for k, call in enumerate(res.tool_calls):
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            name, arguments = function.get("name"), function.get("arguments")
            call_id = call.get("id") if isinstance(call, dict) and isinstance(call.get("id"), str) else None
            call_id = call_id or f"call_{slot['turn'] + 1}_{slot['rounds'] + 1}_{k + 1}"
            text_arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": str(name), "arguments": text_arguments}})
            results.append({"role": "tool", "tool_call_id": call_id, "content": slot["tools"](name, arguments)})
        slot["messages"].append({"role": "assistant", "content": res.text or "", "tool_calls": calls})
        slot["messages"].extend(results)
        slot["rounds"] += 1


class OpenAIAssistant(ChatAssistant):
    """``--agent openai --model NAME [--base-url URL]``: a ChatAssistant on an OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(self, model: str, **kwargs: Any):
        if not isinstance(model, str) or not model:
            raise ValueError("--agent openai needs --model NAME (the served model's name)")
        spec = model if model.startswith(("openai:", "hf:")) else f"openai:{model}"
        super().__init__(spec, **kwargs)
