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

With the compact observation (``SituRecEnv(catalog_view="retrieved")``, recognised by its
catalog title, so the env keyword alone sets it for training and evaluation alike) the
catalog changes as the dialogue goes on: the system message holds what the first
observation lists (the navigation index; no product is relevant before anyone speaks) and
each user message adds the retrieved entries the conversation has not shown yet, so every
entry appears once and the conversation still only grows. Its user messages are compact
too, so that long episodes fit a small context (SmolLM2: 8,192 tokens): the assistant's
own words are not repeated (its JSON turn is already in the conversation); the caption
lists only the visible products whose catalog entries the conversation holds, by id (a
count for the others), and fixtures, stores and areas by handle only (the navigation
index names them and has their contents and approaches); catalog entries give their
location as a navigation handle; an unchanged pose and caption are not repeated. Its
system message says once what the turns leave out and writes the navigation index one
line per fixture or store, and its ranking asks for as many ids as a turn retrieves
(every id is about eight SmolLM2 tokens, every turn). With the full catalog the system
message and the turns are exactly as before.

``Conversation`` keeps the token ids themselves as the source of truth (model tokens are
appended verbatim, never re-rendered), so the same episode gives byte-identical ids in
training and evaluation. ``render_messages``/``render_prompt`` give the first turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from agents.obs_text import catalog_lines, parse_nav_targets
from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING, REQUIRED_FIELDS
from situ_gym.actions.tools import LEGAL_TOOLS, TOOLS
from situ_gym.env import ABLATIONS
from situ_gym.retrieval import RETRIEVED_TITLE, retrieved_k
from situ_gym.stores import PAPER_STORES, registered_stores, store_spec

__all__ = [
    "STORES",
    "ABLATIONS",
    "check_ablation",
    "system_prompt",
    "turn_text",
    "new_catalog_lines",
    "catalog_names",
    "is_compact",
    "compact_index",
    "ranking_size",
    "state_text",
    "compact_caption",
    "compact_entry",
    "new_history",
    "render_messages",
    "render_prompt",
    "chat_joiners",
    "turn_end_ids",
    "Conversation",
]

STORES = PAPER_STORES  # the stores a tokenizer corpus covers (train.tiny); any registered store prompts


def _check_store(store: str) -> None:
    if store not in registered_stores():
        raise ValueError(f"store must be one of {registered_stores()}, got {store!r}")


def _tool_line(name: str, terse: bool = False) -> str:
    spec = TOOLS[name]
    args = []
    for arg, kind in spec.arguments.items():
        if terse and (kind in ("handle", "angle", "distance") or tuple(kind) == ("left", "right")):
            args.append(arg)  # its values are said once, in _TERSE_ARGUMENTS
        elif kind == "handle":
            args.append(f"{arg}=<your handle>")
        elif kind == "angle":
            args.append(f"{arg}=<degrees 1-180>")
        elif kind == "distance":
            args.append(f"{arg}=short|medium|long")
        else:
            args.append(f"{arg}={'|'.join(kind)}")
    return f"- {name}({', '.join(args)}): {spec.description}"


_TERSE_ARGUMENTS = (
    "(item, fixture, store, area: one of your handles; distance: short|medium|long;"
    " angle: degrees 1-180; direction: left|right)"
)
# The compact view's user messages leave out what the rules can say once.
_COMPACT_MESSAGES = (
    "User messages bring the new events, the shopper's position and view, and catalog entries"
    " not shown before (id | name | category | price | location handle | attributes). Visible"
    " products appear by handle and id when the conversation has their entry, the others as a count;"
    " a Holding line only while the shopper holds one; the cart"
    " is empty until a purchase ends the episode."
)


NO_VIEW = "no_ego_view"  # App. D.4 "w/o EVV": no image, the textual caption kept
NO_CAPTION = "no_ego_view_no_caption"  # "w/o EVV & Textual Caption": neither, a static index instead


def check_ablation(ablation: object) -> str | None:
    """``ablation`` if it names one of the env's input conditions; a ValueError otherwise."""
    if ablation is None or type(ablation) is str and ablation in ABLATIONS:
        return ablation  # type: ignore[return-value]
    raise ValueError(f"ablation must be one of {ABLATIONS}, got {ablation!r}")


