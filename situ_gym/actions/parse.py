"""Tolerant parsing and strict validation of the assistant's JSON turn (paper App. B.2).

:func:`parse_assistant_output` turns whatever text a model produced into an
:class:`~situ_gym.actions.assistant.AssistantOutput`. Parsing is tolerant: code fences,
prose around the JSON, a one-element top-level array, trailing commas and an
``arguments`` object written as a JSON string are all accepted. Validation is strict:
every schema or grounding problem becomes a short string in ``errors`` and makes the turn
invalid; findings that do not (ranking ids outside the catalog, which Catalog % counts;
``visible_now`` disagreeing with the view) go to ``warnings``. Nothing here raises for
bad text; only JSON decoding is used (never ``eval``).

Decisions (documented for the env, metrics and prompt authors):

* ``ranking`` may be absent (read as ``[]``) but must otherwise be a list of strings of
  at most ten entries; longer lists are an error and are cut to ten. Ids outside the
  catalog are warnings (``"ranking id 'x' is not in the catalog"``) and are kept as given.
* ``navigation_goal`` accepts the assistant's fixed fixture/store/area handle, the
  entity id, or the target's name (case and punctuation ignored); it may be unseen.
  In the Home Furnishings Store ``next_waypoint`` must be a visible store/area handle,
  or ``null`` when none is in view and the expected action is a free movement (turn,
  look, step) that searches for one.
* Item targets of ``expected_user_action`` must be product handles of the assistant's
  view, which by the :class:`~situ_gym.som.types.RoleView` contract lists only marked
  products and the held item; fixture/store/area targets must be marked now.
* ``view=None`` means no handle map is available (offline re-parsing): handle-valued
  fields are then not resolved and not flagged. ``no_view=True`` (the paper's ablation
  without captions) resolves fixed handles without the visibility requirement, lets
  ``pick_up_item``/``check_item`` omit the product and accepts a display name for it.
* Marker disclosure: the response may not name a marker label (the forms flagged are
  listed in :mod:`situ_gym.language.names`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING, REQUIRED_FIELDS, AssistantOutput
from situ_gym.actions.extract import (
    MAX_RESPONSE_CHARS,
    extract_json_object,
    recover_response,
    scrub_surrogates,
)
from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT
from situ_gym.actions.validate import (
    check_approach,
    check_arguments,
    check_store,
    coerce_arguments,
    resolve_target,
    short_repr,
)
from situ_gym.language.names import find_marker_disclosures, name_table, normalize_name
from situ_gym.records import ToolCall
from situ_gym.scene.index import SceneIndex
from situ_gym.som.types import RoleView
from situ_gym.stores import store_spec

__all__ = [
    "scrub_surrogates",
    "parse_assistant_output",
    "extract_json_object",
    "recover_response",
    "find_marker_disclosures",
    "resolve_product_name",
    "MAX_RESPONSE_CHARS",
    "TARGET_APPROACHES",
]

logger = logging.getLogger(__name__)

TARGET_APPROACHES = ("outside_doorway", "inside_doorway", "area")
_TOP_KEYS = ("response", "assistant_actions", "expected_user_action", "ranking")
# Untargeted user movements: with one of these expected, a Home Navigate may have no
# visible waypoint yet (next_waypoint null).
FREE_MOVES = (
    "turn",
    "look_up_down",
    "move_forward",
    "move_backward",
    "turn_and_move",
    "move_and_turn",
    "side_step",
)
_INSPECT_TOOLS = ("pick_up_item", "check_item")

def resolve_product_name(name: str, index: SceneIndex) -> tuple[str | None, str | None]:
    """Map a display name to a product id: ``(id, None)`` or ``(None, error)``.

    Exact (case-insensitive) name first, then the normalised name (case, accents and
    punctuation ignored), then a unique product whose normalised name starts with the
    given one or is contained in it (a name without its size, or with a brand added);
    loose matches need at least two words. Names over 300 characters match nothing.
    """
    if len(name) > 300:
        return None, f"display_name {short_repr(name)} matches no catalog product"
    exact = index.product_by_name(name)
    if exact is not None:
        return exact, None
    key = normalize_name(name)
    table = name_table(index, "products")
    if key in table:
        if table[key] is None:
            return None, f"display_name {short_repr(name)} matches several catalog products"
        return table[key], None
    if len(key.split()) >= 2:
        hits = {
            pid
            for norm, pid in table.items()
            if pid is not None
            and (norm.startswith(key + " ") or (" " + norm + " ") in (" " + key + " "))
        }
        if len(hits) == 1:
            return hits.pop(), None
        if len(hits) > 1:
            return None, f"display_name {short_repr(name)} matches several catalog products"
    return None, f"display_name {short_repr(name)} matches no catalog product"


_CAPTION_PREFIX = re.compile(r"^\s*\[[^\]]{1,4}\]\s*")


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _as_handle(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _entity_kind(index: SceneIndex, entity_id: str) -> str | None:
    try:
        return index.kind(entity_id)
    except KeyError:
        return None


def _resolve_nav_goal(
    value: Any, *, store: str, index: SceneIndex, view: RoleView | None
) -> tuple[str | None, str | None]:
    kinds = store_spec(store).nav_kinds
    what = " or ".join(kinds)
    handle = _as_handle(value)
    if handle is None:
        return None, f"navigation_goal must be a {what} handle or name, got {short_repr(value)}"
    if view is not None and handle in view.handles:
        eid = view.handles[handle]
        kind = _entity_kind(index, eid)
        if kind in kinds:
            return eid, None
        return (
            None,
            f"navigation_goal handle {short_repr(handle)} names {_a(kind or 'unknown entity')}, not {_a(what)}",
        )
    if handle in index.entities and _entity_kind(index, handle) in kinds:
        return handle, None
    eid = name_table(index, "nav").get(normalize_name(handle))
    if eid is not None:
        return eid, None
    return None, f"navigation_goal {short_repr(handle)} is not a {what} handle or name in {store}"


# ---------------------------------------------------------------- validation


@dataclass(frozen=True)
class _Checking:
    """What the checks read besides the output: the store, its index and the assistant's view."""

    store: str
    index: SceneIndex
    view: RoleView | None
    no_view: bool  # the paper's no-view ablation: visibility is not required


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_action(action: dict[str, Any], out: AssistantOutput, ctx: _Checking) -> None:
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in ACTION_TYPES:
        out.errors.append(f"action type {short_repr(kind)} is not one of {', '.join(ACTION_TYPES)}")
        return
    out.action_type = kind
    for name in REQUIRED_FIELDS[ctx.store].get(kind, ()):
        if name not in action:
            out.errors.append(f"{kind} requires {name}")
    if "reason" in action and not (isinstance(action["reason"], str) and action["reason"].strip()):
        out.errors.append(
            f"{kind}.reason must be a non-empty string, got {short_repr(action['reason'])}"
        )
    if kind == "Recommend":
        _check_recommend(action, out, ctx)
    elif kind == "Navigate":
        _check_navigate(action, out, ctx)


