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

An assistant that raises (in ``reset`` or ``act``) ends the conversation: termination
``"error"`` with the traceback and its cause (as ``eval.runner`` records a crashed episode),
and a log entry ``{"assistant": None, "user": None, "error": "Type: message"}`` so that a
replay ends it the same way.
"""

from __future__ import annotations

import base64
import logging
import traceback
from collections import deque
from typing import Any

import cv2
import gymnasium as gym
import numpy as np

import situ_gym  # noqa: F401 - registers the envs
from agents.base import Assistant, agent_info
from eval.human.wording import PARTICIPANT_HELP, action_problem, mark_places, product_details
from situ_gym.actions import parse_assistant_output, validate_user_call
from situ_gym.actions.tools import DISTANCES, LEGAL_TOOLS, TOOLS
from situ_gym.records import TurnRecord
from situ_gym.som import render_minimap
from situ_gym.som.labels import fixed_handles_by_id
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
        controls.append({"name": name, "description": PARTICIPANT_HELP.get(name, spec.description), "arguments": args})
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
        self.error: str | None = None  # the assistant's traceback when it failed (kept from the page)
        self.error_line: str | None = None  # "Type: first line of the message"
        self.error_cause: str | None = None  # as eval.runner.error_cause names it
        self._broken: BaseException | None = None  # the assistant raised; it is not asked again
        self.obs, info = self.env.reset(seed=seed, options={"task_id": task_id})
        public = agent_info(info)
        self._places = fixed_handles_by_id(self.core.index, "user")
        try:
            self.assistant.reset(self.obs, public, seed=seed)
        except Exception as exc:  # noqa: BLE001 - any failure of the assistant ends this conversation
            self._broken = exc
        for entry in log or []:
            self._replay(entry)
        if self.done:
            return
        if self._broken is not None:
            self._end_with_error(self._broken)
        elif not self.log or self.log[-1]["user"] is not None:
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
        handles: dict[str, list[dict[str, Any]]] = {"item": [], "fixture": [], "store": [], "area": []}
        kind_arg = {"product": "item", "fixture": "fixture", "store": "store", "area": "area"}
        for v in view.visible:
            entry = {"handle": v.handle, "name": v.name}
            if v.kind == "product":
                entry["price"] = float(core.index.products[v.entity_id].price)
            handles[kind_arg[v.kind]].append(entry)
        held_view = None
        if held is not None:
            handle = view.handle_of(held)
            price = float(core.index.products[held].price)
            held_view = {"handle": handle, "name": core.index.name(held), "price": price}
            if handle and all(h["handle"] != handle for h in handles["item"]):
                handles["item"].insert(0, {"handle": handle, "name": core.index.name(held) + " (in your hands)",
                                           "price": price})
        return {
            "turn": len(self.turns) + (0 if self.done else 1),
            "max_turns": self.max_turns,
            "done": self.done,
            "dialogue": self.transcript(),
            "view": _png_data_url(view.image),
            "map": _png_data_url(render_minimap(core.scene, core.index, core.backend.pose(), "user", _MAP_SIZE)),
            "map_key": self.map_key(),
            "handles": handles,
            "held": held_view,
            "cart": [core.index.name(p) for p in core.backend.cart],
            "inspected": self._inspected(),
            "tools": tool_controls(core.store),
        }

    def transcript(self) -> list[dict[str, str]]:
        """The dialogue as the participant reads it: the assistant's words with the map label
        after each place they name, what the participant said (a silent turn says nothing),
        and the outcome of each action."""
        index = self.core.index
        lines = []
        for t in self.turns:
            if t.response:
                lines.append({"speaker": "assistant", "text": mark_places(t.response, index, self._places)})
            if t.user_utterance:
                lines.append({"speaker": "you", "text": t.user_utterance})
            if t.user_action is not None and t.result is not None:
                lines.append({"speaker": "action",
                              "text": f"{t.user_action.name.replace('_', ' ')}: {t.result.message}"})
        if not self.done:
            response = self.pending_response()
            if response:
                lines.append({"speaker": "assistant", "text": mark_places(response, index, self._places)})
        return lines

    def map_key(self) -> list[dict[str, str]]:
        """Every place on the participant's map: its label and the name the assistant uses."""
        index = self.core.index
        key = [{"handle": h, "name": index.name(eid)} for eid, h in self._places.items()]
        return sorted(key, key=lambda k: (len(k["handle"]), k["handle"]))

    def _inspected(self) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for t in self.turns:
            call = t.user_action
            if call and call.name in ("pick_up_item", "check_item") and t.result and t.result.ok and call.target_id:
                seen[call.target_id] = product_details(self.core.index.products[call.target_id])
        return list(seen.values())

    # ------------------------------------------------------------------ turns
    def check(self, utterance: str, tool_call: Any, gave_up: bool = False, silent: bool = False) -> str | None:
        """Why this participant turn cannot be played now (None when it can), said to them.

        A silent move needs no message: with ``silent`` (the participant means to say
        nothing) the utterance may be empty when the turn does something, an action other
        than ``idle`` or ending the conversation. Without it an empty utterance is refused,
        so that a message lost on the way is not taken for silence."""
        if self.done:
            return "this conversation is over"
        if not isinstance(utterance, str):
            return "please type what you say to the assistant"
        if len(utterance) > MAX_UTTERANCE:
            return f"your message is {len(utterance)} characters long; the limit is {MAX_UTTERANCE}"
        name = tool_call.get("name") if isinstance(tool_call, dict) else None
        if not utterance.strip() and (not silent or (name == "idle" and not gave_up)):
            return "please type what you say to the assistant, or choose an action"
        core = self.core
        problem = action_problem(tool_call, store=core.store, view=core.user_view,
                                 held_item=core.backend.held_item, index=core.index)
        if problem is not None:
            return problem
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

    def submit(self, utterance: str, tool_call: dict[str, Any], gave_up: bool = False,
               silent: bool = False) -> str | None:
        """Play the participant's turn; returns an error message and changes nothing when invalid."""
        error = self.check(utterance, tool_call, gave_up, silent)
        if error is not None:
            return error
        user = {"utterance": utterance.strip(), "tool_call": tool_call, "gave_up": bool(gave_up)}
        self._step(user)
        self.log[-1]["user"] = user
        if not self.done:
            self._assistant_turn(None)
        return None

    def _assistant_turn(self, stored: str | None) -> None:
        """The assistant acts on the current observation; on replay its stored text is kept.

        A failure to act ends the conversation (a new turn), or, on replay, only stops
        asking the assistant: the stored texts replay the episode and it ends after."""
        text = None
        if self._broken is None:
            try:
                text = self.assistant.act(self.obs)
            except Exception as exc:  # noqa: BLE001 - any failure of the assistant ends this conversation
                if stored is None:
                    self._end_with_error(exc)
                    return
                self._broken = exc
        if stored is not None:
            if text is not None and text != stored:
                logger.warning(
                    "task %s turn %d: the assistant answered differently on replay; the stored answer is used",
                    self.task_id, len(self.turns) + 1,
                )
            text = stored
        self.log.append({"assistant": text, "user": None})

    def _end_with_error(self, exc: BaseException) -> None:
        from eval.runner import error_cause

        line = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:300]
        logger.warning("task %s turn %d: the assistant failed (%s); the conversation ends",
                       self.task_id, len(self.turns) + 1, line)
        self.termination = "error"
        self.error = "".join(traceback.format_exception(exc))
        self.error_line = line
        self.error_cause = error_cause(exc)
        self.log.append({"assistant": None, "user": None, "error": line, "error_cause": self.error_cause})

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
        if entry.get("error"):  # the assistant failed here: the conversation ended
            self.termination, self.error_line = "error", str(entry["error"])
            self.error = self.error_line  # the traceback went to the episode record when it happened
            self.error_cause = entry.get("error_cause") or "crash"
            self.log.append(dict(entry))
            return
        self._assistant_turn(entry["assistant"])
        if entry.get("user") is None:
            return
        user = entry["user"]
        error = self.check(user["utterance"], user["tool_call"], user.get("gave_up", False),
                           silent=not str(user["utterance"]).strip())  # it was played: its silence was meant
        if error is not None:
            raise ValueError(f"replay log of task {self.task_id} does not replay: {error}")
        self._step(entry["user"])
        self.log[-1]["user"] = entry["user"]

    def close(self) -> None:
        self.env.close()
