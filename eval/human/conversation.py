"""One conversation between a person playing the shopper and an assistant, rebuilt by replay.

The env steps its shopper inside ``env.step``; here the shopper is :class:`HumanUser`, a
``UserSimulator`` that returns the participant's queued turn. Each turn the assistant acts
first on the current observation and the participant reads its response; their utterance
and one tool action are validated against the shopper's view before anything changes, and
only then is the env stepped with the stored assistant text.

Everything that happened is kept as a replay log of plain JSON (the assistant's raw texts
and the participant's turns). The env is deterministic under the episode seed, so a log
replayed into a fresh env reproduces the state exactly, which is how a session resumes
after a server restart.
"""

from __future__ import annotations

import base64
import logging
from collections import deque
from typing import Any

import cv2
import gymnasium as gym
import numpy as np

import situ_gym  # noqa: F401 - registers the envs
from agents.base import Assistant, agent_info
from situ_gym.actions import parse_assistant_output, validate_user_call
from situ_gym.actions.tools import DISTANCES, LEGAL_TOOLS, TOOLS
from situ_gym.records import TurnRecord
from situ_gym.som import render_minimap
from situ_gym.spaces import sanitize_text
from situ_gym.user.base import UserObservation, UserSimulator, UserTurn

__all__ = ["MAX_UTTERANCE", "HumanUser", "Conversation", "intent_of", "tool_controls"]

logger = logging.getLogger(__name__)

MAX_UTTERANCE = 500  # characters a participant may type per turn
_MAP_SIZE = (640, None)  # minimap width; height follows the layout's aspect


def intent_of(name: str, utterance: str, gave_up: bool) -> str:
    """The recorded intent of a participant's turn, read from their action (App. A.3 intents)."""
    if gave_up:
        return "give_up"
    if name == "add_to_cart":
        return "buy"
    if name == "do_not_add_to_cart":
        return "reject"
    if name in ("pick_up_item", "check_item"):
        return "inspect"
    if name in ("idle", "drop_item"):
        return "ask" if "?" in utterance else "answer"
    return "explore"


class HumanUser(UserSimulator):
    """The shopper is a person: ``respond`` hands back the turn queued by ``push``."""

    name = "human"

    def __init__(self) -> None:
        self._queue: deque[UserTurn] = deque()

    def reset(self, task, profile, index, rng) -> None:
        self._queue.clear()

    def push(self, turn: UserTurn) -> None:
        self._queue.append(turn)

    def respond(self, obs: UserObservation) -> UserTurn:
        if not self._queue:
            raise RuntimeError("HumanUser.respond called with no participant turn queued")
        return self._queue.popleft()


def tool_controls(store: str) -> list[dict[str, Any]]:
    """The store's legal user tools as form controls: argument name, kind and choices."""
    controls = []
    for name in LEGAL_TOOLS[store]:
        spec = TOOLS[name]
        args = []
        for arg, kind in spec.arguments.items():
            if kind == "angle":
                args.append({"name": arg, "kind": "angle"})
            elif kind == "distance":
                args.append({"name": arg, "kind": "choice", "choices": list(DISTANCES)})
            elif kind == "handle":
                args.append({"name": arg, "kind": "handle"})
            else:
                args.append({"name": arg, "kind": "choice", "choices": list(kind)})
        controls.append({"name": name, "description": spec.description, "arguments": args})
    return controls


def _png_data_url(image: np.ndarray) -> str:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(np.ascontiguousarray(image, dtype=np.uint8), cv2.COLOR_RGB2BGR))
    if not ok:
        raise RuntimeError("PNG encoding failed")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


