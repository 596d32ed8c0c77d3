"""``StoreSpec``: everything about a store kind that is not its scene or its tasks.

A store is a folder (``store.json`` + ``scene.json`` + ``tasks.json``, see ``docs/stores.md``);
``store.json`` holds this record. The two paper stores are folders of the package data, written in
the same format. Code never compares a store's id: it reads the spec (``store_spec(scene.store)``),
and what differs between the paper's two kinds of store hangs on ``layout``:

* ``"fixtures"``: one hall of fixtures (shelves, freezers, coolers, stands) holding products;
  the shopper walks to a fixture, picks a product up (holding one at a time) and reads it.
* ``"stores"``: stores within a store, each with a doorway and display areas; the shopper walks
  to a store's doorway, then into an area, and checks products where they stand (they are
  obstacles on the floor).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LAYOUTS", "FORMAT_VERSION", "PromptWords", "StoreSpec"]

FORMAT_VERSION = 1
LAYOUTS = ("fixtures", "stores")

_MOVES = ("move_forward", "move_backward", "turn_and_move", "move_and_turn", "side_step", "turn", "look_up_down")
_DIRECTIONAL = _MOVES[2:]  # the moves with a direction argument (LNSR compares their direction)

# What each layout fixes (the paper's two stores, App. B.2 and C.1). A new store picks a layout;
# a new layout is new code (a scene builder, the shopper's moves), so these are not data.
_BY_LAYOUT: dict[str, dict[str, Any]] = {
    "fixtures": dict(
        nav_kinds=("fixture",),
        target_tools=("move_to_fixture",),
        place_tools=("pick_up_item", "add_to_cart", "drop_item", "idle"),
        inspect_tool="pick_up_item",
        holds_items=True,
        products_block=False,
        navigate_fields=("navigation_goal", "reason"),
        default_approach="nearest",
    ),
    "stores": dict(
        nav_kinds=("store", "area"),
        target_tools=("move_to_store", "move_to_area"),
        place_tools=("check_item", "add_to_cart", "do_not_add_to_cart", "idle"),
        inspect_tool="check_item",
        holds_items=False,
        products_block=True,
        navigate_fields=("navigation_goal", "reason", "next_waypoint", "target_approach"),
        default_approach="outside_doorway",
    ),
}


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class PromptWords(_Record):
    """How the assistant's system prompt speaks of the store (``agents.prompting``)."""

    place: str = Field(min_length=1)  # "a supermarket"
    targets: str = Field(min_length=1)  # what the navigation handles are
    inspect: str = Field(min_length=1)  # the inspect tool and what the shopper learns from it
    example: dict[str, Any]  # one well-formed assistant turn, shown in the prompt


class StoreSpec(_Record):
    """The settings of one store kind, as ``store.json`` holds them."""

    format: Literal[1] = FORMAT_VERSION
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,39}$")  # scene.json / tasks.json "store" field
    name: str = Field(min_length=1)  # "Supermarket"
    env_id: str = Field(pattern=r"^SituRec-[A-Za-z0-9]+-v\d+$")  # its gym.make id
    layout: Literal["fixtures", "stores"]
    id_prefix: str = Field(pattern=r"^[a-z]{2,4}$")  # of generated ids: "sm_p001", "sm_t001"
    seed_salt: int = Field(ge=0, lt=100)  # the generator's random stream of this store
    # How its scene is made: "module:function" of a builder taking a random.Random, "fixtures"
    # (the generic builder from the folder's layout.json and catalog.json), or null (scene.json
    # is written by hand and `python -m situ_gym.assets build` keeps it).
    builder: str | None = None
    mass_nouns: bool = False  # goods said with "some" ("some yogurt"), as groceries are
    preference_keys: tuple[str, ...]  # label keys a task may require or avoid
    roles: str  # the people table of shopper roles: a key of vocab/people.json, or a file in the folder
    prompt: PromptWords
    unsafe_advice: str = Field(min_length=1)  # an unsafe tip for this store (the safety probe)
    health_claims: tuple[str, ...] = Field(min_length=1)  # false claims (the health-claim probe)
    # Counts the data must reproduce (SituRecBench Table 2 for the paper's stores), checked on
    # every load: products, instances, nav_targets, waypoints, profiles, tasks, and the
    # composition (fixture_kinds, store_names, areas, areas_per_store).
    expected: dict[str, Any] = {}

    # ------------------------------------------------------------------ derived from the layout
    def _layout(self, key: str):
        return _BY_LAYOUT[self.layout][key]

    @property
    def nav_kinds(self) -> tuple[str, ...]:
        """Entity kinds an assistant may name as a navigation goal."""
        return self._layout("nav_kinds")

    @property
    def legal_tools(self) -> tuple[str, ...]:
        """The shopper's legal tools (App. C.1, AFR), in the paper's order."""
        return _MOVES + self._layout("target_tools") + self._layout("place_tools")

    @property
    def lnsr_tools(self) -> tuple[str, ...]:
        """The tools LNSR compares (App. C.1 "Local Navigation Alignment")."""
        return _DIRECTIONAL + self._layout("target_tools")

    @property
    def inspect_tool(self) -> str:
        return self._layout("inspect_tool")

    @property
    def holds_items(self) -> bool:
        """The shopper holds one product at a time (picks up, drops) rather than checking it in place."""
        return self._layout("holds_items")

    @property
    def products_block(self) -> bool:
        """Product instances stand on the floor and block walking (furniture)."""
        return self._layout("products_block")

    @property
    def navigate_fields(self) -> tuple[str, ...]:
        """Required fields of a Navigate action beyond ``type`` (App. B.2)."""
        return self._layout("navigate_fields")

    @property
    def default_approach(self) -> str:
        """The approach guidance names for a target not yet reached: a fixture's nearest face, a store's outside doorway."""
        return self._layout("default_approach")

    def article(self, category: str) -> str:
        """"some" for mass goods and plurals ("some string lights"), else "a"/"an"."""
        if self.mass_nouns or (category.endswith("s") and not category.endswith("ss")):
            return "some"
        return "an" if category[:1].lower() in "aeiou" else "a"
