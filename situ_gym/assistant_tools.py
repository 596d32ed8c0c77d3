"""The assistant's catalog and map tools: search the catalog, get a product's facts, locate a product or a place.

Under ``SituRecEnv(catalog_view="tools")`` the observation does not list the catalog (its
``catalog`` text is ``TOOLS_TITLE`` and the navigation index); an assistant looks products
up within its turn, before it answers, with ``env.unwrapped.call_tool(name, arguments)``
(or the handle ``info["tools"]`` holds). The tools (``TOOL_SCHEMAS``, OpenAI's function-tool
format) answer from the same catalog and map the env plays on, deterministically:

* ``search_catalog(query, max_results=5)``: the entries that best match ``query`` (BM25 over
  the catalog, ``situ_gym.retrieval``), best first, as catalog lines (``situ_gym.text``:
  ``id | name | category | price | location | attributes``).
* ``get_product(product_id)``: one product's catalog facts as a JSON object (id, name, brand,
  category, price, location and its navigation handles, labels).
* ``locate(target)``: where a product or a place (product id or name, navigation handle,
  place name) is: the fixture, or store and area, holding it with their handles, its
  position on the map and, from the shopper's pose, its distance and direction.

A call the tools cannot answer (unknown tool or id, a missing, unexpected or mistyped
argument, arguments that are no JSON object) gets a result that starts with ``"Error: "``
and says what to send instead: the model reads it as the tool's answer, the episode goes on.

>>> from situ_gym.scene import SceneIndex
>>> from situ_gym.scene.loader import load_scene
>>> tools = CatalogTools(SceneIndex(load_scene("supermarket")))
>>> print(tools.call("search_catalog", {"query": "frozen cod fillets", "max_results": 1}).result)
Search results for 'frozen cod fillets' (id | name | category | price | location | attributes):
sm_p193 | Harbor Catch Plain Frozen Cod Fillets, 1 lb | frozen fish | $10.29 | Chest Freezer 1: frozen fish (front) | allergen:fish; diet:gluten-free; fish:cod; packaging:bag; preparation:plain; size:1 lb
>>> tools.call("get_product", {"product_id": "nope"}).result
"Error: unknown product_id 'nope'; give a catalog id from search_catalog's results, e.g. 'sm_p001'"
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from situ_gym.retrieval import CatalogRetriever
from situ_gym.scene.index import SceneIndex
from situ_gym.som import fixed_handles
from situ_gym.text import approach_options, catalog_text, nav_position, product_side

__all__ = [
    "TOOL_NAMES", "TOOL_SCHEMAS", "TOOLS_TITLE", "MAX_SEARCH_RESULTS", "MAX_TOOL_CALLS_PER_TURN", "ERROR_PREFIX",
    "ToolAnswer", "CatalogTools", "ToolHandle", "decode_arguments",
]

MAX_SEARCH_RESULTS = 20  # entries one search returns at most (a category has at most 10)
MAX_TOOL_CALLS_PER_TURN = 12  # calls the env answers per assistant turn; later ones get an error
MAX_QUERY_CHARS = 300
ERROR_PREFIX = "Error: "
# Opens the observation's catalog text under catalog_view="tools" (prompts and agents detect it).
TOOLS_TITLE = ("Catalog: not listed here. Look products up with the tools search_catalog(query, max_results), "
               "get_product(product_id) and locate(target) before you answer; their results are the catalog's.")


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _function("search_catalog", "Search the store's catalog. Returns the best-matching entries, best first, one per "
              "line: id | name | category | price | location | attributes.",
              {"query": {"type": "string", "description": "What to look for: a product type, brand, use or labels, "
                                                          "e.g. 'gluten-free pasta' or 'oak desk lamp'."},
               "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS,
                               "description": f"How many entries to return (1 to {MAX_SEARCH_RESULTS}, default 5)."}},
              ["query"]),
    _function("get_product", "Get one product's catalog facts: name, brand, category, price, location with its "
              "navigation handles, and labels.",
              {"product_id": {"type": "string", "description": "A catalog product id, e.g. from search_catalog."}},
              ["product_id"]),
    _function("locate", "Locate a product or a place: the fixture, store or area holding it with its navigation "
              "handle, its map position, and its distance and direction from the shopper.",
              {"target": {"type": "string", "description": "A product id or name, a navigation handle (e.g. '3' or "
                                                           "'2a'), or a place name."}},
              ["target"]),
]
TOOL_NAMES = tuple(s["function"]["name"] for s in TOOL_SCHEMAS)
_PARAMETERS = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SCHEMAS}


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's result text and whether it answered (``False``: the text is an error)."""

    result: str
    ok: bool


