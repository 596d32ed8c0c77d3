"""The seeded generator: byte-identical output, the committed data, the CLI."""

import math

import pytest

from situ_gym.assets.__main__ import main
from situ_gym.assets.generate import generate
from situ_gym.assets.vocab_supermarket import CATEGORIES
from situ_gym.scene.loader import data_file, load_scene, load_task_bank
from situ_gym.scene.validate import check_table2

FILES = [f"{s}/{n}" for s in ("supermarket", "home_furnishings") for n in ("scene.json", "tasks.json")]


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("seed0")
    generate(seed=0, out=out)
    return out


def test_same_seed_same_bytes(default_run, tmp_path):
    generate(seed=0, out=tmp_path)
    for rel in FILES:
        assert (tmp_path / rel).read_bytes() == (default_run / rel).read_bytes(), rel


def test_committed_data_equals_fresh_generation(default_run):
    for rel in FILES:
        store, name = rel.split("/")
        assert data_file(store, name).read_bytes() == (default_run / rel).read_bytes(), (
            f"{rel} is stale: run `python -m situ_gym.assets generate`")


def test_other_seed_differs_and_is_still_valid(default_run, tmp_path):
    generate(seed=7, out=tmp_path)
    assert (tmp_path / FILES[0]).read_bytes() != (default_run / FILES[0]).read_bytes()
    for store in ("supermarket", "home_furnishings"):
        scene, bank = load_scene(store, tmp_path), load_task_bank(store, tmp_path)
        check_table2(scene, bank, store)  # counts are fixed by construction, not by the seed


def test_cli_stats_prints_table2(capsys):
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    rows = {line[:16].strip(): line[16:].split() for line in out.splitlines()[1:7]}
    assert rows["# Products"] == ["233", "222", "455"]
    assert rows["# Instances"] == ["1,324", "244", "1,568"]
    assert rows["# Nav. Targets"] == ["29", "31", "60"]
    assert rows["# Waypoints"] == ["42", "38", "80"]
    assert rows["# User Profiles"] == ["25", "25", "50"]
    assert rows["# Tasks"] == ["100", "100", "200"]


def test_cli_validate(tmp_path, capsys, default_run):
    assert main(["validate"]) == 0
    bad = tmp_path / "bad"
    generate(seed=0, out=bad)
    path = bad / "supermarket" / "scene.json"
    path.write_text(path.read_text().replace('"sm_shelf_01"', '"sm_shelf_77"', 1))
    assert main(["validate", "--root", str(bad)]) == 1
    assert "INVALID" in capsys.readouterr().err


def test_products_sit_on_the_fixture_matching_their_storage():
    kind_of = {c.category: c.fixture for c in CATEGORIES}
    storage = {c.category: c.storage for c in CATEGORIES}
    scene = load_scene("supermarket")
    fixtures = {f.id: f for f in scene.fixtures}
    allowed = {"frozen": {"upright_freezer", "chest_freezer"}, "chilled": {"open_cooler"},
               "produce": {"produce_stand"}, "ambient": {"shelf"}}
    for p in scene.products:
        kind = fixtures[p.fixture_id].kind
        assert kind == kind_of[p.category] and kind in allowed[storage[p.category]], p.id


def test_double_sided_shelves_and_wall_fixtures():
    scene = load_scene("supermarket")
    by_fixture = {}
    for p in scene.products:
        by_fixture.setdefault(p.fixture_id, set()).update(i.facing for i in p.instances)
    for f in scene.fixtures:
        if f.kind == "shelf":
            assert set(f.approach) == {"front", "back"}
            assert by_fixture[f.id] == {f.front_yaw, (f.front_yaw + 180) % 360}
            assert len(f.levels) == 5
        else:
            assert by_fixture[f.id] == {f.front_yaw}
        if f.kind in ("upright_freezer", "open_cooler"):
            assert set(f.approach) == {"front"}
            b = scene.layout.bounds  # against a hall wall
            assert min(f.footprint[0] - b[0], f.footprint[1] - b[1], b[2] - f.footprint[2],
                       b[3] - f.footprint[3]) == pytest.approx(0.0)


def test_home_store_rooms_have_doorway_gaps():
    scene = load_scene("home_furnishings")
    for s in scene.stores:
        walls = [w.footprint for w in scene.layout.walls if w.owner == s.id]
        assert len(walls) >= 4
        x0, y0, x1, y1 = s.doorway
        assert max(x1 - x0, y1 - y0) >= 1.6
        # sample across the doorway: no wall of the store covers its middle line
        for k in range(1, 20):
            x = x0 + (x1 - x0) * k / 20
            y = (y0 + y1) / 2
            assert not any(a <= x <= c and b <= y <= d for a, b, c, d in walls)
        out, inn = s.approach["outside_doorway"], s.approach["inside_doorway"]
        into = (math.cos(math.radians(inn.yaw)), math.sin(math.radians(inn.yaw)))
        # both points face into the store and the inside one lies further along that direction
        assert (inn.x - out.x) * into[0] + (inn.y - out.y) * into[1] > 1.0


def test_prices_are_in_realistic_ranges():
    sm, hf = load_scene("supermarket"), load_scene("home_furnishings")
    assert all(0.99 <= p.price <= 40 for p in sm.products)
    assert all(15 <= p.price <= 3000 for p in hf.products)
    assert all(p.tags == sorted(p.tags) and all(":" in t for t in p.tags) for p in sm.products)


def test_task_categories_belong_to_their_theme():
    from situ_gym.assets.vocab_people import THEMES

    for store in ("supermarket", "home_furnishings"):
        for t in load_task_bank(store).tasks:
            assert t.category in THEMES[t.theme], t.id
