"""The Backend protocol: the only interface between task logic and pixels/motion.

A backend owns the physical state of one store (the user's pose, the held item, the
cart, what has been inspected) and produces egocentric frames. It speaks entity ids,
never SoM handles: the actions layer resolves handles before calling ``execute``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from situ_gym.scene.model import Scene

__all__ = ["BackendError", "Pose", "Frame", "Primitive", "ActionResult", "Backend"]


class BackendError(RuntimeError):
    """The simulator failed (dead connection, broken scene); the episode cannot go on."""


@dataclass(frozen=True)
class Pose:
    """The user's body pose. Metres and degrees; pitch > 0 looks up."""

    x: float
    y: float
    yaw: float
    pitch: float = 0.0


@dataclass
class Frame:
    """One egocentric capture; the three images agree pixel for pixel."""

    rgb: np.ndarray  # uint8 (H, W, 3)
    depth: np.ndarray  # float32 (H, W), metres along the view axis; inf where nothing
    seg: np.ndarray  # uint8 (H, W, 3) in the scene's segmentation colours
    pose: Pose
    # Optional integer (H, W) entity per pixel, agreeing with ``seg``: 0 where seg shows
    # no entity, else 1 + the entity's position in SceneIndex(scene).entities (products,
    # fixtures, stores, areas in scene order). A renderer that knows it for free (the
    # embedded one) sets it so the SoM analysis can skip decoding the seg colours.
    entity_index: np.ndarray | None = None


@dataclass(frozen=True)
class Primitive:
    """A validated user tool action, in the units a backend executes.

    Built by ``situ_gym.actions.validate`` (the only place that knows tool semantics), so
    a backend never re-checks it: ``name`` is a tool legal in the store; ``args`` holds
    ``distance`` in metres, ``angle`` in degrees, ``direction``/``approach`` as allowed
    words and ``item``/``fixture``/``store``/``area`` as entity ids; ``translational``
    says whether the action moves the body (it counts toward the motion-stall rule even
    when it fails).
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    translational: bool = False


@dataclass
class ActionResult:
    ok: bool  # executed (False: a physical precondition failed, state unchanged)
    message: str  # what happened, in words the user and the history can show
    displacement: float = 0.0  # metres the body actually moved (translational actions)
    translational: bool = False  # counts toward the motion-stall rule
    revealed_product: str | None = None  # product whose full details the user now knows
    cart_added: str | None = None  # product that entered the cart on this action


@runtime_checkable
class Backend(Protocol):
    """What the env drives. A backend that also has ``snapshot() -> state`` and
    ``restore(state)`` (the embedded one and UnrealCV do) lets ``SituRecEnv.snapshot``
    branch episodes."""

    scene: Scene

    def reset(self, pose: Pose) -> None:
        """Put the user at ``pose`` with empty hands and an empty cart."""

    def execute(self, primitive: Primitive) -> ActionResult:
        """Run one user action; never raises for an infeasible action (returns ok=False)."""

    def capture(self) -> Frame:
        """Render the user's current egocentric view."""

    def pose(self) -> Pose: ...

    @property
    def held_item(self) -> str | None: ...

    @property
    def cart(self) -> list[str]: ...

    def close(self) -> None:
        """Release resources; safe to call twice."""