def _check_recommend(action: dict[str, Any], out: AssistantOutput, ctx: _Checking) -> None:
    visible_now = action.get("visible_now")
    if "visible_now" in action and not isinstance(visible_now, bool):
        out.errors.append(
            f"Recommend.visible_now must be true or false, got {short_repr(visible_now)}"
        )
    if "display_name" not in action:
        return
    name = action["display_name"]
    if not isinstance(name, str) or not name.strip():
        out.errors.append(
            f"Recommend.display_name must be a non-empty string, got {short_repr(name)}"
        )
        return
    # A name copied from the caption line "[a] Name (2.0 m)" keeps only the name.
    product_id, error = resolve_product_name(_CAPTION_PREFIX.sub("", name), ctx.index)
    if error is not None:
        out.errors.append(error)
        return
    out.recommended_id = product_id
    if ctx.view is not None and not ctx.no_view and visible_now is True:
        if product_id not in ctx.view.visible_ids() and product_id not in ctx.view.handles.values():
            out.warnings.append(
                f"visible_now is true but {short_repr(name)} is not visible in the assistant's view"
            )


def _check_navigate(action: dict[str, Any], out: AssistantOutput, ctx: _Checking) -> None:
    if "navigation_goal" in action:
        goal_id, error = _resolve_nav_goal(
            action["navigation_goal"], store=ctx.store, index=ctx.index, view=ctx.view
        )
        if error is not None:
            out.errors.append(error)
        out.navigation_goal_id = goal_id
    if store_spec(ctx.store).layout != "stores":
        return
    if "target_approach" in action and action["target_approach"] not in TARGET_APPROACHES:
        out.errors.append(
            f"Navigate.target_approach must be one of {'/'.join(TARGET_APPROACHES)}, "
            f"got {short_repr(action['target_approach'])}"
        )
    if "next_waypoint" not in action or action["next_waypoint"] is None:
        return  # null: see _check_null_waypoint
    handle = _as_handle(action["next_waypoint"])
    if handle is None:
        out.errors.append(
            f"Navigate.next_waypoint must be a store or area handle, got {short_repr(action['next_waypoint'])}"
        )
        return
    if ctx.view is None:
        return
    eid = ctx.view.handles.get(handle)
    kind = _entity_kind(ctx.index, eid) if eid is not None else None
    if eid is None:
        out.errors.append(
            f"next_waypoint handle {short_repr(handle)} is not visible in the assistant's view"
        )
    elif kind not in ("store", "area"):
        out.errors.append(
            f"next_waypoint handle {short_repr(handle)} names {_a(kind or 'unknown entity')}, not a store or area"
        )
    elif not ctx.no_view and eid not in ctx.view.visible_ids():
        out.errors.append(
            f"next_waypoint handle {short_repr(handle)} is not visible in the assistant's view"
        )
    else:
        approach = action.get("target_approach")
        if kind == "area" and approach in ("outside_doorway", "inside_doorway"):
            out.warnings.append(f"target_approach {approach!r} given for an area waypoint")
        elif kind == "store" and approach == "area":
            out.warnings.append("target_approach 'area' given for a store waypoint")


