"""Set-of-Mark: frame + role -> marked view and handle map; layout minimap; captions."""

from situ_gym.som.labels import caption, fixed_handles, fixed_handles_by_id, letters, product_label
from situ_gym.som.marks import Analysis, Region, analyse, annotate, annotate_roles, draw
from situ_gym.som.minimap import MapTransform, map_transform, render_minimap
from situ_gym.som.types import ROLES, RoleView, VisibleEntity

__all__ = [
    "ROLES",
    "RoleView",
    "VisibleEntity",
    "Analysis",
    "Region",
    "analyse",
    "draw",
    "annotate",
    "annotate_roles",
    "caption",
    "fixed_handles",
    "fixed_handles_by_id",
    "letters",
    "product_label",
    "MapTransform",
    "map_transform",
    "render_minimap",
]
