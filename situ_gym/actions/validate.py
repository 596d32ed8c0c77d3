"""Validation of user tool calls against the current view; shared argument checks.

A user tool call is ``{"name": <tool>, "arguments": {...}}`` with the user's own SoM
handles. :func:`validate_user_call` checks it against the store's legal set, the tool's
argument schema (:data:`situ_gym.actions.tools.TOOLS`) and what the user sees now, and
returns the entity-level :class:`~situ_gym.backends.base.Primitive` for the backend
(distances in metres, angles in degrees: backends do not check them again) together with the :class:`~situ_gym.records.ToolCall` for the trajectory. Bad input
never raises: it yields ``(None, ToolCall(valid=False, error=...))``.

The argument checks (:func:`check_arguments`) and target resolution
(:func:`resolve_target`) are shared with the assistant-output parser, which validates the
assistant's ``expected_user_action`` the same way with the assistant's handles.
"""

from __future__ import annotations

import math
from typing import Any

from situ_gym import jsonl
from situ_gym.actions.tools import (
    ANGLE_RANGE,
    DISTANCES,
    LEGAL_TOOLS,
    TARGET_ARGUMENT,
    TOOLS,
    TRANSLATIONAL_TOOLS,
)
from situ_gym.backends.base import Primitive
from situ_gym.records import ToolCall
from situ_gym.scene.index import SceneIndex
from situ_gym.som.types import RoleView
from situ_gym.stores import registered_stores

__all__ = [
    "validate_user_call",
    "check_arguments",
    "check_approach",
    "resolve_target",
    "render_tool_schema",
    "short_repr",
    "check_store",
    "to_primitive",
]

# Entity kind each target argument must name.
TARGET_KIND = {"item": "product", "fixture": "fixture", "store": "store", "area": "area"}

# Approaches of move_to_fixture that need a matching viewpoint on the fixture.
_SIDED_APPROACHES = ("front", "back")


def check_store(store: str) -> None:
    """Raise ValueError for a store that is not registered (a programming error)."""
    if not (isinstance(store, str) and store in registered_stores()):
        raise ValueError(f"store must be one of {registered_stores()}, got {store!r}")


def short_repr(value: Any, limit: int = 40) -> str:
    """A bounded, recursion-free repr for error messages (values may be huge or nested)."""
    if isinstance(value, str):
        text = value if len(value) <= limit else value[:limit] + "..."
        return repr(text)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        text = str(value) if value.bit_length() < 64 else "<large int>"
        return text
    if isinstance(value, float):
        return repr(value)
    return f"<{type(value).__name__}>"


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def coerce_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``arguments`` as a dict: None/missing -> {}, a JSON string holding an object is
    decoded (the OpenAI tool-call habit); anything else is an error."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    if isinstance(arguments, str):
        try:
            decoded = jsonl.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            return decoded, None
    return None, f"arguments must be an object, got {_type_name(arguments)}"


