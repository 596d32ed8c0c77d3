"""Corrupted copies of the packaged data give errors naming the file, record and field."""

import json
import shutil
from pathlib import Path

import pytest

from situ_gym.scene.loader import data_file, load_scene, load_task_bank
from situ_gym.scene.model import Scene
from situ_gym.scene.validate import AssetError, check_colors, check_scene, check_table2


def _copy(tmp_path: Path, store: str) -> tuple[dict, dict]:
    for name in ("scene.json", "tasks.json"):
        dst = tmp_path / store / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        with data_file(store, name).open("rb") as src, dst.open("wb") as out:
            shutil.copyfileobj(src, out)
    return (json.loads((tmp_path / store / "scene.json").read_text()),
            json.loads((tmp_path / store / "tasks.json").read_text()))


def _write(tmp_path, store, scene=None, tasks=None):
    if scene is not None:
        (tmp_path / store / "scene.json").write_text(json.dumps(scene))
    if tasks is not None:
        (tmp_path / store / "tasks.json").write_text(json.dumps(tasks))


def _scene_error(tmp_path, store, scene) -> AssetError:
    """Write the edited ``scene`` over the copy and load it: the error it raises."""
    _write(tmp_path, store, scene)
    return _error(load_scene, store, tmp_path)


def _error(fn, *args) -> AssetError:
    with pytest.raises(AssetError) as info:
        fn(*args)
    return info.value


def _find(err: AssetError, needle: str) -> AssetError:
    """The problem whose message contains ``needle`` (a corruption may cause several)."""
    hits = [e for e in err.problems if needle in e.message]
    assert hits, [str(e) for e in err.problems]
    return hits[0]


def test_clean_copy_loads(tmp_path):
    _copy(tmp_path, "supermarket")
    assert len(load_task_bank("supermarket", tmp_path).tasks) == 100


