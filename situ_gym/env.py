"""SituRecEnv: one SituRecBench episode seen from the assistant's side."""

from __future__ import annotations

import copy
import logging
import math
import reprlib
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from situ_gym.actions import parse_assistant_output, validate_user_call
from situ_gym.actions.tools import TRANSLATIONAL_TOOLS
from situ_gym.assistant_tools import (
    MAX_TOOL_CALLS_PER_TURN,
    TOOLS_TITLE,
    CatalogTools,
    ToolHandle,
    decode_arguments,
)
from situ_gym.backends.base import ActionResult, Backend, Frame, Pose
from situ_gym.language import (
    Utterance,
    analyze,
    analyze_reply,
    lexicon_for,
    raised_by,
    recommendation_attempt,
    turned_down,
)
from situ_gym.language.names import find_marker_disclosures
from situ_gym.protocol import check_protocol
from situ_gym.records import AssistantToolCall, ExecutionResult, ToolCall, TurnRecord
from situ_gym.retrieval import CATALOG_VIEWS, CatalogRetriever, retrieved_title
from situ_gym.scene.index import index_of
from situ_gym.scene.loader import load_scene, load_task_bank
from situ_gym.som import ROLES, Analysis, analyse, caption, draw, fixed_handles, render_minimap
from situ_gym.som.types import RoleView
from situ_gym.spaces import MAX_ACTION_TEXT, MAX_OBS_TEXT, clip_text, sanitize_text, text_space
from situ_gym.stores import StoreError, store_spec
from situ_gym.text import catalog_text, nav_targets_text
from situ_gym.user import MODERATORS, USERS, UserObservation, make_moderator, make_user

__all__ = ["SituRecEnv", "EnvSnapshot", "ABLATIONS", "STALL_DISPLACEMENT", "RECOMMENDATION_LIMIT", "RESET_OPTIONS"]

logger = logging.getLogger(__name__)

ABLATIONS = (None, "no_ego_view", "no_ego_view_no_caption")
RECOMMENDATION_LIMIT = 3  # recommendation attempts without a purchase (App. B.3; situ_gym.language.attempts)
STALL_LIMIT = 3  # consecutive translational actions that barely move (App. B.3)
STALL_DISPLACEMENT = 0.05  # metres; below this a translational action "did not move"
MAP_SIZE = (320, 240)  # width, height of the layout minimap
MAX_IMAGE_SIDE = 4096  # pixels; beyond this one frame costs seconds and hundreds of MB
MAX_SOM_DEPTH = 1000.0  # metres; far larger than any store
RESET_OPTIONS = ("task_id",)
# What one episode changes on the env itself (besides backend, shopper and moderator):
# saved by ``snapshot``, put back by ``restore``.
_EPISODE_STATE = ("task", "profile", "turns", "_history", "_dialogue", "_inspected", "_recommendations",
                  "_proposed", "_raised", "_declined", "_heard", "_stalls", "_last_result", "_done", "_failed",
                  "_tool_calls")
# The current view, which a failed step also puts back (restore re-renders it instead).
_VIEW_STATE = ("frame", "user_view", "assistant_view")


@dataclass(frozen=True)
class EnvSnapshot:
    """An episode's whole state at one point (``SituRecEnv.snapshot``): opaque, reusable."""

    config: tuple  # the env settings it was taken under; restore checks them
    episode: dict[str, Any]
    rng_state: dict[str, Any]
    backend: Any
    user: Any
    moderator: Any


class _BoundedRepr(reprlib.Repr):
    """reprlib with room for a task id, and no failure on an integer too long for ``repr``."""

    def __init__(self):
        super().__init__()
        self.maxstring = self.maxother = 80
        self.maxlong = 40
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # repr() of a 4,300-digit int raises; no message needs its digits
            return f"<int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHOWN = _BoundedRepr()