class Conversation:
    """A live episode: env + assistant + the replay log; ``submit`` plays one participant turn.

    ``log`` entries are ``{"assistant": raw_text, "user": {"utterance", "tool_call",
    "gave_up"} | None}``; the last one has ``"user": None`` while the participant has not
    answered it yet. The log passed in is replayed; the same list is then extended.
    """

    def __init__(
        self,
        *,
        env_id: str,
        task_id: str,
        seed: int,
        assistant: Assistant,
        log: list[dict[str, Any]] | None = None,
        max_turns: int = 20,
    ):
        self.user = HumanUser()
        self.env = gym.make(env_id, user=self.user, max_turns=max_turns)
        self.core = self.env.unwrapped
        self.assistant = assistant
        self.task_id = task_id
        self.seed = seed
        self.max_turns = max_turns
        self.log: list[dict[str, Any]] = []
        self.turns: list[TurnRecord] = []
        self.termination: str | None = None
        self.obs, info = self.env.reset(seed=seed, options={"task_id": task_id})
        public = agent_info(info)
        self.assistant.reset(self.obs, public, seed=seed)
        for entry in log or []:
            self._replay(entry)
        if not self.done and (not self.log or self.log[-1]["user"] is not None):
            self._assistant_turn(None)

    # ------------------------------------------------------------------ state
    @property
    def done(self) -> bool:
        return self.termination is not None

    @property
    def pending_text(self) -> str:
        """The assistant's raw output the participant is answering now."""
        return self.log[-1]["assistant"]

    def pending_response(self) -> str:
        """What the participant reads: the response the env will record for this output."""
        out = parse_assistant_output(
            self.pending_text,
            store=self.core.store,
            index=self.core.index,
            view=self.core.assistant_view,
            no_view=self.core.ablation == "no_ego_view_no_caption",
        )
        return sanitize_text(out.response, 4_000, keep="head")

    def view_state(self) -> dict[str, Any]:
        """Everything the participant's page shows: their own SoM view, minimap, handles."""
        core = self.core
        view = core.user_view
        held = core.backend.held_item
        dialogue = []
        for t in self.turns:
            if t.response:
                dialogue.append({"speaker": "assistant", "text": t.response})
            dialogue.append({"speaker": "you", "text": t.user_utterance})
            if t.user_action is not None and t.result is not None:
                dialogue.append({"speaker": "action", "text": f"{t.user_action.name}: {t.result.message}"})
        if not self.done:
            response = self.pending_response()
            if response:
                dialogue.append({"speaker": "assistant", "text": response})
        handles = {"item": [], "fixture": [], "store": [], "area": []}
        kind_arg = {"product": "item", "fixture": "fixture", "store": "store", "area": "area"}
        for v in view.visible:
            handles[kind_arg[v.kind]].append({"handle": v.handle, "name": v.name})
        held_view = None
        if held is not None:
            handle = view.handle_of(held)
            held_view = {"handle": handle, "name": core.index.name(held)}
            if handle and all(h["handle"] != handle for h in handles["item"]):
                handles["item"].append({"handle": handle, "name": core.index.name(held) + " (held)"})
        return {
            "turn": len(self.turns) + (0 if self.done else 1),
            "max_turns": self.max_turns,
            "done": self.done,
            "dialogue": dialogue,
            "view": _png_data_url(view.image),
            "map": _png_data_url(render_minimap(core.scene, core.index, core.backend.pose(), "user", _MAP_SIZE)),
            "handles": handles,
            "held": held_view,
            "cart": [core.index.name(p) for p in core.backend.cart],
            "inspected": self._inspected(),
            "tools": tool_controls(core.store),
        }

    def _inspected(self) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for t in self.turns:
            call = t.user_action
            if call and call.name in ("pick_up_item", "check_item") and t.result and t.result.ok and call.target_id:
                p = self.core.index.products[call.target_id]
                seen[p.id] = {"name": p.name, "price": p.price, "attributes": dict(p.attributes), "tags": list(p.tags)}
        return list(seen.values())

    # ------------------------------------------------------------------ turns
    def check(self, utterance: str, tool_call: Any) -> str | None:
        """Why this participant turn cannot be played now (None when it can)."""
        if self.done:
            return "this conversation is over"
        if not isinstance(utterance, str) or not utterance.strip():
            return "please type what you say to the assistant"
        if len(utterance) > MAX_UTTERANCE:
            return f"your message is {len(utterance)} characters long; the limit is {MAX_UTTERANCE}"
        primitive, call = validate_user_call(
            tool_call,
            store=self.core.store,
            view=self.core.user_view,
            held_item=self.core.backend.held_item,
            index=self.core.index,
        )
        if primitive is None:
            return f"that action is not possible: {call.error}"
        return None

    def submit(self, utterance: str, tool_call: dict[str, Any], gave_up: bool = False) -> str | None:
        """Play the participant's turn; returns an error message and changes nothing when invalid."""
        error = self.check(utterance, tool_call)
        if error is not None:
            return error
        user = {"utterance": utterance.strip(), "tool_call": tool_call, "gave_up": bool(gave_up)}
        self._step(user)
        self.log[-1]["user"] = user
        if not self.done:
            self._assistant_turn(None)
        return None

    def _assistant_turn(self, stored: str | None) -> str:
        text = self.assistant.act(self.obs)
        if stored is not None and text != stored:
            logger.warning(
                "task %s turn %d: the assistant answered differently on replay; the stored answer is used",
                self.task_id, len(self.turns) + 1,
            )
            text = stored
        self.log.append({"assistant": text, "user": None})
        return text

    def _step(self, user: dict[str, Any]) -> None:
        call = user["tool_call"]
        self.user.push(
            UserTurn(
                utterance=user["utterance"],
                tool_call=call,
                gave_up=user["gave_up"],
                intent=intent_of(str(call.get("name", "")), user["utterance"], user["gave_up"]),
            )
        )
        self.obs, _reward, terminated, truncated, info = self.env.step(self.pending_text)
        self.turns.append(info["turn"])
        if terminated or truncated:
            self.termination = info.get("termination") or ("turn_limit" if truncated else "moderator_end")

    def _replay(self, entry: dict[str, Any]) -> None:
        if self.done:
            raise ValueError(f"replay log of task {self.task_id} goes on after the episode ended")
        self._assistant_turn(entry["assistant"])
        if entry.get("user") is None:
            return
        error = self.check(entry["user"]["utterance"], entry["user"]["tool_call"])
        if error is not None:
            raise ValueError(f"replay log of task {self.task_id} does not replay: {error}")
        self._step(entry["user"])
        self.log[-1]["user"] = entry["user"]

    def close(self) -> None:
        self.env.close()
