"""The packaged stores: Table 2, task-bank invariants, the catalog/location texts."""

import random

import pytest

from situ_gym.scene.budget import compute_budget, eligible_products, reference_set
from situ_gym.scene.loader import load_scene, load_task_bank
from situ_gym.scene.validate import (
    HOME_STORE_NAMES,
    SUPERMARKET_FIXTURE_COUNTS,
    TABLE2,
    scene_stats,
)

STORES = ("supermarket", "home_furnishings")


@pytest.mark.parametrize("store", STORES)
def test_table2_statistics(store):
    stats = scene_stats(load_scene(store), load_task_bank(store))
    assert stats == TABLE2[store]


def test_table2_exact_numbers():
    assert TABLE2["supermarket"] == {"products": 233, "instances": 1324, "nav_targets": 29,
                                     "waypoints": 42, "profiles": 25, "tasks": 100}
    assert TABLE2["home_furnishings"] == {"products": 222, "instances": 244, "nav_targets": 31,
                                          "waypoints": 38, "profiles": 25, "tasks": 100}


def test_store_composition():
    sm = load_scene("supermarket")
    kinds = {}
    for f in sm.fixtures:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    assert kinds == SUPERMARKET_FIXTURE_COUNTS
    hf = load_scene("home_furnishings")
    assert sorted(s.name for s in hf.stores) == sorted(HOME_STORE_NAMES)
    assert len(hf.areas) == 24 and all(3 <= len(s.area_ids) <= 4 for s in hf.stores)


def test_loads_are_cached():
    assert load_scene("supermarket") is load_scene("supermarket")
    assert load_task_bank("home_furnishings") is load_task_bank("home_furnishings")


def test_unknown_store_is_rejected():
    with pytest.raises(ValueError, match="'mall'"):
        load_scene("mall")


@pytest.mark.parametrize("store", STORES)
def test_every_reference_set_satisfies_its_task_and_is_complete(store):
    scene, bank = load_scene(store), load_task_bank(store)
    products = {p.id: p for p in scene.products}
    for t in bank.tasks:
        target = products[t.target_product_id]
        assert t.target_product_id in t.reference_set
        assert t.budget > target.price
        for pid in t.reference_set:
            p = products[pid]
            assert p.category == t.category
            assert set(t.required_tags) <= set(p.tags)
            assert not set(t.avoided_tags) & set(p.tags)
            assert p.price <= t.budget
        again = reference_set(scene.products, t.category, t.required_tags, t.avoided_tags, t.budget)
        assert sorted(again) == sorted(t.reference_set)
        elig = eligible_products(scene.products, t.category, t.required_tags, t.avoided_tags)
        assert t.budget == compute_budget(target.price, [p.price for p in elig], t.budget_tier)
    sizes = [len(t.reference_set) for t in bank.tasks]
    assert sum(n >= 2 for n in sizes) >= 80  # substitutes exist on most tasks
    assert max(sizes) <= 10


@pytest.mark.parametrize("store", STORES)
def test_profile_tasks_and_subsets(store):
    scene, bank = load_scene(store), load_task_bank(store)
    where = {p.id: p.fixture_id or p.area_id for p in scene.products}
    by_profile = {p.id: [t for t in bank.tasks if t.profile_id == p.id] for p in bank.profiles}
    rng = random.Random(42)  # the documented subset procedure
    for tasks in by_profile.values():
        assert len(tasks) == 4
        assert len({t.category for t in tasks}) == 4  # different categories per profile
        assert len({where[t.target_product_id] for t in tasks}) == 4  # and locations
        order = [0, 1, 2, 3]
        rng.shuffle(order)
        for i in range(4):
            assert tasks[order[i]].subset == i
    for s in range(4):
        members = [t for t in bank.tasks if t.subset == s]
        assert len(members) == 25
        assert {t.profile_id for t in members} == set(by_profile)


@pytest.mark.parametrize("store", STORES)
def test_task_text_fields(store):
    bank = load_task_bank(store)
    for t in bank.tasks:
        assert 1 <= len(t.required_tags) <= 3 and len(t.avoided_tags) <= 2
        assert t.disclosure[0].kind in ("category", "use")
        kinds = [d.kind for d in t.disclosure]
        assert kinds.count("budget") == 1
        assert {d.value for d in t.disclosure if d.kind == "need"} == set(t.required_tags)
        assert {d.value for d in t.disclosure if d.kind == "avoid"} == set(t.avoided_tags)
        assert f"{t.budget:,.2f}" in t.request
    for p in bank.profiles:
        assert set(p.demographics) == {"age_group", "employment", "occupation", "household",
                                       "housing", "transport", "storage"}
        assert all(0.0 <= v <= 1.0 for v in p.big_five.values()) and len(p.big_five) == 5