def test_pydantic_error_names_file_record_field(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    scene["products"][4]["price"] = -2
    err = _scene_error(tmp_path, "supermarket", scene)
    assert err.file.endswith("supermarket/scene.json")
    assert err.record == scene["products"][4]["id"] and err.field == "price"
    assert "scene.json" in str(err) and "'price'" in str(err)


def test_missing_and_malformed_files(tmp_path):
    err = _error(load_scene, "home_furnishings", tmp_path)
    assert "not found" in str(err)
    _copy(tmp_path, "home_furnishings")
    (tmp_path / "home_furnishings" / "tasks.json").write_text("{not json")
    err = _error(load_task_bank, "home_furnishings", tmp_path)
    assert err.file.endswith("tasks.json") and "invalid JSON" in str(err)


def test_unknown_fixture_reference(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    scene["products"][0]["fixture_id"] = "sm_shelf_99"
    err = _scene_error(tmp_path, "supermarket", scene)
    assert (err.record, err.field) == (scene["products"][0]["id"], "fixture_id")


def test_fixture_product_list_must_match(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    scene["fixtures"][3]["product_ids"].append("sm_p999")
    err = _scene_error(tmp_path, "supermarket", scene)
    assert (err.record, err.field) == (scene["fixtures"][3]["id"], "product_ids")


def test_duplicate_id(tmp_path):
    scene, _ = _copy(tmp_path, "home_furnishings")
    scene["products"][1]["id"] = scene["products"][0]["id"]
    err = _scene_error(tmp_path, "home_furnishings", scene)
    assert err.field == "id" and "duplicate" in str(err)


def test_duplicate_and_close_colours(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    scene["products"][7]["color"] = scene["fixtures"][0]["color"]
    err = _scene_error(tmp_path, "supermarket", scene)
    assert err.field == "color" and "duplicate colour" in str(err)
    with pytest.raises(AssetError, match="too close"):
        check_colors([("a", (100, 100, 100)), ("b", (100, 111, 100))])
    with pytest.raises(AssetError, match="1..15"):
        check_colors([("a", (100, 8, 100))])
    with pytest.raises(AssetError, match="WALL"):
        check_colors([("a", (248, 248, 248))])
    check_colors([("a", (100, 100, 100)), ("b", (100, 112, 100))])  # 12 apart is enough


def test_instance_outside_fixture(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    inst = scene["products"][10]["instances"][0]
    inst["position"][0] += 3.0
    err = _scene_error(tmp_path, "supermarket", scene)
    assert (err.record, err.field) == (inst["id"], "position")
    assert "outside fixture" in str(err)


def test_instance_off_level(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    p = scene["products"][20]
    for inst in p["instances"]:
        inst["position"][2] += 0.2
    err = _scene_error(tmp_path, "supermarket", scene)
    assert (err.record, err.field) == (p["instances"][0]["id"], "position")
    assert "not a level" in str(err)


def test_instance_outside_area(tmp_path):
    scene, _ = _copy(tmp_path, "home_furnishings")
    inst = scene["products"][30]["instances"][0]
    inst["position"][1] += 20.0
    err = _scene_error(tmp_path, "home_furnishings", scene)
    assert (err.record, err.field) == (inst["id"], "position") and "outside area" in str(err)


def test_narrow_doorway(tmp_path):
    scene, _ = _copy(tmp_path, "home_furnishings")
    s = scene["stores"][2]
    x0, y0, x1, y1 = s["doorway"]
    s["doorway"] = [x0, y0, x0 + 1.2, y1]
    err = _scene_error(tmp_path, "home_furnishings", scene)
    assert (err.record, err.field) == (s["id"], "doorway")


def test_waypoint_graph_errors(tmp_path):
    scene, _ = _copy(tmp_path, "supermarket")
    w0, w1 = scene["waypoints"][0], scene["waypoints"][1]
    w0["neighbors"].append("sm_w99")
    err = _scene_error(tmp_path, "supermarket", scene)
    assert (err.record, err.field) == (w0["id"], "neighbors") and "unknown" in str(err)
    w0["neighbors"].remove("sm_w99")
    w1["neighbors"] = [n for n in w1["neighbors"] if n != w0["id"]]
    if w1["id"] not in w0["neighbors"]:
        w0["neighbors"].append(w1["id"])
    _write(tmp_path, "supermarket", scene)
    err = _error(check_scene, Scene.model_validate(scene), "x.json")
    assert "not symmetric" in str(err)


def test_waypoint_on_an_obstacle():
    scene = load_scene("supermarket").model_dump()
    shelf = scene["fixtures"][0]["footprint"]
    scene["waypoints"][5]["x"] = (shelf[0] + shelf[2]) / 2
    scene["waypoints"][5]["y"] = (shelf[1] + shelf[3]) / 2
    err = _find(_error(check_scene, Scene.model_validate(scene), "x.json"), "free floor")
    assert (err.record, err.field) == (scene["waypoints"][5]["id"], "x")
    assert err.file == "x.json"


def test_aisle_too_narrow():
    scene = load_scene("supermarket").model_dump()
    f = scene["fixtures"][1]  # second gondola of the first row, 2.6 m east of the first
    x0, y0, x1, y1 = f["footprint"]
    f["footprint"] = (x0 - 1.0, y0, x1 - 1.0, y1)
    err = _find(_error(check_scene, Scene.model_validate(scene), "x.json"), "aisle")
    assert (err.record, err.field) == (f["id"], "footprint")


def test_approach_point_must_be_free_and_facing():
    scene = load_scene("supermarket").model_dump()
    a = scene["fixtures"][0]["approach"]["front"]
    a["yaw"] = (a["yaw"] + 180.0) % 360.0
    err = _error(check_scene, Scene.model_validate(scene), "x.json")
    assert (err.record, err.field) == (scene["fixtures"][0]["id"], "approach.front")


def test_task_errors(tmp_path):
    scene, tasks = _copy(tmp_path, "supermarket")
    products = {p["id"]: p for p in scene["products"]}
    t = tasks["tasks"][0]
    t["budget"] = products[t["target_product_id"]]["price"]
    _write(tmp_path, "supermarket", tasks=tasks)
    err = _error(load_task_bank, "supermarket", tmp_path)
    assert (err.record, err.field) == (t["id"], "budget") and "not above" in str(err)
    assert err.file.endswith("tasks.json")


@pytest.mark.parametrize(
    ("edit", "field", "needle"),
    [
        (lambda t, others: t["reference_set"].remove(t["target_product_id"]), "reference_set",
         "not in its reference set"),
        (lambda t, others: t["reference_set"].append(others[0]), "reference_set", "recomputed"),
        (lambda t, others: t.update(profile_id="sm_u99"), "profile_id", "unknown profile"),
        (lambda t, others: t.update(target_product_id="sm_p999"), "target_product_id", "unknown"),
        (lambda t, others: t.update(category="tea" if t["category"] != "tea" else "coffee"),
         "category", "target's category"),
        (lambda t, others: t["required_tags"].append("flavour:nonexistent"), "required_tags",
         "lacks"),
    ],
)
def test_task_cross_checks(tmp_path, edit, field, needle):
    scene, tasks = _copy(tmp_path, "supermarket")
    t = tasks["tasks"][3]
    others = [p["id"] for p in scene["products"] if p["category"] != t["category"]]
    edit(t, others)
    _write(tmp_path, "supermarket", tasks=tasks)
    err = _error(load_task_bank, "supermarket", tmp_path)
    assert (err.record, err.field) == (t["id"], field)
    assert needle in str(err)


def test_table2_mismatch_is_reported():
    scene = load_scene("home_furnishings").model_dump()
    scene["waypoints"] = scene["waypoints"][:-1]
    for w in scene["waypoints"]:
        w["neighbors"] = [n for n in w["neighbors"] if n != "hf_w38"]
    err = _error(check_table2, Scene.model_validate(scene), None, "x.json")
    assert err.field == "waypoints" and "Table 2 says 38" in str(err)