def _error(message: str) -> ToolAnswer:
    return ToolAnswer(f"{ERROR_PREFIX}{message}", False)


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def decode_arguments(arguments: Any) -> dict[str, Any] | str:
    """A call's arguments as a dict (OpenAI sends a JSON string, TRL and Python callers a
    dict; None means none), or the error message that says why they are not."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return f"arguments must be a JSON object, got {_shown(arguments)}"
    if not isinstance(arguments, dict) or not all(isinstance(k, str) for k in arguments):
        return f"arguments must be a JSON object, got {_shown(arguments)}"
    return arguments


def _check(name: str, arguments: dict[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for tool ``name`` by its schema, or None."""
    params = _PARAMETERS[name]
    unexpected = sorted(k for k in arguments if k not in params["properties"])
    if unexpected:
        return f"{name} takes {', '.join(params['properties'])}; unexpected argument(s) {', '.join(unexpected)}"
    for key in params["required"]:
        if key not in arguments:
            return f"{name} needs '{key}' ({params['properties'][key]['description']})"
    for key, value in arguments.items():
        spec = params["properties"][key]
        if spec["type"] == "string" and not (isinstance(value, str) and value.strip()):
            return f"{name}: '{key}' must be a non-empty string, got {_shown(value)}"
        if spec["type"] == "integer" and not (
                isinstance(value, int) and not isinstance(value, bool) and spec["minimum"] <= value <= spec["maximum"]):
            return f"{name}: '{key}' must be an integer from {spec['minimum']} to {spec['maximum']}, got {_shown(value)}"
    return None


