"""The generic "fixtures" builder (situ_gym.assets.fixture_store) on the pharmacy's layout.json
and catalog.json: a valid, deterministic scene in which every product can be reached."""

import json
import random
import shutil
from collections import Counter

import pytest

from situ_gym.assets.fixture_store import build_fixture_store, read_catalog, read_layout
from situ_gym.assets.generate import dumps
from situ_gym.scene.model import FIXTURE_KINDS
from situ_gym.scene.validate import check_scene, instance_rect, rect_point_distance
from tests.stores.conftest import PHARMACY

SEED = 3000


@pytest.fixture(scope="module")
def spec(pharmacy_folder):
    from situ_gym.stores import store_spec

    return store_spec("pharmacy")


@pytest.fixture(scope="module")
def scene(pharmacy_folder, spec):
    return build_fixture_store(pharmacy_folder, spec, random.Random(SEED))


def test_the_pharmacy_scene_passes_every_scene_check(scene):
    check_scene(scene, "pharmacy scene.json")
    assert scene.store == "pharmacy" and scene.name == "Pharmacy"
    assert not scene.stores and not scene.areas


def test_the_same_seed_builds_the_same_scene_and_another_seed_another(pharmacy_folder, spec, scene):
    again = build_fixture_store(pharmacy_folder, spec, random.Random(SEED))
    assert dumps(again) == dumps(scene)
    other = build_fixture_store(pharmacy_folder, spec, random.Random(SEED + 1))
    assert dumps(other) != dumps(scene)
    # the layout is data, not chance: only prices, sizes, colours and facings move
    assert [f.footprint for f in other.fixtures] == [f.footprint for f in scene.fixtures]
    assert [p.name for p in other.products] == [p.name for p in scene.products]


def test_products_ids_and_names_follow_the_supermarket_patterns(scene):
    cats, _ = read_catalog(PHARMACY)
    assert 40 <= len(scene.products) <= 80
    assert len(scene.products) == sum(c.n for c in cats)
    assert 12 <= len({p.category for p in scene.products}) <= 16
    assert [p.id for p in scene.products] == [f"ph_p{i + 1:03d}" for i in range(len(scene.products))]
    assert all(2.0 <= p.price <= 40.0 for p in scene.products)
    kinds = Counter()
    for f in scene.fixtures:
        kinds[f.kind] += 1
        assert f.id == f"ph_{f.kind}_{kinds[f.kind]:02d}"
        label = {"shelf": "Shelf", "open_cooler": "Open Cooler"}[f.kind]
        assert f.name.startswith(f"{label} {kinds[f.kind]}: ")
    assert 6 <= len(scene.fixtures) <= 10
    for w in scene.waypoints:
        assert w.id.startswith("ph_w")


def test_every_category_sits_on_a_fixture_of_its_kind(scene):
    cats, _ = read_catalog(PHARMACY)
    kinds_present = {f.kind for f in scene.fixtures}
    fixtures = {f.id: f for f in scene.fixtures}
    for c in cats:
        assert c.fixture in FIXTURE_KINDS and c.fixture in kinds_present, c.category
        held = [p for p in scene.products if p.category == c.category]
        assert len(held) == c.n
        assert {fixtures[p.fixture_id].kind for p in held} == {c.fixture}
    # the categories a fixture lists in layout.json are the ones it holds
    layout = read_layout(PHARMACY)
    for spec_f, f in zip(layout["fixtures"], scene.fixtures, strict=True):
        held = {p.category for p in scene.products if p.fixture_id == f.id}
        assert held == set(spec_f["categories"]), f.id


def test_every_product_can_be_reached_and_seen(scene):
    fixtures = {f.id: f for f in scene.fixtures}
    x0, y0, x1, y1 = scene.layout.bounds
    for p in scene.products:
        f = fixtures[p.fixture_id]
        assert p.id in f.product_ids
        assert p.instances
        for inst in p.instances:
            r = instance_rect(inst.position, inst.size)
            assert f.footprint[0] - 2e-3 <= r[0] and r[2] <= f.footprint[2] + 2e-3
            assert f.footprint[1] - 2e-3 <= r[1] and r[3] <= f.footprint[3] + 2e-3
            assert any(abs(inst.position[2] - lv) < 1e-3 for lv in f.levels)
        side = "front" if p.instances[0].facing % 360 == f.front_yaw % 360 else "back"
        pose = f.approach[side]  # the face the product looks out of has an approach point
        assert x0 <= pose.x <= x1 and y0 <= pose.y <= y1
        assert 0.5 < rect_point_distance(f.footprint, pose.x, pose.y) < 1.5


def test_prices_tags_and_attributes_come_from_the_catalog(scene):
    raw = json.loads((PHARMACY / "catalog.json").read_text())
    first = raw["categories"][0]
    p = scene.products[0]
    brand, _, brand_tags = first["brands"][0]
    desc, tags = first["variants"][0]
    assert p.name == f"{brand} {desc} {first['noun']}, {first['sizes'][0][0]}".replace("  ", " ")
    assert set(t for t in tags.split(",") if t) <= set(p.tags)
    assert f"size:{first['sizes'][0][0]}" in p.tags
    assert p.attributes["size"] == first["sizes"][0][0]
    assert all(":" in t for q in scene.products for t in q.tags)


def _copy(tmp_path):
    folder = tmp_path / "store"
    shutil.copytree(PHARMACY, folder)
    return folder


def _edit(folder, name, change):
    path = folder / name
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_layout_naming_an_unknown_category_is_refused(tmp_path, spec):
    folder = _copy(tmp_path)
    _edit(folder, "layout.json", lambda d: d["fixtures"][0]["categories"].append("snake oil"))
    with pytest.raises(ValueError, match="snake oil"):
        build_fixture_store(folder, spec, random.Random(0))


def test_a_category_without_a_fixture_of_its_kind_is_refused(tmp_path, spec):
    folder = _copy(tmp_path)

    def drop_cooler(d):
        d["fixtures"] = [f for f in d["fixtures"] if f["type"] != "cooler"]

    _edit(folder, "layout.json", drop_cooler)
    with pytest.raises(ValueError, match="open_cooler"):
        build_fixture_store(folder, spec, random.Random(0))


def test_unlisted_categories_spread_over_their_kinds_free_fixtures(tmp_path, spec):
    folder = _copy(tmp_path)

    def unlist(d):
        for f in d["fixtures"]:
            f.pop("categories", None)

    _edit(folder, "layout.json", unlist)
    scene = build_fixture_store(folder, spec, random.Random(SEED))
    assert all(f.product_ids for f in scene.fixtures)
    check_scene(scene, "unlisted")


def test_a_fixture_face_too_small_for_its_products_is_named(tmp_path, spec):
    folder = _copy(tmp_path)
    _edit(folder, "layout.json", lambda d: d["fixture_types"]["cooler"].update(length=0.5))
    with pytest.raises(ValueError, match="ph_open_cooler_01"):
        build_fixture_store(folder, spec, random.Random(0))