# App. D.4: what the assistant is told it sees under each ablation (replaces the sentence
# about sharing the view). Under the no-caption condition the prompt also drops the
# requirement to use identifiers of the current view and allows pickup suggestions without
# a product identifier (see _handle_rules), which the env's parser accepts (no_view=True).
_SEES = {
    None: "You and the shopper share the shopper's first-person view; the shopper moves, you guide them by talking.",
    NO_VIEW: "The shopper moves, you guide them by talking. You get no image of the shopper's first-person"
             " view: rely on its textual caption, which lists what is in view with your handles.",
    NO_CAPTION: "The shopper moves, you guide them by talking. You do not see the shopper's first-person"
                " view, neither as an image nor as a caption: you know where the shopper stands, the catalog"
                " with its location index, the dialogue and what the shopper holds and has in the cart.",
}
_COMPACT_MESSAGES_NO_CAPTION = (
    "User messages bring the new events, the shopper's position, what the shopper holds and catalog"
    " entries not shown before (id | name | category | price | location handle | attributes); the cart"
    " is empty until a purchase ends the episode."
)


def _handle_rules(store: str, ablation: str | None) -> str:
    """The first two handle rules: which handles exist and which ones a target may use."""
    targets = store_spec(store).prompt.targets
    if ablation == NO_CAPTION:
        inspect = store_spec(store).prompt.inspect.split(" ", 1)[0]
        return (
            f"- Use only YOUR fixed handles: {targets}, as the navigation index lists them; every one is"
            " valid, in view or not. You see no product handles: name products by their catalog name.\n"
            "- Targets in expected_user_action may be any handle of the navigation index. For a product"
            f" write its catalog name as item; {inspect} may leave item out (\"arguments\": {{}}) when"
            " you cannot tell which product the shopper will pick."
        )
    where = "the caption lists now" if ablation == NO_VIEW else "of the current view"
    seen = "listed in the caption now" if ablation == NO_VIEW else "visible now"
    return (
        f"- Use only YOUR handles: product letters ([a], [b], ...) {where} (they change every turn) and {targets}.\n"
        f"- Targets in expected_user_action must be {seen} (or the held product)."
    )


@lru_cache(maxsize=24)
def _rules(store: str, ranking_ids: int = MAX_RANKING, compact: bool = False, ablation: str | None = None) -> str:
    """The assistant's rules; ``compact``: for the compact view (tool arguments said once, the
    user messages' layout explained); ``ablation``: the App. D.4 input condition (None: the
    full view, the rules as they always were)."""
    words = store_spec(store).prompt
    required = REQUIRED_FIELDS[store]
    action_lines = []
    for action in ACTION_TYPES:
        fields = required.get(action, ())
        extra = f" (also requires: {', '.join(fields)})" if fields else ""
        action_lines.append(f"- {action}{extra}")
    tools = "\n".join(_tool_line(name, compact) for name in LEGAL_TOOLS[store])
    layout = ""
    if compact:
        tools = f"{_TERSE_ARGUMENTS}\n{tools}"
        layout = f"- {_COMPACT_MESSAGES_NO_CAPTION if ablation == NO_CAPTION else _COMPACT_MESSAGES}\n"
    example = json.dumps(store_spec(store).prompt.example, ensure_ascii=False)
    waypoint = "of the navigation index" if ablation == NO_CAPTION else "visible NOW"
    nav_extra = (
        f" In this store Navigate also names next_waypoint (a store or area handle {waypoint}, the"
        " immediate target) and target_approach (outside_doorway or inside_doorway)."
        if store_spec(store).layout == "stores"
        else ""
    )
    visible_now = {
        None: "visible_now is true only if it is in the current view",
        NO_VIEW: "visible_now is true only if the caption lists it now",
        NO_CAPTION: "visible_now is false, since you cannot see the view (true only for the product the shopper holds)",
    }[ablation]
    return f"""You are a shopping assistant in {words.place}. {_SEES[ablation]} Find out what they need, guide them to it and recommend suitable catalog products. The shopper's goals and budget are private: ask.

Each turn, reply with ONE JSON object and nothing else:
{{"response": "<what you say to the shopper>",
 "assistant_actions": [<exactly one dialogue action>],
 "expected_user_action": {{"name": "<tool>", "arguments": {{...}}}},
 "ranking": [<up to {ranking_ids} catalog product ids, best first>]}}

Dialogue action types (each is {{"type": ...}} plus the fields listed):
{chr(10).join(action_lines)}
Recommend: display_name is the product's catalog name, {visible_now}, reason says why it fits. Navigate: navigation_goal is a navigation-target handle; the final goal may be out of sight.{nav_extra}

expected_user_action is the one physical action you expect the shopper to take next, one of:
{tools}

Handle rules:
{_handle_rules(store, ablation)}
- Never say a handle, a product id or words like JSON or ranking to the shopper; call things by name.
- The ranking holds catalog ids only (e.g. {store_spec(store).prompt.example['ranking'][0]}), never handles.
- The shopper inspects products with {words.inspect}; they buy with add_to_cart.
{layout}
Example:
{example}"""


