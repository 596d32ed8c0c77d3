"""Observation -> chat prompt for policy models; the ONE rendering shared by training and eval.

A SituRec episode is rendered as ONE growing conversation::

    system    assistant rules for the store + the catalog and location index (once)
    user      turn 1: new dialogue lines, shopper pose, caption of the current view
    assistant the model's JSON output, verbatim (its own tokens)
    user      turn 2: only what happened since (the shopper's reply and executed action),
              the new pose and the new caption
    assistant ...

Why not "a fresh prompt each turn with the whole history as text": GSPO trains on ONE
token sequence per episode (``prompt_ids`` = turn 1's prompt, ``completion_ids`` =
model turns interleaved with the environment's turns, see ``train/rollout.py``) and TRL
recomputes log-probabilities under exactly that sequence. If generation used a fresh
prompt per turn, the policy being optimised (conditioned on the concatenation) would not
be the policy that sampled (conditioned on the fresh prompt), and evaluation would run a
third context. With one growing conversation, rollout generation, the trainer's
log-probabilities and ``HFPolicyAssistant`` in evaluation all condition every turn on the
same token ids. Prompts stay bounded: each user message carries only the delta (about
three history lines plus the caption), the catalog appears once, and episodes end after
at most 20 turns.

``Conversation`` keeps the token ids themselves as the source of truth (model tokens are
appended verbatim, never re-rendered), so the same episode gives byte-identical ids in
training and evaluation. ``render_messages``/``render_prompt`` give the first turn.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING, REQUIRED_FIELDS
from situ_gym.actions.tools import LEGAL_TOOLS, TOOLS

__all__ = [
    "STORES",
    "system_prompt",
    "turn_text",
    "new_history",
    "render_messages",
    "render_prompt",
    "chat_joiners",
    "turn_end_ids",
    "Conversation",
]

STORES = ("supermarket", "home_furnishings")

_STORE_WORDS = {
    "supermarket": {
        "place": "a supermarket",
        "targets": "the fixed numeric handles of fixtures (shelves, freezers, coolers, produce stands)",
        "inspect": "pick_up_item (the shopper reads the label: price, flavour, packaging, allergens, nutrition)",
    },
    "home_furnishings": {
        "place": "a home-furnishings mall of several stores with display areas",
        "targets": "the fixed numeric handles of stores (e.g. 2) and the area handles of display areas (e.g. 2a)",
        "inspect": "check_item (the shopper sees price, material, colour, size and style)",
    },
}

_EXAMPLES = {
    "supermarket": {
        "response": "The frozen fish is in the upright freezer just ahead of you. Shall we walk over?",
        "assistant_actions": [
            {"type": "Navigate", "navigation_goal": "3", "reason": "The shopper wants frozen cod."}
        ],
        "expected_user_action": {"name": "move_to_fixture", "arguments": {"fixture": "3", "approach": "front"}},
        "ranking": ["sm_p001", "sm_p014"],
    },
    "home_furnishings": {
        "response": "Table lamps are in Light Logic, the store on your left. Let's head to its entrance.",
        "assistant_actions": [
            {
                "type": "Navigate",
                "navigation_goal": "2a",
                "reason": "The shopper wants a reading lamp.",
                "next_waypoint": "2",
                "target_approach": "outside_doorway",
            }
        ],
        "expected_user_action": {"name": "move_to_store", "arguments": {"store": "2", "approach": "outside_doorway"}},
        "ranking": ["hf_p031", "hf_p007"],
    },
}


def _check_store(store: str) -> None:
    if store not in STORES:
        raise ValueError(f"store must be one of {STORES}, got {store!r}")


def _tool_line(name: str) -> str:
    spec = TOOLS[name]
    args = []
    for arg, kind in spec.arguments.items():
        if kind == "handle":
            args.append(f"{arg}=<your handle>")
        elif kind == "angle":
            args.append(f"{arg}=<degrees 1-180>")
        elif kind == "distance":
            args.append(f"{arg}=short|medium|long")
        else:
            args.append(f"{arg}={'|'.join(kind)}")
    return f"- {name}({', '.join(args)}): {spec.description}"


@lru_cache(maxsize=4)
def _rules(store: str) -> str:
    words = _STORE_WORDS[store]
    required = REQUIRED_FIELDS[store]
    action_lines = []
    for action in ACTION_TYPES:
        fields = required.get(action, ())
        extra = f" (also requires: {', '.join(fields)})" if fields else ""
        action_lines.append(f"- {action}{extra}")
    tools = "\n".join(_tool_line(name) for name in LEGAL_TOOLS[store])
    example = json.dumps(_EXAMPLES[store], ensure_ascii=False)
    nav_extra = (
        " In this store Navigate also names next_waypoint (a store or area handle visible NOW, the"
        " immediate target) and target_approach (outside_doorway or inside_doorway)."
        if store == "home_furnishings"
        else ""
    )
    return f"""You are a shopping assistant in {words['place']}. You and the shopper share the shopper's first-person view; the shopper moves, you guide them by talking. Find out what they need, guide them to it and recommend suitable catalog products. The shopper's goals and budget are private: ask.