class CatalogTools:
    """The tools over one store's catalog and map (``index``); stateless between calls.

    ``handles``: the assistant's fixed navigation handles (``{handle: entity id}``, default
    ``fixed_handles(index, "assistant")``); ``retriever``: the BM25 index to search (built
    here when not given).
    """

    def __init__(self, index: SceneIndex, *, retriever: CatalogRetriever | None = None,
                 handles: dict[str, str] | None = None):
        self.index = index
        self._retriever = retriever or CatalogRetriever(index)
        self._handles = dict(fixed_handles(index, "assistant") if handles is None else handles)
        self._handle_of = {eid: h for h, eid in self._handles.items()}
        places = [*index.fixtures.values(), *index.stores.values(), *index.areas.values()]
        self._names: dict[str, str] = {}
        for entity in [*places, *index.products.values()]:
            self._names.setdefault(entity.name.lower(), entity.id)
        for fixture in index.fixtures.values():  # "Shelf 3: jam, coffee" answers to "Shelf 3" too
            self._names.setdefault(fixture.name.split(":", 1)[0].strip().lower(), fixture.id)

    def call(self, name: Any, arguments: Any = None, *, pose: tuple[float, float, float] | None = None) -> ToolAnswer:
        """Answer one call; never raises for what a model may send. ``pose`` (x, y, yaw in
        degrees) is the shopper's, for ``locate``'s distances and directions."""
        if not isinstance(name, str) or name not in TOOL_NAMES:
            return _error(f"unknown tool {_shown(name)}; the tools are {', '.join(TOOL_NAMES)}")
        decoded = decode_arguments(arguments)
        if isinstance(decoded, str):
            return _error(f"{name}: {decoded}")
        problem = _check(name, decoded)
        if problem is not None:
            return _error(problem)
        if name == "search_catalog":
            return self.search_catalog(decoded["query"], decoded.get("max_results", 5))
        if name == "get_product":
            return self.get_product(decoded["product_id"])
        return self.locate(decoded["target"], pose)

    # ------------------------------------------------------------------ the tools
    def search_catalog(self, query: str, max_results: int = 5) -> ToolAnswer:
        query = query.strip()[:MAX_QUERY_CHARS]
        ids = self._retriever.retrieve([("user", query)], max_results)
        if not ids:
            return ToolAnswer(f"No catalog entry matches {query!r}: try other words (a product type, brand or use).",
                              True)
        title = f"Search results for {query!r}"
        return ToolAnswer(catalog_text(self.index, ids, title=title), True)

    def get_product(self, product_id: str) -> ToolAnswer:
        pid = product_id.strip()
        product = self.index.products.get(pid)
        if product is None:
            example = next(iter(self.index.products))
            return _error(f"unknown product_id {_shown(product_id)}; give a catalog id from search_catalog's "
                          f"results, e.g. {example!r}")
        facts = {
            "id": pid, "name": product.name, "brand": product.brand, "category": product.category,
            "price": round(float(product.price), 2), "location": self._location(pid),
            "location_handles": [self._handle_of[e] for e in self.index.location_of(pid) if e in self._handle_of],
            "labels": list(product.tags),
        }
        return ToolAnswer(json.dumps(facts, ensure_ascii=False), True)

    def locate(self, target: str, pose: tuple[float, float, float] | None = None) -> ToolAnswer:
        eid = self._resolve(target)
        if eid is None:
            handle = next(iter(self._handles), "1")
            return _error(f"cannot locate {_shown(target)}: give a product id or its exact name, a navigation handle "
                          f"(e.g. {handle!r}) or a place name from the navigation targets")
        kind = self.index.kind(eid)
        answer: dict[str, Any] = {"target": self.index.name(eid), "kind": kind}
        if kind == "product":
            answer["id"] = eid
            answer["at"] = [self._place(e) for e in self.index.location_of(eid)]
            side = product_side(self.index, eid)
            if side:
                answer["side"] = side
            instance = self.index.products[eid].instances[0] if self.index.products[eid].instances else None
            position = (instance.position[0], instance.position[1]) if instance else nav_position(
                self.index, self.index.location_of(eid)[-1])
        else:
            answer.update(self._place(eid))
            position = nav_position(self.index, eid)
        answer["position"] = [round(float(position[0]), 1), round(float(position[1]), 1)]
        if pose is not None:
            answer["from_shopper"] = _relative(pose, position)
        return ToolAnswer(json.dumps(answer, ensure_ascii=False), True)

    # ------------------------------------------------------------------ helpers
    def _location(self, pid: str) -> str:
        side = product_side(self.index, pid)
        text = self.index.location_text(pid)
        return f"{text} ({side})" if side else text

    def _place(self, eid: str) -> dict[str, Any]:
        kind = self.index.kind(eid)
        if kind == "fixture":
            kind = self.index.fixtures[eid].kind
        elif kind == "area":
            kind = f"area of {self.index.name(self.index.areas[eid].store_id)}"
        return {"handle": self._handle_of.get(eid), "name": self.index.name(eid), "kind": kind,
                "approach": approach_options(self.index, eid)}

    def _resolve(self, target: str) -> str | None:
        text = target.strip()
        if text in self.index.entities:
            return text
        bare = text.strip("[]").strip()
        if bare in self._handles:
            return self._handles[bare]
        return self._names.get(text.lower())


def _relative(pose: tuple[float, float, float], position: tuple[float, float]) -> dict[str, Any]:
    """Distance and direction of ``position`` from ``pose`` (left: counter-clockwise of its yaw)."""
    x, y, yaw = (float(v) for v in pose)
    dx, dy = position[0] - x, position[1] - y
    distance = math.hypot(dx, dy)
    delta = (math.degrees(math.atan2(dy, dx)) - yaw + 180.0) % 360.0 - 180.0
    if abs(delta) <= 15.0:
        direction = "ahead"
    elif abs(delta) >= 165.0:
        direction = "behind"
    else:
        direction = f"{abs(delta):.0f} degrees to the {'left' if delta > 0 else 'right'}"
    return {"distance_m": round(distance, 1), "direction": direction}


class ToolHandle:
    """What an assistant holds to call its env's tools (``info["tools"]`` at reset, under
    ``catalog_view="tools"``): ``handle(name, arguments) -> str`` answers and records the call
    in the current turn, like ``env.unwrapped.call_tool``; ``schemas`` lists the tools in
    OpenAI's function-tool format. A copy is the same handle (it stands for the env)."""

    schemas = TOOL_SCHEMAS
    names = TOOL_NAMES

    def __init__(self, call):
        self._call = call

    def __call__(self, name: str, arguments: Any = None) -> str:
        return self._call(name, arguments)

    def __deepcopy__(self, memo: dict) -> ToolHandle:
        return self

    def __repr__(self) -> str:
        return f"ToolHandle({', '.join(TOOL_NAMES)})"