def check_arguments(
    name: str, arguments: dict[str, Any], *, skip_required: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    """Check ``arguments`` of a known tool against its schema.

    Returns the cleaned arguments (angle as float, words stripped, handles as str) and
    every error found. Target handles are only type-checked here; see
    :func:`resolve_target`. ``name`` must be a key of ``TOOLS``.
    """
    spec = TOOLS[name]
    clean: dict[str, Any] = {}
    errors: list[str] = []
    for arg in arguments:
        if arg not in spec.arguments:
            allowed = ", ".join(spec.arguments) or "none"
            errors.append(f"{name} has no argument {short_repr(arg)} (allowed: {allowed})")
    for arg in spec.required:
        if arg not in arguments and arg not in skip_required:
            errors.append(f"{name} requires argument {arg!r}")
    for arg, kind in spec.arguments.items():
        if arg not in arguments:
            continue
        value = arguments[arg]
        if kind == "angle":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                errors.append(f"{name}.angle must be a number of degrees, got {short_repr(value)}")
                continue
            lo, hi = ANGLE_RANGE
            if (isinstance(value, float) and not math.isfinite(value)) or not lo <= value <= hi:
                errors.append(f"{name}.angle must be in [{lo:g}, {hi:g}], got {short_repr(value)}")
                continue
            clean[arg] = float(value)
        elif kind == "handle":
            if isinstance(value, int) and not isinstance(value, bool):
                value = str(value)  # {"fixture": 7}: a number written without quotes
            if not isinstance(value, str) or not value.strip():
                errors.append(f"{name}.{arg} must be a handle string, got {short_repr(value)}")
                continue
            clean[arg] = value.strip()
        else:  # "distance" (the distance words) or a tuple of allowed words
            words = DISTANCES if kind == "distance" else kind
            word = value.strip().lower() if isinstance(value, str) else None
            if word not in words:
                errors.append(
                    f"{name}.{arg} must be one of {'/'.join(words)}, got {short_repr(value)}"
                )
                continue
            clean[arg] = word
    return clean, errors


def resolve_target(
    arg: str,
    handle: str,
    *,
    view: RoleView,
    index: SceneIndex | None = None,
    held_item: str | None = None,
    require_visible: bool = True,
    held_from_handles: bool = False,
) -> tuple[str | None, str | None]:
    """Resolve a target handle of ``view.role`` to an entity id.

    The handle must be in ``view.handles`` and name an entity of the kind the argument
    expects; with ``require_visible`` it must also be marked in the current frame
    (``view.visible``), except that an ``item`` may be the held item: ``held_item`` when
    given, or with ``held_from_handles`` any product handle of the view (a RoleView only
    lists marked products and the held item). Returns ``(entity_id, None)`` or
    ``(None, error)``.
    """
    role = view.role
    expected = TARGET_KIND[arg]
    entity_id = view.handles.get(handle)
    if entity_id is None:
        return None, f"{arg} handle {short_repr(handle)} is not visible in the {role}'s view"
    visible = {v.handle: v for v in view.visible}
    seen = visible.get(handle)
    if seen is None:
        for v in view.visible:  # same entity under another handle (should not happen)
            if v.entity_id == entity_id:
                seen = v
                break
    kind: str | None = seen.kind if seen is not None else None
    if kind is None and index is not None:
        try:
            kind = index.kind(entity_id)
        except KeyError:
            return (
                None,
                f"{arg} handle {short_repr(handle)} names unknown entity {short_repr(entity_id)}",
            )
    if kind is None and entity_id == held_item:
        kind = "product"
    if kind is not None and kind != expected:
        return None, f"{arg} handle {short_repr(handle)} names {_a(kind)}, not {_a(expected)}"
    if not require_visible or seen is not None:
        return entity_id, None
    if arg == "item":
        if held_item is not None and entity_id == held_item:
            return entity_id, None
        if held_from_handles and kind in (None, "product"):
            return entity_id, None
        return (
            None,
            f"item handle {short_repr(handle)} is neither visible nor held in the {role}'s view",
        )
    return None, f"{arg} handle {short_repr(handle)} is not visible in the {role}'s view"


def check_approach(name: str, approach: Any, target_id: str, index: SceneIndex) -> str | None:
    """``move_to_fixture`` front/back need that viewpoint on the fixture (App. B.2); the
    error, or None. ``nearest`` and the other tools always pass."""
    if name != "move_to_fixture" or approach not in _SIDED_APPROACHES:
        return None
    fixture = index.fixtures.get(target_id)
    if fixture is None or approach in fixture.approach:
        return None
    return (
        f"move_to_fixture approach {approach!r} is not available at {fixture.name!r} "
        f"(has {'/'.join(sorted(fixture.approach)) or 'none'})"
    )


def validate_user_call(
    call: Any,
    *,
    store: str,
    view: RoleView,
    held_item: str | None,
    index: SceneIndex | None = None,
) -> tuple[Primitive | None, ToolCall]:
    """Validate the user's tool call against the legal set, the schema and the view.

    ``view`` is the user's RoleView of the current observation and ``held_item`` the
    entity id in the user's hand. With ``index`` the target's kind is also checked for
    handles that are not marked now, and ``move_to_fixture`` front/back approaches must
    exist on the fixture. Returns ``(Primitive, ToolCall)`` for a valid call, else
    ``(None, ToolCall)`` with ``valid=False`` and the errors joined in ``error``.
    Never raises on a bad ``call``; raises ValueError only for an unknown ``store``.

    >>> from situ_gym.som.types import RoleView
    >>> import numpy as np
    >>> view = RoleView("user", np.zeros((1, 1, 3), np.uint8), handles={})
    >>> prim, tc = validate_user_call({"name": "turn", "arguments": {"direction": "left", "angle": 30}},
    ...                               store="supermarket", view=view, held_item=None)
    >>> prim
    Primitive(name='turn', args={'direction': 'left', 'angle': 30.0}, translational=False)
    >>> validate_user_call({"name": "fly"}, store="supermarket", view=view, held_item=None)[1].error
    "'fly' is not a legal tool in supermarket"
    """
    check_store(store)
    if not isinstance(call, dict):
        return None, ToolCall(
            name="",
            legal=False,
            valid=False,
            error=f"tool call must be an object, got {_type_name(call)}",
        )
    name = call.get("name")
    raw_args = call.get("arguments")
    shown_args = raw_args if isinstance(raw_args, dict) else {}
    if not isinstance(name, str):
        return None, ToolCall(
            name="",
            arguments=shown_args,
            legal=False,
            valid=False,
            error=f"tool name must be a string, got {short_repr(name)}",
        )
    name = name.strip()
    if name not in LEGAL_TOOLS[store]:
        return None, ToolCall(
            name=name[:100],
            arguments=shown_args,
            legal=False,
            valid=False,
            error=f"{short_repr(name)} is not a legal tool in {store}",
        )
    arguments, arg_error = coerce_arguments(raw_args)
    if arguments is None:
        return None, ToolCall(name=name, legal=True, valid=False, error=f"{name}: {arg_error}")
    clean, errors = check_arguments(name, arguments)
    target_id: str | None = None
    target_arg = TARGET_ARGUMENT.get(name)
    if target_arg is not None and target_arg in clean:
        target_id, error = resolve_target(
            target_arg, clean[target_arg], view=view, index=index, held_item=held_item
        )
        if error is not None:
            errors.append(error)
        else:
            clean[target_arg] = target_id
    if name == "drop_item" and held_item is None:
        errors.append("drop_item needs a held item, but the hands are empty")
    if target_id is not None and index is not None:
        error = check_approach(name, clean.get("approach"), target_id, index)
        if error is not None:
            errors.append(error)
    record = ToolCall(
        name=name,
        arguments=arguments,
        target_id=target_id,
        legal=True,
        valid=not errors,
        error="; ".join(errors) or None,
    )
    if errors:
        return None, record
    return to_primitive(name, clean), record


def to_primitive(name: str, clean: dict[str, Any]) -> Primitive:
    """The backend's form of a checked call: distance words become metres, and the
    primitive says whether the tool moves the body (the motion-stall rule counts it)."""
    args = dict(clean)
    if "distance" in args:
        args["distance"] = DISTANCES[args["distance"]]
    return Primitive(name=name, args=args, translational=name in TRANSLATIONAL_TOOLS)


def _describe_argument(arg: str, kind: object, store: str) -> str:
    if kind == "angle":
        lo, hi = ANGLE_RANGE
        return f"{arg}: degrees {lo:g}-{hi:g}"
    if kind == "distance":
        return f"{arg}: " + "|".join(f"{w} ({m:g} m)" for w, m in DISTANCES.items())
    if kind == "handle":
        what = {"item": "product", "fixture": "fixture", "store": "store", "area": "area"}[arg]
        return f"{arg}: {what} handle from your current view"
    return f"{arg}: " + "|".join(kind)  # type: ignore[arg-type]


def render_tool_schema(store: str) -> str:
    """The store's legal tools and their arguments as prompt text, one tool per line.

    >>> print(render_tool_schema("supermarket").splitlines()[0])
    - move_forward(distance: short (0.5 m)|medium (1.5 m)|long (3 m)): Walk straight ahead.
    """
    check_store(store)
    lines = []
    for name in LEGAL_TOOLS[store]:
        spec = TOOLS[name]
        args = ", ".join(_describe_argument(a, k, store) for a, k in spec.arguments.items())
        lines.append(f"- {name}({args}): {spec.description}")
    return "\n".join(lines)