def system_prompt(store: str, catalog: str, *, ablation: str | None = None) -> str:
    """The system message: the assistant's rules for ``store`` followed by the catalog text.

    In the compact view the ranking asks for as many ids as a turn retrieves, and the
    navigation index is written in about half the tokens (``compact_index``). ``ablation``
    (App. D.4) changes only the rules: what the assistant sees and which handles it may use.
    """
    _check_store(store)
    ablation = check_ablation(ablation)
    if not catalog.startswith(RETRIEVED_TITLE):
        return f"{_rules(store, ablation=ablation)}\n\n{catalog.strip()}"
    head, _, _ = catalog.partition(f"\n{_INDEX_TITLE}")
    rules = _rules(store, ranking_size(catalog), compact=True, ablation=ablation)
    return f"{rules}\n\n{head.strip()}\n{compact_index(catalog)}"


_INDEX_TITLE = "Navigation targets ("


def ranking_size(catalog: str) -> int:
    """How many ids a ranking should hold: ``MAX_RANKING``, or in the compact view the number
    of entries retrieved per turn (each id costs SmolLM2 about eight tokens, every turn)."""
    k = retrieved_k(catalog)
    return MAX_RANKING if k is None else min(MAX_RANKING, k)


def compact_index(catalog: str) -> str:
    """The navigation index of ``catalog`` as the compact view's system message writes it.

    One line per fixture or store: ``[handle] name (x, y)``, a fixture's approaches joined
    by ``/``, a store's display areas after it (``[2a] Desks (19.1, 32.8)``, the store's
    name dropped from the area's). Kinds and the stores' two approaches are left out: the
    names say the kind, and the rules name the doorway approaches.
    """
    targets = parse_nav_targets(catalog)
    areas: dict[str, list] = {}
    for t in targets:
        if t.kind.startswith("area of "):
            areas.setdefault(t.kind[len("area of ") :], []).append(t)
    lines = []
    for t in targets:
        if t.kind.startswith("area of "):
            continue
        line = f"[{t.handle}] {t.name} ({t.x:.1f}, {t.y:.1f})"
        if t.kind == "store":
            inside = [f"[{a.handle}] {a.name.removeprefix(f'{t.name} - ')} ({a.x:.1f}, {a.y:.1f})"
                      for a in areas.pop(t.name, [])]
            line += f" areas: {'; '.join(inside)}" if inside else ""
        else:
            line += " " + "/".join(t.approaches)
        lines.append(line)
    # Areas of a store the index does not list keep their own line.
    lines.extend(f"[{a.handle}] {a.name} ({a.x:.1f}, {a.y:.1f})" for listed in areas.values() for a in listed)
    return "Navigation targets ([handle] name (x, y) approaches):\n" + "\n".join(lines)


def new_history(history: str, seen: str) -> str:
    """The history lines added since ``seen`` (the previous observation's history)."""
    if seen and history.startswith(seen):
        return history[len(seen) :].lstrip("\n")
    return history


def _pose_text(pose: Any, compact: bool = False) -> str:
    x, y, yaw = (float(v) for v in np.asarray(pose, dtype=np.float64).reshape(-1)[:3])
    if compact:  # the navigation index's own notation
        return f"Shopper at ({x:.1f}, {y:.1f}), facing {yaw:.0f} deg"
    return f"Shopper pose: x={x:.2f} m, y={y:.2f} m, facing {yaw:.0f} deg"


def is_compact(observation: dict[str, Any]) -> bool:
    """Whether ``observation`` is the compact (retrieved-catalog) view."""
    return str(observation.get("catalog", "")).startswith(RETRIEVED_TITLE)


def _compact_history(lines: str, names: Mapping[str, str]) -> str:
    """History lines minus the assistant's utterances (and their indented continuations);
    in executed-action lines every name in ``names`` (name -> id or handle) is replaced."""
    kept, skipping = [], False
    longest_first = sorted(names, key=len, reverse=True)
    for line in lines.splitlines():
        if line.startswith("Assistant: "):
            skipping = True
            continue
        if skipping and line.startswith("  "):
            continue
        skipping = False
        if line.startswith("User action: "):
            for name in longest_first:
                if name in line:
                    line = line.replace(name, names[name])
        kept.append(line)
    return "\n".join(kept)


