"""Appearance from catalog data: colour words, material patterns, package shapes, textures."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.backends.appearance import (
    COLOR_WORDS,
    TILE,
    attribute_color,
    material_pattern,
    package_shape,
    package_texture,
    package_top_texture,
    pattern_texture,
    product_color,
    short_name,
)
from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.backends.geometry import build_geometry
from situ_gym.backends.raster import Renderer
from situ_gym.scene.loader import load_scene
from situ_gym.scene.model import Product


def _product(name="Brand Thing", tags=(), category="planter", brand="Brand") -> Product:
    return Product(id="p1", name=name, brand=brand, category=category, group="g", price=1.0, attributes={},
                   tags=list(tags), color=(16, 28, 40), instances=[])


@pytest.fixture(scope="module")
def home():
    return load_scene("home_furnishings")


@pytest.fixture(scope="module")
def mart():
    return load_scene("supermarket")


@pytest.mark.parametrize("label, word", [("white", "white"), ("terracotta", "terracotta"), ("forest green", "forest green"),
                                         ("gold", "gold"), ("cherry", "cherry"), ("Grey", "grey")])
def test_colour_labels_map_to_their_named_colour(label, word):
    assert attribute_color(_product(tags=[f"color:{label}"])) == COLOR_WORDS[word]
    assert product_color(_product(tags=[f"color:{label}"])) == COLOR_WORDS[word]


def test_every_home_colour_label_is_known_and_shown(home):
    for p in home.products:
        labels = [t.split(":", 1)[1] for t in p.tags if t.startswith("color:")]
        assert labels and attribute_color(p) == COLOR_WORDS[labels[0]], p.name


def test_issue_examples_differ_by_their_labels(home):
    """Planters of different colours look different; gold reads gold, not purple."""
    planters = [p for p in home.products if p.category == "planter"]
    by_label = {next(t for t in p.tags if t.startswith("color:")): product_color(p) for p in planters}
    assert len(set(by_label.values())) == len(by_label) >= 3
    gold = COLOR_WORDS["gold"]
    assert gold[0] > gold[1] > gold[2]  # a warm yellow: red over green over blue


@pytest.mark.parametrize("material, pattern", [("oak", "wood"), ("walnut veneer", "wood"), ("velvet", "velvet"),
                                               ("ceramic", "ceramic"), ("woven seagrass", "woven"),
                                               ("powder-coated steel", "metal"), ("marble top", "marble")])
def test_materials_pick_patterns(material, pattern):
    assert material_pattern(_product(tags=[f"material:{material}"])) == pattern


def test_patterns_differ_and_tile_seamlessly():
    tiles = {name: pattern_texture((150, 110, 70), name) for name in ("wood", "metal", "velvet", "woven", "plain")}
    flat = {name: t.astype(int) for name, t in tiles.items()}
    assert all(t.shape == (TILE, TILE, 3) for t in tiles.values())
    assert len({t.tobytes() for t in tiles.values()}) == len(tiles)
    for name in ("wood", "woven"):  # the seam between repeats is no stronger than the pattern itself
        t = flat[name]
        inner = np.abs(np.diff(t, axis=1)).mean()
        seam = np.abs(t[:, 0] - t[:, -1]).mean()
        assert seam <= 3 * inner + 2, name


@pytest.mark.parametrize("packaging, shape", [("can", "can"), ("12-pack cans", "pack"), ("glass bottle", "bottle"),
                                              ("box", "box"), ("resealable bag", "bag"), ("carton", "carton"),
                                              ("mesh bag", "produce"), ("paper tub", "tub")])
def test_packaging_labels_pick_shapes(packaging, shape):
    assert package_shape(_product(tags=[f"packaging:{packaging}"], category="x")) == shape


def test_every_supermarket_product_gets_a_distinct_package(mart):
    seen = set()
    for p in mart.products:
        inst = p.instances[0]
        tile = package_texture(p, inst.size[0], inst.size[2])
        assert tile.shape == (TILE, TILE, 3) and tile.dtype == np.uint8
        seen.add(tile.tobytes())
    assert len(seen) == len(mart.products)


def test_short_name_drops_brand_and_size():
    p = _product(name="Sunny Fields Honey Oat Clusters Cereal, 12 oz", brand="Sunny Fields", category="cereal")
    assert short_name(p) == "Honey Oat Clusters Cereal"


def test_appearance_is_deterministic_and_built_once(mart):
    p = mart.products[0]
    inst = p.instances[0]
    a = package_texture(p, inst.size[0], inst.size[2], 0.2)
    assert package_texture(p, inst.size[0], inst.size[2], 0.2) is a  # cached, not redrawn
    assert not a.flags.writeable
    g1, g2 = build_geometry(mart), build_geometry(mart)
    assert np.array_equal(g1.face_rgb, g2.face_rgb)
    assert np.array_equal(g1.textures.face, g2.textures.face)
    assert all(np.array_equal(x, y) for x, y in zip(g1.textures.tiles, g2.textures.tiles, strict=True))


def test_textures_stay_inside_their_faces_and_leave_depth_and_seg_alone(mart):
    """RGB, depth and segmentation agree pixel for pixel: texturing only recolours a face's own pixels."""
    backend = EmbeddedBackend(mart, width=320, height=240)
    flat = Renderer(backend.geometry, backend.camera, tree=backend.renderer.tree, texture_min_px=float("inf"))
    shelf = mart.fixtures[0]
    textured_pixels = 0
    for key in sorted(shelf.approach):
        a = shelf.approach[key]
        backend.reset(Pose(a.x, a.y, a.yaw, -15.0))
        frame = backend.capture()
        eye = np.array([a.x, a.y, mart.layout.eye_height])
        rgb, depth, seg, _ = flat.render(eye, a.yaw, -15.0)
        assert seg.tobytes() == frame.seg.tobytes()
        assert depth.tobytes() == frame.depth.tobytes()
        changed = np.any(rgb != frame.rgb, axis=2)
        product_colors = {p.color for p in mart.products}
        changed_colors = {tuple(int(v) for v in c) for c in np.unique(frame.seg[changed], axis=0)}
        assert changed_colors <= product_colors  # only product faces carry texture
        textured_pixels += int(changed.sum())
    assert textured_pixels > 0.2 * 320 * 240


