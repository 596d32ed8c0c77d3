"""Shopper roles, shopping themes and names used to build profiles and tasks (invented).

The tables live in ``vocab/people.json``. A role line is ``(role, persona, themes, age groups,
employment, occupations, households, housing, transport, storage, price sensitivities)``; ``;``
separates the options a seed may pick, ``,`` separates themes.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

__all__ = [
    "SUPERMARKET_ROLES",
    "HOME_ROLES",
    "THEMES",
    "THEME_USE",
    "FIRST_NAMES",
    "LAST_NAMES",
    "BEHAVIOR_STYLES",
    "people_of",
]

# Field order of a role line (the JSON names each field).
_ROLE_FIELDS = ("role", "persona", "themes", "age_groups", "employment", "occupations", "households",
                "housing", "transport", "storage", "price_sensitivity")

_DATA = json.loads(resources.files("situ_gym.assets").joinpath("vocab", "people.json").read_text("utf-8"))

BEHAVIOR_STYLES: tuple[str, ...] = tuple(_DATA["behavior_styles"])
# theme -> categories a task of that theme may target
THEMES: dict[str, tuple[str, ...]] = {theme: tuple(cats) for theme, cats in _DATA["themes"].items()}
# theme -> how the shopper states the intended use (a "use" disclosure item)
THEME_USE: dict[str, str] = dict(_DATA["theme_use"])
SUPERMARKET_ROLES: tuple[tuple[str, ...], ...] = tuple(
    tuple(role[f] for f in _ROLE_FIELDS) for role in _DATA["supermarket_roles"]
)
HOME_ROLES: tuple[tuple[str, ...], ...] = tuple(tuple(role[f] for f in _ROLE_FIELDS) for role in _DATA["home_roles"])
FIRST_NAMES: dict[str, tuple[str, ...]] = {gender: tuple(names) for gender, names in _DATA["first_names"].items()}
LAST_NAMES: tuple[str, ...] = tuple(_DATA["last_names"])


def _roles(lines: list[dict]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(role[f] for f in _ROLE_FIELDS) for role in lines)


def people_of(spec) -> tuple[tuple[tuple[str, ...], ...], dict[str, tuple[str, ...]], dict[str, str]]:
    """(roles, themes, theme_use) of a store: ``spec.roles`` names a table of people.json
    ("supermarket_roles") or a file of the store's folder ("people.json", holding ``roles`` and
    the ``themes`` and ``theme_use`` its roles name, added to the packaged ones)."""
    if not spec.roles.endswith(".json"):
        return _roles(_DATA[spec.roles]), THEMES, THEME_USE
    from situ_gym.stores import store_folder

    path = Path(store_folder(spec.id)) / spec.roles
    data = json.loads(path.read_text("utf-8"))
    themes = {**THEMES, **{t: tuple(c) for t, c in data.get("themes", {}).items()}}
    return _roles(data["roles"]), themes, {**THEME_USE, **data.get("theme_use", {})}
