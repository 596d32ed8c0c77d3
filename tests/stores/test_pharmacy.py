"""The pharmacy (stores/pharmacy), a store made only of data: its build reproduces the committed
scene.json and tasks.json, it validates, its env passes gymnasium's checker, and the heuristic,
plain and random assistants play it (the heuristic finishing most of its tasks)."""

import json
import os
import shutil
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import situ_gym  # noqa: F401  (registers SituRec-Custom-v0)
from agents.heuristic import HeuristicAssistant
from agents.plain import PlainAssistant
from agents.random_agent import RandomAssistant
from tests.episodes import play
from tests.stores.conftest import PHARMACY, REPO

TASKS = 6


def _assets(*args, cwd=REPO):
    env = {k: v for k, v in os.environ.items() if k != "SITUREC_STORES"}  # a fresh registry
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "situ_gym.assets", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_building_a_copy_writes_the_committed_scene_and_tasks(tmp_path):
    folder = tmp_path / "pharmacy"
    shutil.copytree(PHARMACY, folder, ignore=shutil.ignore_patterns("scene.json", "tasks.json"))
    built = _assets("build", str(folder))
    assert built.returncode == 0, built.stderr
    for name in ("scene.json", "tasks.json"):
        assert (folder / name).read_bytes() == (PHARMACY / name).read_bytes(), name
    checked = _assets("validate", str(folder))
    assert checked.returncode == 0, checked.stderr
    assert "pharmacy" in checked.stdout


def test_the_committed_folder_validates():
    checked = _assets("validate", str(PHARMACY))
    assert checked.returncode == 0, checked.stderr


def test_the_committed_tasks_are_a_full_bank_over_the_catalog():
    scene = json.loads((PHARMACY / "scene.json").read_text())
    bank = json.loads((PHARMACY / "tasks.json").read_text())
    assert bank["store"] == scene["store"] == "pharmacy"
    assert len(bank["profiles"]) == 25 and len(bank["tasks"]) == 100
    products = {p["id"]: p for p in scene["products"]}
    keys = set(json.loads((PHARMACY / "store.json").read_text())["preference_keys"])
    for t in bank["tasks"]:
        assert t["id"].startswith("ph_u") and t["target_product_id"] in products
        assert {tag.partition(":")[0] for tag in t["required_tags"]} <= keys
    # the tasks spread over the store: most categories and every fixture are a target
    assert len({t["category"] for t in bank["tasks"]}) >= 12
    targets = {products[t["target_product_id"]]["fixture_id"] for t in bank["tasks"]}
    assert targets == {f["id"] for f in scene["fixtures"]}


@pytest.fixture(scope="module")
def env(pharmacy_folder):
    env = gym.make("SituRec-Custom-v0", store=str(pharmacy_folder), image_size=(160, 120))
    yield env
    env.close()


def test_the_env_passes_gymnasiums_checker(env):
    assert env.unwrapped.index.scene.store == "pharmacy"
    check_env(env.unwrapped)


def test_heuristic_plain_and_random_assistants_play_the_pharmacy(env):
    task_ids = env.unwrapped.task_ids[::17][:TASKS]
    wins = {}
    for name, agent in (("heuristic", HeuristicAssistant()), ("plain", PlainAssistant()),
                        ("random", RandomAssistant())):
        wins[name] = 0
        for task_id in task_ids:
            turns, info = play(env, agent, task_id)
            assert turns and info["store"] == "pharmacy"
            if name != "random":
                assert all(t.assistant_valid for _, _, t in turns), (name, task_id)
            if name == "heuristic":  # ranks ten of the pharmacy's own products every turn
                for _, _, t in turns:
                    assert len(t.ranking) == 10 and set(t.ranking) <= set(env.unwrapped.index.products)
            wins[name] += info["termination"] == "success_cart_added"
    assert wins["heuristic"] >= TASKS // 2, wins
    assert wins["heuristic"] > wins["random"], wins


def test_validate_holds_the_folder_to_its_expected_counts(tmp_path):
    folder = tmp_path / "pharmacy"
    shutil.copytree(PHARMACY, folder)
    spec = json.loads((folder / "store.json").read_text())
    assert spec["expected"]["products"] == 72
    spec["expected"]["products"] = 71
    (folder / "store.json").write_text(json.dumps(spec))
    checked = _assets("validate", str(folder))
    assert checked.returncode != 0
    assert "71" in checked.stderr and "72" in checked.stderr