def _check_null_waypoint(action: dict[str, Any], expected: Any, out: AssistantOutput, *, store: str) -> None:
    """``next_waypoint: null`` says no store or area is in view yet (paper App. B.2: "if the
    storefront is not visible, turn to find it"); it is legal only when the expected user
    action is a free movement (turn, look, step), never with a targeted move."""
    if store_spec(store).layout != "stores" or action.get("type") != "Navigate":
        return
    if "next_waypoint" not in action or action["next_waypoint"] is not None:
        return
    name = expected.get("name") if isinstance(expected, dict) else None
    if name not in FREE_MOVES:
        out.errors.append(
            f"next_waypoint may be null only when the expected action is a free movement "
            f"({', '.join(FREE_MOVES)}), got {short_repr(name)}"
        )


def _check_expected(value: Any, out: AssistantOutput, ctx: _Checking) -> None:
    errors: list[str] = []
    if not isinstance(value, dict):
        out.errors.append(f"expected_user_action must be an object, got {_type_name(value)}")
        return
    name = value.get("name")
    raw_args = value.get("arguments")
    if not isinstance(name, str) or not name.strip():
        out.errors.append(f"expected_user_action.name must be a tool name, got {short_repr(name)}")
        return
    name = name.strip()
    arguments, arg_error = coerce_arguments(raw_args)
    shown = arguments if arguments is not None else {}
    out.expected_user_action = {"name": name[:100], "arguments": shown}
    legal = name in LEGAL_TOOLS[ctx.store]
    target_id: str | None = None
    if not legal:
        errors.append(
            f"expected_user_action.name {short_repr(name)} is not a legal tool in {ctx.store}"
        )
    elif arguments is None:
        errors.append(f"expected_user_action.{arg_error}")
    else:
        skip = ("item",) if ctx.no_view and name in _INSPECT_TOOLS else ()
        clean, arg_errors = check_arguments(name, arguments, skip_required=skip)
        errors.extend(arg_errors)
        target_arg = TARGET_ARGUMENT.get(name)
        if target_arg is not None and target_arg in clean and ctx.view is not None:
            handle = clean[target_arg]
            target_id, error = resolve_target(
                target_arg,
                handle,
                view=ctx.view,
                index=ctx.index,
                require_visible=not ctx.no_view,
                held_from_handles=True,
            )
            if (
                error is not None
                and ctx.no_view
                and target_arg == "item"
                and handle not in ctx.view.handles
            ):
                target_id, error = resolve_product_name(handle, ctx.index)
            if error is None and target_id is not None:
                error = check_approach(name, clean.get("approach"), target_id, ctx.index)
            if error is not None:
                errors.append(error)
    out.expected_target_id = target_id
    out.errors.extend(errors)
    out.expected_call = ToolCall(
        name=name[:100],
        arguments=shown,
        target_id=target_id,
        legal=legal,
        valid=not errors,
        error="; ".join(errors) or None,
    )