def test_shelf_reads_as_full_from_its_approach_point(mart):
    """From a gondola's front approach point most of the view below the sign is product."""
    backend = EmbeddedBackend(mart, width=320, height=240)
    ids = {p.color for p in mart.products}
    for shelf in [f for f in mart.fixtures if f.kind == "shelf"][:4]:
        a = shelf.approach["front"]
        backend.reset(Pose(a.x, a.y, a.yaw, backend.view_pitch(shelf, a.x, a.y, a.yaw)))
        frame = backend.capture()
        seg = frame.seg[60:, :].reshape(-1, 3)
        keys = seg[:, 0].astype(np.int64) << 16 | seg[:, 1].astype(np.int64) << 8 | seg[:, 2]
        prod = np.isin(keys, [r << 16 | g << 8 | b for r, g, b in ids])
        assert prod.mean() > 0.5, (shelf.id, prod.mean())


def test_product_names_never_repeat_a_word(home, mart):
    """What a package or label prints reads cleanly ("White Marble Top", not "White Marble Marble Top")."""
    for p in [*home.products, *mart.products]:
        words = p.name.replace(",", "").lower().split()
        assert all(a != b for a, b in zip(words, words[1:], strict=False)), p.name


def test_stocked_rows_show_package_fronts_and_tops(mart):
    """Every shelf row is textured on its front (package art) and its top (lids, caps, box tops)."""
    geo = build_geometry(mart)
    tex = geo.textures
    d = tex.face % 6
    shelf_rows = sum(1 for label in geo.labels if label in {p.id for p in mart.products})
    assert (d == 5).sum() == shelf_rows and (d < 4).sum() == shelf_rows
    can = next(p for p in mart.products if package_shape(p) == "can")
    box = next(p for p in mart.products if package_shape(p) == "box")
    can_top = package_top_texture(can, 0.08, 0.08).astype(int)
    box_top = package_top_texture(box, 0.2, 0.07).astype(int)
    # a lid in the middle of each package row vs the dark gap at the tile's edge; a box top fills its row
    assert np.abs(can_top[TILE // 8, TILE // 2] - can_top[TILE // 8, 0]).sum() > 60
    assert len(np.unique(box_top.reshape(-1, 3), axis=0)) >= 3