_PRODUCT_LINE = re.compile(r"^\[[^\]]+\] (.+) \([0-9.]+ m\)$")
_HOLDING = re.compile(r"^Holding: (\[[^\]]+\] )?(.+)$")
_SIDE = re.compile(r" \((front|back)\)$")


def compact_entry(line: str, handles: Mapping[str, str]) -> str:
    """A catalog line with its location as the navigation handle (``[12] (front)``, ``[3b]``).

    ``handles`` maps target names to handles (the navigation index, which the system
    message holds); a location not in it is kept as written.
    """
    parts = line.split(" | ")
    if len(parts) != 6:
        return line
    side = _SIDE.search(parts[4])
    places = [p.strip() for p in _SIDE.sub("", parts[4]).split(" / ")]
    handle = handles.get(places[-1])
    if handle is not None:
        parts[4] = f"[{handle}]" + (f" ({side.group(1)})" if side else "")
    parts[5] = _grouped_attributes(parts[5])
    return " | ".join(parts)


def _grouped_attributes(text: str) -> str:
    """``feature:a; feature:b; size:c`` -> ``feature:a, b; size:c`` (one key per kind)."""
    groups: dict[str, list[str]] = {}
    for item in text.split("; "):
        key, sep, value = item.partition(":")
        if not sep:
            return text  # not key:value labels: keep as written
        groups.setdefault(key, []).append(value)
    return "; ".join(f"{key}:{', '.join(values)}" for key, values in groups.items())


_DEFAULT_STATE = frozenset({"Holding: nothing", "Cart: empty"})


def compact_caption(visible: str, known: Mapping[str, str]) -> str:
    """The caption with only the products in ``known`` (name -> id), named by id, and a count
    of the others; fixtures, stores and areas as one line of handles (the navigation index
    in the system message names them and lists their contents and approaches)."""
    out: list[str] = []
    section, hidden, handles = "", 0, []

    def flush() -> None:
        nonlocal hidden, handles
        if hidden:
            out.append(f"(+{hidden} other{'s' if hidden > 1 else ''})")
        if handles:
            out.append(f"{section} {' '.join(handles)}")
        hidden, handles = 0, []

    for line in visible.strip().splitlines():
        if line.endswith(":") and not line.startswith("["):
            flush()
            section = line
            if section == "Visible products:":
                out.append(line)
            continue
        if section == "Visible products:" and line.startswith("["):
            m = _PRODUCT_LINE.match(line)
            if m and m.group(1) not in known:
                hidden += 1
                continue
            if m:
                line = line.replace(f"] {m.group(1)} (", f"] {known[m.group(1)]} (", 1)
        elif section and line.startswith("["):
            handles.append(line.split("]", 1)[0] + "]")
            continue
        else:
            flush()
            section = ""
            if line in _DEFAULT_STATE:
                continue  # the rules say so once
            held = _HOLDING.match(line)
            if held and held.group(2) in known:
                line = f"Holding: {held.group(1) or ''}{known[held.group(2)]}"
        out.append(line)
    flush()
    return "\n".join(out)


def catalog_names(observation: dict[str, Any]) -> dict[str, str]:
    """Product id -> name of the catalog entries ``observation`` lists."""
    return {pid: line.split(" | ")[1].strip() for pid, line in catalog_lines(str(observation.get("catalog", ""))).items()}


def new_catalog_lines(observation: dict[str, Any], shown: Mapping[str, str]) -> list[str]:
    """Catalog lines of ``observation`` whose product ids are not in ``shown`` (in listed order);
    in the compact view with locations as navigation handles (``compact_entry``)."""
    text = str(observation.get("catalog", ""))
    lines = [line for pid, line in catalog_lines(text).items() if pid not in shown]
    if lines and is_compact(observation):
        handles = {t.name: t.handle for t in parse_nav_targets(text)}
        lines = [compact_entry(line, handles) for line in lines]
    return lines


_NO_CAPTION_STATE = "No view of the store (every handle of the navigation index above is valid):"


def _without_index(visible: str) -> str:
    """The no-caption ablation's ``visible`` minus its static navigation index (title and
    target lines): the system message already holds that index verbatim, and repeating
    about 2,700 characters every turn would fill a small model's context."""
    return "\n".join(line for line in visible.splitlines()
                     if not line.startswith(_INDEX_TITLE) and not parse_nav_targets(line))