Each turn, reply with ONE JSON object and nothing else:
{{"response": "<what you say to the shopper>",
 "assistant_actions": [<exactly one dialogue action>],
 "expected_user_action": {{"name": "<tool>", "arguments": {{...}}}},
 "ranking": [<up to {MAX_RANKING} catalog product ids, best first>]}}

Dialogue action types (each is {{"type": ...}} plus the fields listed):
{chr(10).join(action_lines)}
Recommend: display_name is the product's catalog name, visible_now is true only if it is in the current view, reason says why it fits. Navigate: navigation_goal is a navigation-target handle; the final goal may be out of sight.{nav_extra}

expected_user_action is the one physical action you expect the shopper to take next, one of:
{tools}

Handle rules:
- Use only YOUR handles: product letters ([a], [b], ...) of the current view (they change every turn) and {words['targets']}.
- Targets in expected_user_action must be visible now (or the held product).
- Never say a handle, a product id or words like JSON or ranking to the shopper; call things by name.
- The ranking holds catalog ids only (e.g. {_EXAMPLES[store]['ranking'][0]}), never handles.
- The shopper inspects products with {words['inspect']}; they buy with add_to_cart.

Example:
{example}"""


def system_prompt(store: str, catalog: str) -> str:
    """The system message: the assistant's rules for ``store`` followed by the catalog text."""
    _check_store(store)
    return f"{_rules(store)}\n\n{catalog.strip()}"


def new_history(history: str, seen: str) -> str:
    """The history lines added since ``seen`` (the previous observation's history)."""
    if seen and history.startswith(seen):
        return history[len(seen) :].lstrip("\n")
    return history


def _pose_text(pose: Any) -> str:
    x, y, yaw = (float(v) for v in np.asarray(pose, dtype=np.float64).reshape(-1)[:3])
    return f"Shopper pose: x={x:.2f} m, y={y:.2f} m, facing {yaw:.0f} deg"


def turn_text(observation: dict[str, Any], seen_history: str = "") -> str:
    """One user message: new dialogue lines, pose and caption of ``observation``."""
    lines = new_history(str(observation.get("history", "")), seen_history).strip()
    if not lines:
        lines = "(the conversation starts; you speak first)" if not seen_history else "(nothing new)"
    return (
        f"New events:\n{lines}\n\n{_pose_text(observation['pose'])}\n\n"
        f"Current view:\n{str(observation.get('visible', '')).strip()}"
    )


def render_messages(observation: dict[str, Any], store: str, *, image: bool = False) -> list[dict]:
    """The first turn's chat messages: [system, user].

    With ``image=True`` the user content is a list with an image entry first (the SoM
    view ``observation["som_rgb"]``, passed to the processor separately) and the text.
    """
    text = turn_text(observation)
    user: Any = [{"type": "image"}, {"type": "text", "text": text}] if image else text
    return [
        {"role": "system", "content": system_prompt(store, str(observation["catalog"]))},
        {"role": "user", "content": user},
    ]