def _shown(value: Any) -> str:
    """A bad argument as an error message shows it: one line, bounded (reprlib), whatever it is."""
    return _SHOWN.repr(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float: no finite real this code can use
        return False


def _has_methods(value: Any, *names: str) -> bool:
    return all(callable(getattr(value, name, None)) for name in names)


def _by_name(argument: str, value: Any, factory: Any, cls: str) -> Any:
    """A shopper or moderator named by a string, built; an instance as it is. "llm" needs a
    chat model, which only an instance can carry: its error says so, naming the argument."""
    if not isinstance(value, str):
        return value
    try:
        return factory(value)
    except ValueError as exc:
        raise ValueError(f"{argument}={_shown(value)}: {exc}; pass an instance, e.g. "
                         f"{argument}={cls}(model=...)") from None


def _for_protocol(factory: Any, protocol: str) -> Any:
    """``factory`` building the rule simulators for ``protocol`` (the LLM ones take a model instead)."""
    return lambda name: factory(name, protocol=protocol) if name == "rule" else factory(name)


def _check_image_size(image_size: Any) -> tuple[int, int]:
    """(width, height) as ints, or a ValueError that prints the bad value."""
    try:
        width, height = image_size
    except (TypeError, ValueError):
        raise ValueError(f"image_size must be a (width, height) pair, got {_shown(image_size)}") from None
    if not (_is_int(width) and _is_int(height)) or not (
        16 <= width <= MAX_IMAGE_SIDE and 16 <= height <= MAX_IMAGE_SIDE
    ):
        raise ValueError(
            f"image_size must be two integers between 16 and {MAX_IMAGE_SIDE}, got {_shown(image_size)}"
        )
    return int(width), int(height)


def _quote_lines(text: str) -> str:
    """Indent every continuation line, so that no text a role wrote can start a history line
    of its own (a forged "User action: ..." line stays visibly inside the message)."""
    return text.replace("\n", "\n  ")


class SituRecEnv(gym.Env[dict, str]):
    """A shopper and an assistant share one egocentric view in a 3D store (SituRecBench).

    The agent is the assistant. Each ``step`` is one assistant turn: the simulated
    shopper reads the assistant's response, answers and takes exactly one physical
    tool action, which the backend executes; then the termination rules are checked.

    ## Action space
    ``Text``: the assistant's JSON output (see ``situ_gym.actions.assistant``)::

        {"response": "Hi! What are you shopping for today?",
         "assistant_actions": [{"type": "Greet"}],
         "expected_user_action": {"name": "idle", "arguments": {}},
         "ranking": ["sm_p001", "sm_p042"]}

    ``assistant_actions`` holds exactly one of the ten dialogue actions (Greet,
    AskPreference, ClarifyNeed, Navigate, Recommend, Explain, AnswerQuestion, Compare,
    HandleRejection, ConfirmPurchase). Recommend needs ``display_name``, ``visible_now``,
    ``reason``; Navigate needs ``navigation_goal`` (a fixed fixture/store/area handle) and
    ``reason``, plus ``next_waypoint`` (a visible store/area handle) and
    ``target_approach`` in the Home Furnishings Store. ``expected_user_action`` is a user
    tool (``situ_gym.actions.tools``) whose target handles are the assistant's and must be
    visible now. Legal handles: the assistant's product letters of the current view
    (``a``, ``b``, ... renumbered every observation), fixed numeric fixture/store handles
    (``3``) and area handles (``2a``). ``ranking`` lists up to 10 catalog product ids.
    Malformed output never raises: it is recorded as invalid with its reasons in
    ``info["turn"].assistant_errors`` and the shopper hears whatever text was recovered.

    ## Observation space
    ``Dict``: ``som_rgb`` uint8 (H, W, 3) view with the assistant's marks; ``map`` uint8
    layout minimap with the user's pose; ``pose`` float32 (x m, y m, yaw deg);
    ``history`` dialogue and executed user actions; ``catalog`` products, location index
    and fixed navigation handles; ``visible`` caption of the current view. The hidden task
    (goal, budget, preferences, target, reference set) is never in the observation. Under
    an ablation ``som_rgb`` is a black frame, or absent with ``protocol="paper"``. With
    ``text_only=True`` neither ``som_rgb`` nor ``map`` is there.

    ## Rewards
    1.0 on the step where an item enters the cart, else 0.0. Wrap with
    ``recrm.RecRMReward`` for the gated multi-dimensional reward.

    ## Episode end
    Checked in this order after each user action: ``success_cart_added`` (terminated),
    ``recommendation_exhausted`` (3 recommendation attempts: see below), ``moderator_end``,
    ``motion_stall`` (3 consecutive translational actions moving < 5 cm, other actions
    in between neither count nor reset); ``turn_limit`` truncates after ``max_turns``.
    The reason is ``info["termination"]``. A step that raises (e.g. ``BackendError`` from
    an engine) is undone (no dialogue line, no turn) and the episode needs a ``reset``.

    ## Recommendation attempts
    One rule (``situ_gym.language.attempts``), shared with the shopper, RecRM and the
    metrics: every product the response's words put forward for the shopper to consider,
    in any wording ("try the X", "by the way, the X is great", "rec: X", an unrequested
    comparison, "the X is on Shelf 3"), is one attempt the first time it is put forward;
    products set aside ("you turned the X down"), products the shopper raised itself
    (named by its own name, asked about, picked up, inspected; a wish that happens to fit one
    product raises none) and the sides of a comparison the shopper
    asked for are not. The alternative offered after an acknowledged turn-down is put
    forward whatever its verb ("ok, skip the X. The Y is sweet instead."). Proposing again a
    product the shopper turned down (a push-back: "worth a second look?") is an attempt,
    whatever the annotation. A turn annotated ``Recommend`` is an attempt even when its words
    name nothing (the paper counts one per Recommend annotation). Options listed unasked
    before a pick ("3 opts: A / B / C -> C") are each put forward. The words are read as
    the reply to the shopper's last words (``situ_gym.language.analyze_reply``): "parmesan
    wedge = 10.79" after "how much is the parmesan?" answers about it. Each turn's products
    and count are in ``info["turn"].put_forward`` / ``.recommendation_attempts``.

    ## Arguments
    * ``store``: a registered store id, "supermarket" or "home_furnishings" (set by the registered
      env id), or the path of a store folder (``SituRec-Custom-v0``; see ``situ_gym.stores``).
    * ``backend``: "embedded" (default) or a ``Backend`` instance.
    * ``user`` / ``moderator``: simulator names ("rule") or instances.
    * ``task_ids``: restrict the tasks ``reset`` may pick (bank order otherwise).
    * ``image_size``: (width, height) of the egocentric view, default (640, 480).
    * ``max_turns``: the turn limit (20 in the paper).
    * ``ablation``: None, "no_ego_view" (blank image, keep the caption) or
      "no_ego_view_no_caption" (also drop visible entities; a static index of fixed
      navigation handles instead), App. D.4.
    * ``catalog_view``: "full" (default: every product), "retrieved" (compact view for
      small-context policies: only the ``catalog_k`` entries most relevant to the dialogue
      so far, by BM25 over ``situ_gym.retrieval``, plus the navigation index) or "tools" (no
      product listed, only the navigation index: the assistant looks the catalog up with
      tools within its turn, see "Assistant tools").
    * ``som_max_depth`` / ``som_building_depth``: annotation ranges in metres for
      products (8) and for fixtures, stores and areas (25, so that navigation targets
      across the hall get marks while product labels stay legible).
    * ``text_only``: for policies that read no pixels. No colour image is rendered and no
      Set-of-Mark drawn (the observation has no ``som_rgb`` and no ``map``); visibility,
      handles and captions come from the depth and entity buffers alone, which the colour
      image never changes, so captions, infos, the shopper and rewards are the same as
      with the full step (``benchmarks.env_steps`` times both). An LLM shopper gets no image.
    * ``protocol``: "default" or "paper" (SituRecBench as written: the end checks' order, the
      image under ablations, and the rule shopper's budget and moderator's inputs);
      ``situ_gym.protocol.DEPARTURES`` and ``docs/protocol.md`` list every difference.
    * An argument of the wrong type or out of range raises ``ValueError`` naming it (an
      unknown argument: Python's ``TypeError``).
    * ``render_mode``: "rgb_array" returns the assistant's SoM frame; "human" shows it in a
      pygame window after every reset and step (``pip install "situ-gym[window]"``; without
      a display it warns once and draws off screen).

    ## Reset options
    ``reset(seed=..., options={"task_id": id})``: ``task_id`` is the only key; without it
    a task is drawn with the seed. Any other key, a non-dict, an unknown ``task_id`` or a
    ``seed`` that is not None or a non-negative integer raises ``ValueError``.

    ## Info
    ``reset``: ``task_id``, ``profile_id``, ``store``, ``ablation``, ``protocol`` and the
    hidden ``task`` (for rewards and evaluation only). ``step`` adds ``turn`` (a
    ``TurnRecord``) and ``termination``. Assistants get only ``agents.base.agent_info(info)``
    (the store, the ablation and the protocol): the packaged task bank maps the task and
    profile ids to the answer.

    ## Assistant tools
    Under ``catalog_view="tools"`` an assistant may call tools before it answers, any number of
    times between two steps (``MAX_TOOL_CALLS_PER_TURN`` of them are answered; later ones get an
    error result): ``env.unwrapped.call_tool(name, arguments) -> str``, or the same through the
    handle in ``info["tools"]`` (which ``agents.base.agent_info`` passes on, with its OpenAI
    ``schemas``). The tools (``situ_gym.assistant_tools``: ``search_catalog``, ``get_product``,
    ``locate``) answer from this env's catalog and map and the shopper's pose; a bad call gets an
    ``"Error: ..."`` result, never an exception. The calls are recorded, in order, in the next
    step's ``info["turn"].tool_calls`` (name, arguments, result, ok). Under the other views
    ``call_tool`` raises and turns record no tool calls (their records are as before).

    ## Branching
    ``state = env.unwrapped.snapshot()`` takes the episode's state (backend, shopper,
    moderator, turns, counters, random streams) at any point after ``reset``;
    ``obs, info = env.unwrapped.restore(state)`` puts this env, or another one made with the
    same arguments and reset once, back to it, any number of times. Replaying the same actions
    after a restore gives the same turns, observations and rewards as the first time, so
    training can branch several continuations from the middle of an episode. It needs
    copyable simulators (the rule shopper and moderator; an LLM one holds a live connection)
    and a backend with ``snapshot``/``restore`` (the embedded one and UnrealCV).

    ## Version history
    * v0: initial release.
    """

    # "human" shows the assistant's frame in a pygame window (pip install "situ-gym[window]").
    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 1}

    def __init__(
        self,
        store: str = "supermarket",
        *,
        backend: str | Backend = "embedded",
        user: Any = "rule",
        moderator: Any = "rule",
        task_ids: list[str] | None = None,
        image_size: tuple[int, int] = (640, 480),
        max_turns: int = 20,
        ablation: str | None = None,
        catalog_view: str = "full",
        catalog_k: int = 5,
        som_max_depth: float = 8.0,
        som_building_depth: float = 25.0,
        render_mode: str | None = None,
        protocol: str = "default",
        text_only: bool = False,
    ):
        protocol = check_protocol(protocol)
        if type(store) is not str:
            raise ValueError(f"store must be a registered store id or a store folder, got {_shown(store)}")
        try:
            store = store_spec(store).id  # a folder registers here (also in each vector-env worker)
        except StoreError as e:
            raise ValueError(str(e)) from None
        # Every argument is checked before anything is built: a bad one is a ValueError whose
        # one-line message names it and shows the value (bounded), never an error from deeper.
        # (``x in TUPLE`` compares with ==, so unhashable values are fine; an exact-type test
        # keeps a str subclass or a NumPy array from comparing in surprising ways.)
        if not (ablation is None or type(ablation) is str and ablation in ABLATIONS):
            raise ValueError(f"ablation must be one of {ABLATIONS}, got {_shown(ablation)}")
        if not (type(catalog_view) is str and catalog_view in CATALOG_VIEWS):
            raise ValueError(f"catalog_view must be one of {CATALOG_VIEWS}, got {_shown(catalog_view)}")
        if not _is_int(catalog_k) or catalog_k < 1:
            raise ValueError(f"catalog_k must be a positive integer, got {_shown(catalog_k)}")
        if not _is_int(max_turns) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive integer, got {_shown(max_turns)}")
        if render_mode is not None and not (type(render_mode) is str and render_mode in self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {_shown(render_mode)}")
        if type(text_only) is not bool:
            raise ValueError(f"text_only must be True or False, got {_shown(text_only)}")
        if text_only and render_mode is not None:
            raise ValueError(f"text_only=True draws no frame to render: use render_mode=None, got {render_mode!r}")
        width, height = _check_image_size(image_size)
        for name, depth in (("som_max_depth", som_max_depth), ("som_building_depth", som_building_depth)):
            if not _is_real(depth) or not 0.0 < depth <= MAX_SOM_DEPTH:
                raise ValueError(f"{name} must be a number of metres in (0, {MAX_SOM_DEPTH:g}], got {_shown(depth)}")
        for name, value, ok, legal in (
            ("backend", backend, backend in ("embedded", "unrealcv") if isinstance(backend, str)
             else _has_methods(backend, "reset", "execute", "capture", "pose"), "'embedded', 'unrealcv' or a Backend"),
            ("user", user, user in USERS if isinstance(user, str) else _has_methods(user, "reset", "respond"),
             f"one of {sorted(USERS)} or a UserSimulator"),
            ("moderator", moderator, moderator in MODERATORS if isinstance(moderator, str)
             else _has_methods(moderator, "should_end"), f"one of {sorted(MODERATORS)} or a Moderator"),
        ):
            if not ok:
                raise ValueError(f"{name} must be {legal}, got {_shown(value)}")
        if task_ids is not None and (
            not isinstance(task_ids, (list, tuple)) or not task_ids or not all(isinstance(t, str) for t in task_ids)
        ):
            raise ValueError(f"task_ids must be a non-empty list of task id strings or None, got {_shown(task_ids)}")
        if render_mode == "human":
            self._window = _HumanWindow()  # fails now, with the extra to install, if pygame is missing

        self.scene = load_scene(store)
        self.task_bank = load_task_bank(store)
        self.index = index_of(self.scene)  # shared: its derived tables are built once per process
        self._lexicon = lexicon_for(self.index)
        self.store = self.scene.store
        self._profiles = {p.id: p for p in self.task_bank.profiles}
        tasks = {t.id: t for t in self.task_bank.tasks}
        if task_ids is None:
            self.task_ids = [t.id for t in self.task_bank.tasks]
        else:
            unknown = [t for t in task_ids if t not in tasks]
            if unknown:
                raise ValueError(f"unknown task_ids {_shown(unknown)} for {store}; expected the bank's ids, "
                                 f"e.g. {[t.id for t in self.task_bank.tasks][:3]}")
            self.task_ids = list(task_ids)
        self._tasks = tasks

        # The rule shopper and moderator play the protocol asked for; an instance plays its own.
        self.protocol = protocol
        self.text_only = text_only
        self.user = _by_name("user", user, _for_protocol(make_user, protocol), "LLMUser")
        self.moderator = _by_name("moderator", moderator, _for_protocol(make_moderator, protocol), "LLMModerator")
        self.backend = self._make_backend(backend, width, height)
        self.max_turns = int(max_turns)
        self.ablation = ablation
        self.som_max_depth = float(som_max_depth)
        self.som_building_depth = float(som_building_depth)
        self.render_mode = render_mode

        self._assistant_fixed = fixed_handles(self.index, "assistant")
        self._nav_text = nav_targets_text(self.index, self._assistant_fixed)
        self._catalog_text = sanitize_text(catalog_text(self.index) + "\n" + self._nav_text, keep="head")
        self.catalog_view, self.catalog_k = catalog_view, int(catalog_k)
        self._retriever = CatalogRetriever(self.index) if catalog_view != "full" else None
        self._tools = self._tool_handle = None
        if catalog_view == "tools":
            self._tools = CatalogTools(self.index, retriever=self._retriever, handles=self._assistant_fixed)
            self._tool_handle = ToolHandle(self.call_tool)
            self._tools_text = sanitize_text(f"{TOOLS_TITLE}\n{self._nav_text}", keep="head")
        (x0, y0, x1, y1) = self.scene.layout.bounds
        map_h, map_w = render_minimap(self.scene, self.index, Pose(x0, y0, 0.0), "assistant", MAP_SIZE).shape[:2]
        obs_text = text_space(MAX_OBS_TEXT)
        # Under the paper's protocol an ablation removes the image from the observation; the
        # default keeps a black frame of the same shape (situ_gym.protocol: "ablation_image").
        self._sends_image = not text_only and (ablation is None or protocol == "default")
        image_space = {"som_rgb": spaces.Box(0, 255, (height, width, 3), np.uint8)} if self._sends_image else {}
        map_space = {} if text_only else {"map": spaces.Box(0, 255, (map_h, map_w, 3), np.uint8)}
        self.observation_space = spaces.Dict(
            {
                **image_space,
                **map_space,
                "pose": spaces.Box(
                    np.array([x0, y0, -180.0], np.float32),
                    np.array([x1, y1, 180.0], np.float32),
                    dtype=np.float32,
                ),
                "history": obs_text,
                "catalog": obs_text,
                "visible": obs_text,
            }
        )
        self.action_space = text_space(MAX_ACTION_TEXT)

        self.task = None
        self.profile = None
        self.turns: list[TurnRecord] = []
        self._done = True
        self._failed = None
        self._marked: tuple[Frame, Analysis, str | None, dict[str, RoleView]] | None = None  # see _observe

    # ------------------------------------------------------------------ gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict, dict]:
        # gymnasium's own seed check raises gymnasium.error.Error (and refuses NumPy integers):
        # a bad seed is a ValueError naming it, like a bad option.
        if seed is not None and (not _is_int(seed) or seed < 0):
            raise ValueError(f"seed must be None or a non-negative integer, got {_shown(seed)}")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict with keys {RESET_OPTIONS} or None, got {type(options).__name__}")
        unknown = sorted((k for k in options or {} if k not in RESET_OPTIONS), key=_shown)
        if unknown:
            raise ValueError(f"unknown reset option(s) {_shown(unknown)}; allowed keys: {list(RESET_OPTIONS)}")
        task_id = (options or {}).get("task_id")
        if task_id is not None and (not isinstance(task_id, str) or task_id not in self._tasks):
            raise ValueError(
                f"unknown task_id {_shown(task_id)} for {self.store}; expected one of the bank's ids, "
                f"e.g. {self.task_ids[:3]}"
            )
        super().reset(seed=None if seed is None else int(seed))
        if task_id is None:
            task_id = self.task_ids[int(self.np_random.integers(len(self.task_ids)))]
        self.task = self._tasks[task_id]
        self.profile = self._profiles[self.task.profile_id]

        start = self.scene.layout.start
        self.backend.reset(Pose(start.x, start.y, start.yaw, 0.0))
        user_rng = np.random.default_rng(int(self.np_random.integers(2**63)))
        self.user.reset(self.task, self.profile, self.index, user_rng)

        self.turns = []
        self._history: list[str] = []
        self._dialogue: list[tuple[str, str]] = []
        self._inspected: dict[str, dict] = {}
        self._recommendations = 0
        self._proposed: set[str] = set()  # products put forward so far
        self._raised: set[str] = set()  # products the shopper raised itself
        self._declined: set[str] = set()  # products the shopper turned down
        self._heard: Utterance | None = None  # the shopper's last words, as read
        self._stalls = 0
        self._last_result: str | None = None
        self._done = False
        self._failed: str | None = None
        self._tool_calls: list[AssistantToolCall] = []  # this turn's, until the step records them
        self._observe()
        if self.render_mode == "human":
            self._window.show(self.assistant_view.image)
        return self._observation(), self._public_info()

    def step(self, action: str) -> tuple[dict, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._failed is not None:
            raise RuntimeError(f"the previous step failed ({self._failed}): call reset() before step()")
        if self._done:
            raise RuntimeError("episode is over: call reset() before step()")
        # A step that raises (e.g. BackendError from the engine) is undone here, so the env
        # never shows half a turn; the episode is over because the world may have moved.
        # The episode's own state (one list with snapshot's, _EPISODE_STATE): a turn only adds
        # to its lists, dicts and sets and replaces its other values, so copies of those suffice.
        saved = {name: _shallow(getattr(self, name)) for name in (*_EPISODE_STATE, *_VIEW_STATE)}
        try:
            out = self._play_turn(action)
        except Exception as exc:
            for name, value in saved.items():
                setattr(self, name, value)
            self._done, self._failed = True, f"{type(exc).__name__}: {exc}"
            raise
        if self.render_mode == "human":
            self._window.show(self.assistant_view.image)
        return out

    def call_tool(self, name: str, arguments: Any = None) -> str:
        """Answer one assistant tool call of the current turn and record it (``catalog_view="tools"``;
        see "Assistant tools"). ``arguments``: a dict or its JSON text. A bad call's result is an
        error text; only calling outside an open episode or under another view raises."""
        if self._tools is None:
            raise RuntimeError(f"call_tool() needs catalog_view='tools', this env has {self.catalog_view!r}")
        if self._failed is not None or self._done or self.task is None:
            raise RuntimeError("call_tool() needs an open episode: call reset() first")
        if len(self._tool_calls) >= MAX_TOOL_CALLS_PER_TURN:
            answer_text, ok = (f"Error: the tool-call limit of {MAX_TOOL_CALLS_PER_TURN} per turn is reached; "
                               "answer the shopper now"), False
        else:
            answer = self._tools.call(name, arguments, pose=self._pose_tuple())
            answer_text, ok = sanitize_text(answer.result, keep="head"), answer.ok
        decoded = decode_arguments(arguments)
        sent = decoded if isinstance(decoded, dict) else sanitize_text(str(arguments), 2_000, keep="head")
        try:
            call = AssistantToolCall(name=sanitize_text(str(name), 200, keep="head"), arguments=sent,
                                     result=answer_text, ok=ok)
            call.model_dump_json()  # the record must serialise: arguments a Python caller passed may not
        except ValueError:
            call = AssistantToolCall(name=sanitize_text(str(name), 200, keep="head"),
                                     arguments=sanitize_text(repr(arguments), 2_000, keep="head"),
                                     result=answer_text, ok=ok)
        self._tool_calls.append(call)
        return answer_text

    def snapshot(self) -> EnvSnapshot:
        """The episode's state now, for ``restore`` (see "Branching" above)."""
        if self.task is None:
            raise RuntimeError("snapshot() before reset(): there is no episode to save")
        if not callable(getattr(self.backend, "snapshot", None)):
            raise TypeError(f"snapshot() needs a backend with snapshot()/restore(); {type(self.backend).__name__} has none")
        return EnvSnapshot(
            config=self._config(),
            episode=self._copied({name: getattr(self, name) for name in _EPISODE_STATE}),
            rng_state=copy.deepcopy(self.np_random.bit_generator.state),
            backend=self.backend.snapshot(),
            user=self._copied(self.user, "user"),
            moderator=self._copied(self.moderator, "moderator"),
        )

    def restore(self, state: EnvSnapshot) -> tuple[dict, dict]:
        """Put the episode back to ``state`` (from ``snapshot``); returns the observation
        and reset info of that moment. The snapshot stays reusable."""
        if not isinstance(state, EnvSnapshot):
            raise ValueError(f"restore() takes what snapshot() returned, got {type(state).__name__}")
        if state.config != self._config():
            raise ValueError("restore(): the snapshot was taken in an env with other settings "
                             f"{state.config} than this one {self._config()}")
        for name, value in self._copied(state.episode).items():
            setattr(self, name, value)
        self.np_random.bit_generator.state = copy.deepcopy(state.rng_state)
        self.backend.restore(state.backend)
        self.user = self._copied(state.user, "user")
        self.moderator = self._copied(state.moderator, "moderator")
        self._marked = None
        self._observe()
        return self._observation(), self._public_info()

    def _config(self) -> tuple:
        return (self.store, self.protocol, self.ablation, self.text_only, self.catalog_view, self.catalog_k,
                self.max_turns, tuple(self.task_ids), getattr(self.backend, "width", None),
                getattr(self.backend, "height", None))

    def _copied(self, value: Any, what: str = "episode state") -> Any:
        """A deep copy that shares what never changes during an episode (the scene, its
        index and lexicon, the task bank's tasks and profiles) instead of copying it."""
        shared = [self.scene, self.index, self._lexicon, self.task_bank, *self._tasks.values(),
                  *self._profiles.values()]
        try:
            return copy.deepcopy(value, {id(x): x for x in shared})
        except (TypeError, copy.Error) as exc:  # e.g. an LLM simulator's live connection
            raise TypeError(f"snapshot()/restore() cannot copy the {what} ({type(value).__name__}): {exc}") from exc

    def assistant_turn(self, action: Any) -> TurnRecord:
        """The assistant side of the ``TurnRecord`` that stepping ``action`` now would write
        (parse, sanitising, turn number, the view acted on), without stepping: what a reward
        judges a candidate turn on (``eval.best_of_n`` scores candidates with it). The
        shopper's side is empty."""
        raw = action if isinstance(action, str) else repr(action)
        out = parse_assistant_output(
            raw,
            store=self.store,
            index=self.index,
            view=self.assistant_view,
            no_view=self.ablation == "no_ego_view_no_caption",
        )
        if not isinstance(action, str):
            out.errors.insert(0, f"action must be a str, got {type(action).__name__}")
        return TurnRecord(
            turn=len(self.turns) + 1,
            assistant_raw=sanitize_text(raw, MAX_ACTION_TEXT, keep="head"),
            assistant_valid=out.valid,
            assistant_errors=out.errors,
            response=sanitize_text(out.response, 4_000, keep="head"),
            action_type=out.action_type,
            action=out.action,
            navigation_goal_id=out.navigation_goal_id,
            recommended_id=out.recommended_id,
            expected_user_action=out.expected_call,
            ranking=[str(r) for r in out.ranking],
            visible_before=self.assistant_view.visible_ids(),
        )

    def _play_turn(self, action: str) -> tuple[dict, SupportsFloat, bool, bool, dict[str, Any]]:
        mine = self.assistant_turn(action)
        turn, response, visible_before = mine.turn, mine.response, mine.visible_before
        # The recommendation attempts of the turn: the products its words put forward, plus
        # the Recommend annotation (one rule for env, shopper, RecRM, metrics).
        # read as the reply to the shopper's last words (situ_gym.language.dialogue)
        said = analyze_reply(response, self._lexicon, heard=self._heard, raised=self._raised, visible=visible_before)
        attempt = recommendation_attempt(
            said, before=self._proposed, raised=self._raised, annotated=mine.action_type,
            compare_requested=self._heard is not None and self._heard.asks_to_compare, declined=self._declined,
        )
        self._proposed.update(attempt.put_forward)
        if attempt.annotated and mine.recommended_id:
            self._proposed.add(mine.recommended_id)
        if response:
            self._history.append(f"Assistant: {_quote_lines(response)}")
            self._dialogue.append(("assistant", response))

        # The shopper answers from what it can know, then acts once.
        user_turn = self.user.respond(
            UserObservation(
                turn=turn,
                assistant_response=response,
                view=self.user_view,
                held_item=self.backend.held_item,
                cart=list(self.backend.cart),
                inspected=dict(self._inspected),
                last_result=self._last_result,
                history=list(self._dialogue),
            )
        )
        utterance = sanitize_text(user_turn.utterance, 4_000, keep="head")
        # Neither role may say a marker label (paper 3.3): the shopper's words (a rule or LLM
        # shopper's, or a person's through eval.human) are checked against the view it spoke
        # from. Recorded for analysis only: what the shopper hears and does stays the same.
        user_disclosures = find_marker_disclosures(utterance, handles=self.user_view.handles, index=self.index)
        heard = analyze(utterance, self._lexicon, visible=frozenset(visible_before))
        self._raised.update(raised_by(heard, self._lexicon))
        self._declined.update(turned_down(heard, attempt.put_forward))
        self._heard = heard
        self._history.append(f"User: {_quote_lines(utterance)}")
        self._dialogue.append(("user", utterance))
        primitive, call = validate_user_call(
            user_turn.tool_call,
            store=self.store,
            view=self.user_view,
            held_item=self.backend.held_item,
            index=self.index,
        )
        if primitive is None:
            result = ActionResult(ok=False, message=f"action not executed: {call.error}")
        else:
            result = self.backend.execute(primitive)
        if result.revealed_product:
            self._inspected[result.revealed_product] = self._details(result.revealed_product)
            self._raised.add(result.revealed_product)
        if self.backend.held_item:
            self._raised.add(self.backend.held_item)
        self._last_result = result.message
        # Every history line is sanitized once here, so observations only need clipping.
        self._history.append(
            _quote_lines(sanitize_text(f"User action: {self._describe_call(call)} -> {result.message}", 4_000))
        )

        self._observe()
        termination = self._check_termination(attempt.count, call, result, user_turn)
        record = mine.model_copy(update=dict(
            user_utterance=utterance,
            user_action=call,
            result=ExecutionResult(
                ok=result.ok,
                message=result.message,
                displacement=float(result.displacement),
                translational=bool(result.translational),
            ),
            visible_after=self.user_view.visible_ids(),
            pose_after=self._pose_tuple(),
            held_item=self.backend.held_item,
            cart=list(self.backend.cart),
            revealed=list(user_turn.revealed),
            user_marker_disclosures=user_disclosures,
            put_forward=list(attempt.put_forward),
            recommendation_attempts=attempt.count,
            tool_calls=list(self._tool_calls),
        ))  # validated parts: the assistant's by TurnRecord above, the rest built here
        self.turns.append(record)
        self._tool_calls = []

        if turn >= self.max_turns and (termination is None or (
                self.protocol == "paper" and termination != "success_cart_added")):
            termination = "turn_limit"  # the paper checks the turn limit right after the purchase
        truncated = termination == "turn_limit"
        terminated = termination is not None and not truncated
        self._done = terminated or truncated
        reward = 1.0 if result.cart_added else 0.0
        info = self._public_info()
        info.update(turn=record, termination=termination)
        return self._observation(), reward, terminated, truncated, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array'")
            return None
        if self.render_mode == "human":
            self._window.show(self.assistant_view.image)
            return None
        return self.assistant_view.image.copy()

    def close(self):
        window = getattr(self, "_window", None)
        if window is not None:
            window.close()
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()

    # ------------------------------------------------------------------ internals
    def _make_backend(self, backend: str | Backend, width: int, height: int) -> Backend:
        if not isinstance(backend, str):
            return backend
        if backend == "embedded":
            from situ_gym.backends.embedded import EmbeddedBackend

            return EmbeddedBackend(self.scene, width=width, height=height, rgb=not self.text_only)
        if backend == "unrealcv":
            from situ_gym.backends.unrealcv import UnrealCVBackend

            return UnrealCVBackend(self.scene, width=width, height=height)
        raise ValueError(f"backend must be 'embedded', 'unrealcv' or a Backend instance, got {backend!r}")

    def _observe(self) -> None:
        """Capture the user's view and mark it for both roles.

        A turn that leaves the pose as it was (talking, checking, picking up) gets the
        backend's last frame again, the very same read-only arrays: their analysis is kept,
        and with the held item unchanged the drawn views too.
        """
        frame = self.backend.capture()
        held = self.backend.held_item
        last = self._marked
        if last is not None and _same_arrays(last[0], frame):
            analysis = last[1]
            views = last[3] if last[2] == held else None
        else:
            analysis = analyse(
                frame, self.index, max_depth=self.som_max_depth, building_max_depth=self.som_building_depth
            )
            views = None
        if views is None:
            views = {role: draw(analysis, self.index, role, held_item=held, pixels=not self.text_only)
                     for role in ROLES}
        self._marked = (frame, analysis, held, views)
        self.frame = frame
        self.user_view: RoleView = views["user"]
        self.assistant_view: RoleView = views["assistant"]

    def _observation(self) -> dict[str, Any]:
        view = self.assistant_view
        held, cart = self.backend.held_item, self.backend.cart
        if not self._sends_image:
            image = {}
        elif self.ablation is None:
            image = {"som_rgb": np.array(view.image, dtype=np.uint8)}  # a new array every step, as gymnasium expects
        else:
            image = {"som_rgb": np.zeros_like(view.image)}
        if self.ablation == "no_ego_view_no_caption":
            visible = self._state_text(held, cart)
        else:
            visible = caption(view, self.index, held_item=held, cart=cart)
        return {
            **image,
            **({} if self.text_only else
               {"map": render_minimap(self.scene, self.index, self.backend.pose(), "assistant", MAP_SIZE)}),
            "pose": np.array(self._pose_tuple(), dtype=np.float32),
            "history": clip_text("\n".join(self._history)),
            "catalog": self._catalog_text if self._retriever is None
            else self._tools_text if self._tools is not None else self._retrieved_catalog(),
            "visible": sanitize_text(visible, keep="head"),
        }

    def _retrieved_catalog(self) -> str:
        """The compact catalog: entries relevant to the dialogue so far, then the navigation index."""
        ids = self._retriever.retrieve(self._dialogue, self.catalog_k)
        return sanitize_text(catalog_text(self.index, ids, title=retrieved_title(self.catalog_k)) + "\n" + self._nav_text, keep="head")

    def _public_info(self) -> dict[str, Any]:
        info = {
            "task_id": self.task.id,
            "profile_id": self.task.profile_id,
            "store": self.store,
            "ablation": self.ablation,
            "protocol": self.protocol,
            "task": self.task,  # hidden: for rewards and evaluation, never for assistants
        }
        if self._tool_handle is not None:
            info["tools"] = self._tool_handle  # catalog_view="tools": the assistant's tools
        return info

    def _pose_tuple(self) -> tuple[float, float, float]:
        pose = self.backend.pose()
        yaw = (pose.yaw + 180.0) % 360.0 - 180.0
        return (float(pose.x), float(pose.y), float(yaw))

    def _check_termination(self, attempts: int, call: ToolCall, result: ActionResult, user_turn) -> str | None:
        """Paper App. B.3, in order: purchase, recommendation exhaustion, moderator, stall."""
        self._recommendations += attempts
        if call.valid and call.name in TRANSLATIONAL_TOOLS:
            self._stalls = self._stalls + 1 if result.displacement < STALL_DISPLACEMENT else 0
        if result.cart_added:
            return "success_cart_added"
        if self._recommendations >= RECOMMENDATION_LIMIT:
            return "recommendation_exhausted"
        last_assistant = self._dialogue[-2][1] if len(self._dialogue) >= 2 else ""
        end, reason = self.moderator.should_end(
            list(self._dialogue), last_assistant, user_turn.utterance, dict(user_turn.tool_call), user_turn
        )
        if end:
            logger.debug("moderator ended the episode: %s", reason)
            return "moderator_end"
        if self._stalls >= STALL_LIMIT:
            return "motion_stall"
        return None

    def _describe_call(self, call: ToolCall) -> str:
        """The user's action as the assistant may read it: entity names, no user handles."""
        args = {}
        for key, value in call.arguments.items():
            if call.target_id is not None and key in ("item", "fixture", "store", "area"):
                args[key] = self.index.name(call.target_id)
            else:
                args[key] = value
        inner = ", ".join(f"{k}={v}" for k, v in args.items())
        return f"{call.name}({inner})"

    def _details(self, product_id: str) -> dict[str, Any]:
        p = self.index.products[product_id]
        return {
            "name": p.name,
            "category": p.category,
            "price": p.price,
            "attributes": dict(p.attributes),
            "tags": list(p.tags),
        }

    def _state_text(self, held: str | None, cart: list[str]) -> str:
        """Caption for the no-caption ablation: fixed targets only, plus hands and cart."""
        held_text = self.index.name(held) if held else "nothing"
        cart_text = "; ".join(self.index.name(p) for p in cart) or "empty"
        return f"{self._nav_text}\nHolding: {held_text}\nCart: {cart_text}"


class _HumanWindow:
    """A pygame window for ``render_mode="human"``, opened on the first frame."""

    def __init__(self):
        import os
        import sys

        try:
            import pygame
        except ImportError as exc:
            raise gym.error.DependencyNotInstalled(
                'render_mode="human" needs pygame, which is not installed: pip install "situ-gym[window]"'
            ) from exc
        self._pygame = pygame
        self._screen = None
        headless = sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        )
        if headless or os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
            gym.logger.warn(
                'render_mode="human" found no display (DISPLAY/WAYLAND_DISPLAY unset or SDL_VIDEODRIVER '
                'is a dummy): nothing will be shown; use render_mode="rgb_array" to get the frames'
            )
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # draw off screen instead of failing

    def show(self, image: np.ndarray) -> None:
        pygame = self._pygame
        if self._screen is None:
            pygame.init()
            pygame.display.set_caption("SituRec: assistant view")
            self._screen = pygame.display.set_mode((image.shape[1], image.shape[0]))
        pygame.event.pump()
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(image.swapaxes(0, 1)))
        self._screen.blit(surface, (0, 0))
        pygame.display.flip()

    def close(self) -> None:
        if self._screen is not None:
            self._pygame.display.quit()
            self._screen = None


def _shallow(value: Any) -> Any:
    """A copy of a list, dict or set (the containers a turn adds to); anything else as it is."""
    return value.copy() if isinstance(value, (list, dict, set)) else value


def _same_arrays(a: Frame, b: Frame) -> bool:
    """Whether two frames hold the very same (read-only) arrays, as a repeated capture does."""
    return a.rgb is b.rgb and a.depth is b.depth and a.seg is b.seg and a.entity_index is b.entity_index