def state_text(observation: dict[str, Any], shown: Mapping[str, str] | None = None, *,
               ablation: str | None = None) -> str:
    """Pose and caption as a prompt shows them: verbatim, or compacted in the compact view.

    Under the no-caption ablation there is no caption: the held item and the cart, after a
    line that says so."""
    view = str(observation.get("visible", "")).strip()
    compact = is_compact(observation)
    title = "Current view:"
    if check_ablation(ablation) == NO_CAPTION:
        view, title = _without_index(view).strip(), _NO_CAPTION_STATE
    if compact:
        known = {name: pid for pid, name in {**(shown or {}), **catalog_names(observation)}.items()}
        view = compact_caption(view, known)
    return f"{_pose_text(observation['pose'], compact)}\n\n{title}\n{view}"


def turn_text(
    observation: dict[str, Any],
    seen_history: str = "",
    shown: Mapping[str, str] | None = None,
    previous_state: str | None = None,
    *,
    ablation: str | None = None,
) -> str:
    """One user message: new dialogue lines, pose and caption of ``observation``.

    ``shown``: id -> name of the products whose catalog lines the conversation holds; the
    observation's other catalog entries are appended (compact view). ``None`` (the first
    turn, whose catalog is in the system message) appends none. ``previous_view``: the
    ``state_text`` the conversation showed last; in the compact view an unchanged pose and
    caption are not repeated. ``ablation``: the App. D.4 input condition (``state_text``).
    """
    compact = is_compact(observation)
    lines = new_history(str(observation.get("history", "")), seen_history).strip()
    if compact:
        # Products the conversation lists are named by id, places by their handles.
        names = {t.name: f"[{t.handle}]" for t in parse_nav_targets(str(observation.get("catalog", "")))}
        names.update({name: pid for pid, name in {**(shown or {}), **catalog_names(observation)}.items()})
        lines = _compact_history(lines, names).strip()
    if not lines:
        lines = "(the conversation starts; you speak first)" if not seen_history else "(nothing new)"
    entries = new_catalog_lines(observation, shown) if shown is not None else []
    state = state_text(observation, shown, ablation=ablation)
    if compact and previous_state is not None and state == previous_state:
        state = "Shopper pose and view: unchanged since the last turn"
    text = f"New events:\n{lines}\n\n{state}"
    if entries:
        columns = "" if compact else " (id | name | category | price | location | attributes)"
        text += f"\n\nMore catalog entries relevant now{columns}:\n" + "\n".join(entries)
    return text


def render_messages(observation: dict[str, Any], store: str, *, image: bool = False,
                    ablation: str | None = None) -> list[dict]:
    """The first turn's chat messages: [system, user].

    With ``image=True`` the user content is a list with an image entry first (the SoM
    view ``observation["som_rgb"]``, passed to the processor separately) and the text.
    ``ablation``: the App. D.4 input condition; the caller sends no image under one.
    """
    text = turn_text(observation, ablation=ablation)
    user: Any = [{"type": "image"}, {"type": "text", "text": text}] if image else text
    return [
        {"role": "system", "content": system_prompt(store, str(observation["catalog"]), ablation=ablation)},
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

    def __init__(self, tokenizer: Any, store: str, observation: dict[str, Any], *,
                 ablation: str | None = None):
        self.tokenizer = tokenizer
        self.store = store
        self.ablation = check_ablation(ablation)  # App. D.4: the rules and every turn follow it
        messages = render_messages(observation, store, ablation=self.ablation)
        self.prompt_text = render_prompt(tokenizer, messages)
        self.prompt_ids: list[int] = tokenizer(self.prompt_text, add_special_tokens=False)["input_ids"]
        self.completion_ids: list[int] = []
        self.env_mask: list[int] = []  # 1 = model token, 0 = environment token
        self.turn_spans: list[tuple[int, int]] = []  # model-token spans in completion_ids
        self._seen_history = str(observation.get("history", ""))
        self.shown_products: dict[str, str] = catalog_names(observation)  # id -> name, in the conversation
        self._last_state = state_text(observation, self.shown_products, ablation=self.ablation)
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
        content = turn_text(observation, self._seen_history, self.shown_products, self._last_state,
                            ablation=self.ablation)
        return close + opening.replace(_PROBE_U, content)

    def add_observation(self, observation: dict[str, Any]) -> list[int]:
        """Append the env's next turn (env_mask 0); returns the appended ids."""
        text = self.env_text(observation)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        self.completion_ids.extend(ids)
        self.env_mask.extend([0] * len(ids))
        self._seen_history = str(observation.get("history", ""))
        self._last_state = state_text(observation, self.shown_products, ablation=self.ablation)
        self.shown_products.update(catalog_names(observation))
        return ids
