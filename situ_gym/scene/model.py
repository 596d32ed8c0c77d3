"""Typed records of a store, its catalog, shopper profiles and shopping tasks.

Conventions used by every layer:

* Plan coordinates are metres: ``x`` east, ``y`` north, ``z`` up; the floor is ``z = 0``.
* ``yaw`` is degrees, counter-clockwise from +x (0 faces east, 90 faces north).
* Footprints are axis-aligned rectangles ``(xmin, ymin, xmax, ymax)``.
* Every product, fixture, store, area and waypoint has a stable ``id`` unique in its
  scene. Segmentation colours are unique per product (shared by its instances) and per
  fixture / store / area; walls and floor use the reserved colours below.
* Attribute labels ("tags") are ``"key:value"`` strings such as ``"diet:vegan"`` or
  ``"material:oak"``; task preferences are expressed with the same labels.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from situ_gym.stores import PAPER_STORES

__all__ = [
    "BACKGROUND_COLOR",
    "FLOOR_COLOR",
    "WALL_COLOR",
    "STORE_KINDS",
    "FIXTURE_KINDS",
    "Rect",
    "MAX_EXTENT",
    "MAX_YAW",
    "MAX_PRICE",
    "Pose2",
    "Instance",
    "Product",
    "Fixture",
    "Area",
    "Store",
    "Waypoint",
    "Wall",
    "Layout",
    "Scene",
    "Interaction",
    "Profile",
    "DisclosureItem",
    "AcceptancePolicy",
    "Task",
    "TaskBank",
]

# Reserved segmentation colours (never used by an entity).
BACKGROUND_COLOR = (0, 0, 0)
FLOOR_COLOR = (8, 8, 8)
WALL_COLOR = (248, 248, 248)

STORE_KINDS = PAPER_STORES  # SituRecBench's two stores; others register (situ_gym.stores)
StoreKind = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{1,39}$")]  # a StoreSpec id
FIXTURE_KINDS = ("shelf", "chest_freezer", "upright_freezer", "open_cooler", "produce_stand")

# Sanity bounds of the numbers in an asset file. Plan coordinates, lengths and heights are
# within +-MAX_EXTENT metres (a store is tens of metres across), yaws within +-MAX_YAW
# degrees, prices and budgets up to MAX_PRICE. A value far beyond is corruption, and
# arithmetic on it fails or cannot finish: an edge 1e20 m long sampled every 5 cm, a price
# of 1e308 counted in cents.
MAX_EXTENT = 1_000.0
MAX_YAW = 3_600.0
MAX_PRICE = 10_000_000.0
Metres = Annotated[float, Field(ge=-MAX_EXTENT, le=MAX_EXTENT)]
Degrees = Annotated[float, Field(ge=-MAX_YAW, le=MAX_YAW)]
Money = Annotated[float, Field(gt=0, le=MAX_PRICE)]

Color = tuple[int, int, int]
Rect = tuple[Metres, Metres, Metres, Metres]  # xmin, ymin, xmax, ymax


# A display name: something a shopper can read (not empty, not only spaces).
Name = Annotated[str, Field(min_length=1, pattern=r"\S")]


class _Record(BaseModel):
    # No Infinity or NaN anywhere: an infinite price or position breaks budgets and geometry.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Pose2(_Record):
    """A floor position with a facing, used for approach points and the start pose."""

    x: Metres
    y: Metres
    yaw: Degrees = 0.0


class Instance(_Record):
    """One placed copy of a product: an axis-aligned box standing at ``position``."""

    id: str
    position: tuple[Metres, Metres, Metres]  # centre of the box's bottom face
    size: tuple[Metres, Metres, Metres]  # extent along x, y, z in metres
    facing: Degrees = 0.0  # yaw the product's front faces


class Product(_Record):
    id: str
    name: Name  # display name, e.g. "Harbor Catch Plain Frozen Cod Fillets, 1 lb"
    brand: Name
    category: Name  # specific type, e.g. "frozen fish", "table lamp"
    group: str  # broad family, e.g. "frozen foods", "lighting"
    price: Money
    attributes: dict[str, str | list[str]]  # human-readable details revealed on inspection
    tags: list[str]  # "key:value" labels used for preferences and relevance
    color: Color
    fixture_id: str | None = None  # "fixtures" layout: the fixture holding it
    store_id: str | None = None  # "stores" layout: the store holding it
    area_id: str | None = None  # "stores" layout: the display area holding it
    instances: list[Instance]


class Fixture(_Record):
    """A Supermarket navigation target (shelf, freezer, cooler, produce stand)."""

    id: str
    name: Name
    kind: Literal["shelf", "chest_freezer", "upright_freezer", "open_cooler", "produce_stand"]
    footprint: Rect
    height: Metres
    levels: list[Metres]  # heights of the boards / bins products stand on
    color: Color
    front_yaw: Degrees  # direction the front faces (products face this way)
    approach: dict[str, Pose2]  # "front" and, where the fixture has one, "back"
    product_ids: list[str]


class Area(_Record):
    """A Home Furnishings display area inside a store."""

    id: str
    store_id: str
    name: Name
    footprint: Rect
    color: Color
    approach: Pose2  # fixed point within the area, facing its products
    product_ids: list[str]


class Store(_Record):
    """A Home Furnishings shop with a doorway in its front wall."""

    id: str
    name: Name
    theme: str
    footprint: Rect
    wall_height: Metres
    color: Color
    doorway: Rect  # the opening as a thin rect in the front wall
    approach: dict[str, Pose2]  # "outside_doorway", "inside_doorway"
    area_ids: list[str]
    product_ids: list[str]


class Waypoint(_Record):
    id: str
    x: Metres
    y: Metres
    neighbors: list[str]


class Wall(_Record):
    """A solid box. ``owner`` is the store whose storefront it forms, if any."""

    footprint: Rect
    height: Metres
    owner: str | None = None


class Layout(_Record):
    bounds: Rect  # the walkable hall
    walls: list[Wall]
    start: Pose2
    eye_height: Metres = 1.6
    body_radius: Metres = 0.3


class Scene(_Record):
    """Everything physical about one store; loaded from ``scene.json``."""

    store: StoreKind
    name: Name
    layout: Layout
    products: list[Product]
    fixtures: list[Fixture] = []  # "fixtures" layout only
    stores: list[Store] = []  # "stores" layout only
    areas: list[Area] = []  # "stores" layout only
    waypoints: list[Waypoint]


class Interaction(_Record):
    """How a shopper behaves in conversation and in the store (App. A.3)."""

    behavior_style: str  # e.g. "decisive", "exploratory", "cautious", "skeptical", "chatty"
    patience: int = Field(ge=1)  # unproductive turns tolerated before giving up
    price_sensitivity: Literal["low", "medium", "high"]
    explanation_seeking: Literal["low", "medium", "high"]
    substitute_willingness: Literal["low", "medium", "high"]
    navigation_following: float = Field(ge=0.0, le=1.0)  # probability of following guidance
    talkativeness: Literal["low", "medium", "high"]


class Profile(_Record):
    id: str
    name: Name
    persona: str
    gender: str
    demographics: dict[str, str]  # age_group, employment, occupation, household, housing, transport, storage
    big_five: dict[str, float]  # openness ... neuroticism, each in [0, 1]
    interaction: Interaction


class DisclosureItem(_Record):
    """One key detail of the goal, revealed at most one per turn in this order."""

    kind: Literal["category", "use", "budget", "avoid", "need"]
    text: str  # how the shopper says it, e.g. "something for breakfast with the kids"
    value: str | float | None = None  # tag, category or budget the detail stands for


class AcceptancePolicy(_Record):
    inspect_before_buying: bool
    explanations_needed: int = Field(ge=0)  # Explain/Compare turns wanted before buying
    accept_substitutes: bool  # may a reference item other than the target be bought
    rejection_style: Literal["reason", "clarify", "compare"]


class Task(_Record):
    id: str
    store: StoreKind
    profile_id: str
    theme: str
    request: str  # the private goal in the shopper's words
    category: Name  # target's category (what the shopper opens with)
    required_tags: list[str]
    avoided_tags: list[str]
    target_product_id: str
    disclosure: list[DisclosureItem]
    acceptance: AcceptancePolicy
    budget_tier: Literal["strict", "moderate", "flexible"]
    budget: Money
    reference_set: list[str]  # A_e: every product meeting requirements and budget
    subset: int = Field(ge=0, le=3)  # profile-stratified partition for mean +- SD


class TaskBank(_Record):
    """Profiles and tasks of one store; loaded from ``tasks.json``."""

    store: StoreKind
    profiles: list[Profile]
    tasks: list[Task]