def render_prompt(tokenizer: Any, messages: list[dict]) -> str:
    """Chat-template ``messages`` with the generation prompt appended (text, not ids)."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


_PROBE_A = "\x00ASSISTANT\x00"
_PROBE_U = "\x00USER\x00"


@lru_cache(maxsize=16)
def _joiners_cached(tokenizer: Any) -> tuple[str, str]:
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    with_a = tokenizer.apply_chat_template(
        [*base, {"role": "assistant", "content": _PROBE_A}], tokenize=False
    )
    with_u = tokenizer.apply_chat_template(
        [*base, {"role": "assistant", "content": _PROBE_A}, {"role": "user", "content": _PROBE_U}],
        tokenize=False,
        add_generation_prompt=True,
    )
    if not with_u.startswith(with_a) or _PROBE_A not in with_a:
        raise ValueError("chat template does not render a conversation as a growing prefix")
    close = with_a[with_a.rindex(_PROBE_A) + len(_PROBE_A) :]
    opening = with_u[len(with_a) :]
    if opening.count(_PROBE_U) != 1:
        raise ValueError("chat template does not place the user message once")
    return close, opening


def chat_joiners(tokenizer: Any) -> tuple[str, str]:
    """(close, open): text after an assistant message and around a following user message.

    ``close`` ends an assistant turn (e.g. ``"<|im_end|>\\n"``); ``open`` is the next user
    message with ``\\x00USER\\x00`` where its content goes, plus the generation prompt.
    """
    return _joiners_cached(tokenizer)


def turn_end_ids(tokenizer: Any) -> list[int]:
    """Ids that close an assistant turn in the template (e.g. ``<|im_end|>``), trailing space dropped.

    A teacher's text becomes model tokens as ``ids(text) + turn_end_ids``, exactly what a
    policy that stops on that token produces.
    """
    close = chat_joiners(tokenizer)[0].rstrip()
    if not close:
        return [int(tokenizer.eos_token_id)] if tokenizer.eos_token_id is not None else []
    return list(tokenizer(close, add_special_tokens=False)["input_ids"])


class Conversation:
    """One episode's growing conversation as token ids (the source of truth).

    >>> from train.tiny import build_tiny_tokenizer, corpus   # any chat tokenizer will do
    >>> tokenizer = build_tiny_tokenizer(corpus(), vocab_size=400)
    >>> first_obs = {"history": "", "catalog": "Catalog:", "visible": "Cart: empty", "pose": [0, 0, 90]}
    >>> conv = Conversation(tokenizer, "supermarket", first_obs)
    >>> tokenizer.decode(conv.ids).endswith("<|im_start|>assistant\\n")  # generate from these
    True
    >>> generated_ids = tokenizer('{"response": "Hi!"}<|im_end|>')["input_ids"]
    >>> conv.add_model_tokens(generated_ids, eos_ids={tokenizer.eos_token_id})  # model's turn
    >>> next_obs = {**first_obs, "history": "Assistant: Hi!\\nUser: Hello."}
    >>> env_ids = conv.add_observation(next_obs)                      # the env's turn
    >>> "User: Hello." in tokenizer.decode(env_ids)
    True
    >>> conv.env_mask == [1] * len(generated_ids) + [0] * len(env_ids)
    True
    """

    def __init__(self, tokenizer: Any, store: str, observation: dict[str, Any]):
        self.tokenizer = tokenizer
        self.store = store
        messages = render_messages(observation, store)
        self.prompt_text = render_prompt(tokenizer, messages)
        self.prompt_ids: list[int] = tokenizer(self.prompt_text, add_special_tokens=False)["input_ids"]
        self.completion_ids: list[int] = []
        self.env_mask: list[int] = []  # 1 = model token, 0 = environment token
        self.turn_spans: list[tuple[int, int]] = []  # model-token spans in completion_ids
        self._seen_history = str(observation.get("history", ""))
        self._end_text = ""  # text of the end-of-turn token the model stopped on, if any

    @property
    def ids(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def add_model_tokens(self, token_ids: list[int], *, eos_ids: set[int] | frozenset[int] = frozenset()) -> None:
        """Append the model's generated ids verbatim (env_mask 1)."""
        start = len(self.completion_ids)
        self.completion_ids.extend(int(t) for t in token_ids)
        self.env_mask.extend([1] * len(token_ids))
        self.turn_spans.append((start, len(self.completion_ids)))
        last = int(token_ids[-1]) if len(token_ids) else None
        self._end_text = self.tokenizer.decode([last]) if last is not None and last in eos_ids else ""

    def env_text(self, observation: dict[str, Any]) -> str:
        """The text the environment contributes for ``observation`` (closing + next user turn)."""
        close, opening = chat_joiners(self.tokenizer)
        if self._end_text and close.startswith(self._end_text):
            close = close[len(self._end_text) :]  # the model already closed its turn
        content = turn_text(observation, self._seen_history)
        return close + opening.replace(_PROBE_U, content)

    def add_observation(self, observation: dict[str, Any]) -> list[int]:
        """Append the env's next turn (env_mask 0); returns the appended ids."""
        text = self.env_text(observation)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        self.completion_ids.extend(ids)
        self.env_mask.extend([0] * len(ids))
        self._seen_history = str(observation.get("history", ""))
        return ids