def _check_ranking(value: Any, out: AssistantOutput, *, index: SceneIndex) -> None:
    if not isinstance(value, list):
        out.errors.append(
            f"ranking must be a list of at most {MAX_RANKING} product ids, got {_type_name(value)}"
        )
        return
    if len(value) > MAX_RANKING:
        out.errors.append(
            f"ranking must be a list of at most {MAX_RANKING} product ids, got {len(value)}"
        )
    entries = value[:MAX_RANKING]
    bad = [v for v in entries if not isinstance(v, str)]
    if bad:
        out.errors.append(f"ranking entries must be product id strings, got {short_repr(bad[0])}")
    out.ranking = [v[:200] for v in entries if isinstance(v, str)]
    for pid in out.ranking:
        if pid not in index.products:
            out.warnings.append(f"ranking id {short_repr(pid)} is not in the catalog")


def parse_assistant_output(
    text: str,
    *,
    store: str,
    index: SceneIndex,
    view: RoleView | None,
    no_view: bool = False,
) -> AssistantOutput:
    """Parse one assistant turn tolerantly and validate it strictly.

    ``view`` is the assistant's own RoleView of the current observation (its handles);
    see the module docstring for the rules and decisions. Never raises on bad ``text``
    (a non-string is reported as an error too); raises ValueError only for an unknown
    ``store``. Typical use::

        out = parse_assistant_output(text, store="supermarket", index=index, view=view)
        out.valid, out.errors, out.response, out.recommended_id, out.expected_call
    """
    check_store(store)
    ctx = _Checking(store, index, view, no_view)
    if not isinstance(text, str):
        return AssistantOutput(
            raw="", errors=[f"assistant output must be text, got {_type_name(text)}"]
        )
    text = scrub_surrogates(text)
    out = AssistantOutput(raw=text)
    try:
        obj, error = extract_json_object(text)
    except RecursionError:  # pragma: no cover - bounded above; kept as a last guard
        obj, error = None, "no JSON object found in the output"
    obj = scrub_surrogates(obj)  # JSON escapes can still decode to lone surrogates
    out.response = scrub_surrogates(recover_response(text, obj))
    if obj is None:
        out.errors.append(error or "no JSON object found in the output")
        _check_disclosure(out, index=index, view=view)
        return out

    if "response" not in obj:
        out.errors.append("missing response")
    elif not isinstance(obj["response"], str):
        out.errors.append(f"response must be a string, got {_type_name(obj['response'])}")
    elif not obj["response"].strip():
        out.errors.append("response is empty")
    elif len(obj["response"].strip()) > MAX_RESPONSE_CHARS:
        out.warnings.append(f"response cut to {MAX_RESPONSE_CHARS} characters")

    actions = obj.get("assistant_actions")
    if "assistant_actions" not in obj:
        out.errors.append("missing assistant_actions")
    elif isinstance(actions, dict):
        out.errors.append("assistant_actions must be a list holding one action, got an object")
        out.action = actions
    elif not isinstance(actions, list):
        out.errors.append(
            f"assistant_actions must be a list holding one action, got {_type_name(actions)}"
        )
    elif len(actions) != 1:
        out.errors.append(f"assistant_actions must hold exactly one action, got {len(actions)}")
        if actions and isinstance(actions[0], dict):
            out.action = actions[0]
    elif not isinstance(actions[0], dict):
        out.errors.append(f"assistant_actions[0] must be an object, got {_type_name(actions[0])}")
    else:
        out.action = actions[0]
    if out.action is not None:
        _check_action(out.action, out, ctx)
        _check_null_waypoint(out.action, obj.get("expected_user_action"), out, store=store)

    if "expected_user_action" not in obj or obj["expected_user_action"] is None:
        out.errors.append("missing expected_user_action")
    else:
        _check_expected(obj["expected_user_action"], out, ctx)

    if "ranking" in obj:
        _check_ranking(obj["ranking"], out, index=index)

    tool_calls = obj.get("tool_calls")
    if tool_calls:
        out.errors.append("tool_calls must be empty: the assistant does not call tools")

    _check_disclosure(out, index=index, view=view)
    if out.errors:
        logger.debug("invalid assistant output: %s", "; ".join(out.errors))
    return out


def _check_disclosure(out: AssistantOutput, *, index: SceneIndex, view: RoleView | None) -> None:
    handles = view.handles if view is not None else None
    for marker in find_marker_disclosures(out.response, handles=handles, index=index)[:5]:
        out.errors.append(f"response discloses marker label {marker!r}")
