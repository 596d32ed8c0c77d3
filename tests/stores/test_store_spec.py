"""A store is data: the registry, store.json's errors, folder stores, and no store-name
comparison outside the spec files."""

import ast
import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from situ_gym.scene.loader import load_scene, load_task_bank
from situ_gym.stores import (
    PAPER_STORES,
    StoreError,
    read_store_spec,
    register_store_folder,
    registered_stores,
    store_folder,
    store_spec,
)

ROOT = Path(__file__).resolve().parents[2]
# Where a store's id may be spelled: the registry, the paper stores' own builders and vocabularies.
SPEC_FILES = {"situ_gym/stores/__init__.py", "situ_gym/stores/spec.py", "situ_gym/assets/supermarket.py",
              "situ_gym/assets/home.py", "situ_gym/assets/vocab_supermarket.py", "situ_gym/assets/vocab_home.py"}
CODE_DIRS = ("situ_gym", "agents", "eval", "recrm", "train", "benchmarks")


def _store_literals(node: ast.AST) -> list[str]:
    """Store ids spelled as string constants directly in ``node`` (or in a tuple/list/set of them)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [n.value for n in items if isinstance(n, ast.Constant) and n.value in PAPER_STORES]


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = [s for side in (node.left, *node.comparators) for s in _store_literals(side)]
            if names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: compares a store's name ({names[0]!r})")
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in PAPER_STORES]
            if keys:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: a table keyed by store names ({keys[0]!r})")
    return found


def test_no_module_outside_the_spec_files_compares_a_store_name():
    files = [p for d in CODE_DIRS for p in (ROOT / d).rglob("*.py")
             if str(p.relative_to(ROOT)) not in SPEC_FILES and ".venv" not in p.parts]
    assert len(files) > 100
    problems = [v for p in files for v in _violations(p)]
    assert problems == [], "\n".join(problems)


def test_the_scan_catches_each_form_of_comparison(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('a = store == "supermarket"\nb = s in ("home_furnishings", "x")\n'
                   'c = {"supermarket": 1}\nd = "home_furnishings" != s\n', encoding="utf-8")
    ROOT_ = tmp_path  # relative paths for the message
    found = [v.split(": ", 1)[1] for v in _violations_under(bad, ROOT_)]
    assert found == ["compares a store's name ('supermarket')", "compares a store's name ('home_furnishings')",
                     "a table keyed by store names ('supermarket')", "compares a store's name ('home_furnishings')"]


def _violations_under(path: Path, root: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, root
    try:
        return _violations(path)
    finally:
        ROOT = saved


def test_the_paper_stores_come_from_their_store_json_in_the_paper_order():
    assert registered_stores()[:2] == PAPER_STORES == ("supermarket", "home_furnishings")
    sm, hf = (store_spec(s) for s in PAPER_STORES)
    assert (sm.env_id, hf.env_id) == ("SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0")
    assert (sm.layout, hf.layout) == ("fixtures", "stores")
    # App. C.1's legal sets: the layout fixes the inspect tool and the targeted moves.
    assert sm.legal_tools[-5:] == ("move_to_fixture", "pick_up_item", "add_to_cart", "drop_item", "idle")
    assert hf.legal_tools[-6:] == ("move_to_store", "move_to_area", "check_item", "add_to_cart",
                                   "do_not_add_to_cart", "idle")
    assert (sm.inspect_tool, hf.inspect_tool, sm.holds_items, hf.holds_items) == ("pick_up_item", "check_item", True, False)
    # Table 2 lives in store.json, and the packaged data reproduce it.
    assert (sm.expected["products"], sm.expected["instances"], hf.expected["products"], hf.expected["instances"]) == (
        233, 1324, 222, 244)
    for s in PAPER_STORES:
        assert store_folder(s) == (ROOT / "situ_gym" / "assets" / "data" / s)


@pytest.mark.parametrize(("content", "message"), [
    (None, "no store.json"),
    ("{not json", "store.json:1: not JSON"),
    ('{"id": "xy"}', "store.json: name: Field required (and "),
    ("BAD_LAYOUT", "store.json: layout: Input should be 'fixtures' or 'stores'"),
])
def test_a_broken_store_json_is_one_line_naming_the_file_and_field(tmp_path, content, message):
    folder = tmp_path / "mystore"
    folder.mkdir()
    if content == "BAD_LAYOUT":
        spec = json.loads((store_folder("supermarket") / "store.json").read_text())
        content = json.dumps({**spec, "id": "mystore", "env_id": "SituRec-Mystore-v0", "layout": "aisles"})
    if content is not None:
        (folder / "store.json").write_text(content, encoding="utf-8")
    with pytest.raises(StoreError) as err:
        register_store_folder(folder)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(folder) in str(err.value)
    assert "mystore" not in registered_stores()


def test_gym_make_custom_needs_a_store_and_names_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="store must be a registered store id or a store folder"):
        gym.make("SituRec-Custom-v0")
    with pytest.raises(ValueError, match="not a store folder"):
        gym.make("SituRec-Custom-v0", store=str(tmp_path / "nowhere"))


def _copy_of_supermarket(tmp_path: Path, store_id: str) -> Path:
    """The Supermarket's folder under another id (the files' "store" fields rewritten)."""
    folder = tmp_path / store_id
    shutil.copytree(store_folder("supermarket"), folder)
    spec = json.loads((folder / "store.json").read_text())
    spec.update(id=store_id, name="Copy", env_id="SituRec-Copy-v0", expected={})
    (folder / "store.json").write_text(json.dumps(spec), encoding="utf-8")
    for name in ("scene.json", "tasks.json"):
        text = (folder / name).read_text()
        (folder / name).write_text(text.replace('"store": "supermarket"', f'"store": "{store_id}"'), encoding="utf-8")
    return folder


def _play(env, n_turns: int = 6) -> list[str]:
    from agents.heuristic import HeuristicAssistant

    obs, info = env.reset(seed=3, options={"task_id": "sm_u01_t1"})
    agent = HeuristicAssistant()
    agent.reset(obs, {"store": info["store"]}, seed=3)
    said = []
    for _ in range(n_turns):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        said.append(f"{action[:200]}|{info['turn'].user_utterance}|{reward:.6f}")
        if terminated or truncated:
            break
    return said


def test_a_folder_store_plays_exactly_as_the_store_it_copies(tmp_path):
    folder = _copy_of_supermarket(tmp_path, "sm_copy")
    copy = gym.make("SituRec-Custom-v0", store=str(folder))
    assert copy.unwrapped.store == "sm_copy" and "sm_copy" in registered_stores()
    assert len(load_scene("sm_copy").products) == len(load_scene("supermarket").products)
    assert len(load_task_bank("sm_copy").tasks) == 100
    # Registered under its own env id too, bound to the folder (a vector-env worker finds it).
    assert gym.spec("SituRec-Copy-v0").kwargs["store"] == str(folder.resolve())
    original = gym.make("SituRec-Supermarket-v0")
    assert _play(copy) == _play(original)
    # The same folder registers again quietly; another folder under the same id is refused.
    assert register_store_folder(folder).id == "sm_copy"
    other = _copy_of_supermarket(tmp_path / "b", "sm_copy")
    with pytest.raises(StoreError, match="already the store of"):
        register_store_folder(other)


def test_read_store_spec_round_trips_the_paper_store_json():
    for s in PAPER_STORES:
        path = store_folder(s) / "store.json"
        spec = read_store_spec(store_folder(s))
        assert json.loads(path.read_text()) == json.loads(spec.model_dump_json())
