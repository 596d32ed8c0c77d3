"""Broken asset copies give one AssetError naming file/record/field (never OverflowError or
UnicodeDecodeError), and the assets CLI answers with one line, never a traceback."""

import json
import shutil
from pathlib import Path

import pytest

from situ_gym.assets.__main__ import main as assets_main
from situ_gym.scene.loader import data_file, load_scene
from situ_gym.scene.validate import AssetError


def _copy(tmp_path: Path) -> Path:
    """Both stores' packaged files under tmp_path; returns the root."""
    for store in ("supermarket", "home_furnishings"):
        for name in ("scene.json", "tasks.json"):
            dst = tmp_path / store / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            with data_file(store, name).open("rb") as src, dst.open("wb") as out:
                shutil.copyfileobj(src, out)
    return tmp_path


def _edit_first_product(root: Path, **changes) -> None:
    path = root / "supermarket" / "scene.json"
    scene = json.loads(path.read_text())
    scene["products"][0].update(changes)
    path.write_text(json.dumps(scene))  # json writes Infinity for float("inf")


@pytest.mark.parametrize(
    ("changes", "field", "needle"),
    [
        ({"price": float("inf")}, "price", "finite"),
        ({"price": float("nan")}, "price", "finite"),
        ({"name": ""}, "name", "at least 1 character"),
        ({"name": "   "}, "name", "pattern"),
        ({"brand": ""}, "brand", "at least 1 character"),
    ],
)
def test_bad_product_values_name_the_record_and_field(tmp_path, changes, field, needle):
    root = _copy(tmp_path)
    _edit_first_product(root, **changes)
    with pytest.raises(AssetError) as info:
        load_scene("supermarket", root)
    err = info.value
    assert err.field == field and err.record == json.loads(
        (root / "supermarket" / "scene.json").read_text())["products"][0]["id"]
    assert needle in err.message


def test_non_utf8_file_is_an_asset_error(tmp_path):
    root = _copy(tmp_path)
    path = root / "supermarket" / "scene.json"
    path.write_bytes(path.read_bytes().replace(b'"name"', b'"n\xe9me"', 1))
    with pytest.raises(AssetError, match="not UTF-8 text"):
        load_scene("supermarket", root)


def test_root_naming_a_file_is_an_asset_error(tmp_path):
    not_a_dir = tmp_path / "data.json"
    not_a_dir.write_text("{}")
    with pytest.raises(AssetError, match="cannot read the file"):
        load_scene("supermarket", not_a_dir)


@pytest.mark.parametrize("command", ["stats", "validate"])
def test_cli_on_a_broken_copy_prints_one_line(tmp_path, capsys, command):
    root = _copy(tmp_path)
    _edit_first_product(root, price=float("inf"))
    assert assets_main([command, "--root", str(root)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("INVALID: ") and "price" in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("command", ["stats", "validate"])
def test_cli_root_that_is_a_file_is_a_one_line_error(tmp_path, capsys, command):
    not_a_dir = tmp_path / "scene.json"
    not_a_dir.write_text("{}")
    with pytest.raises(SystemExit) as exc:
        assets_main([command, "--root", str(not_a_dir)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" not in err and len(err.strip().splitlines()) == 1
    assert err.strip().endswith("is not a directory (expected <root>/<store>/scene.json)")


def test_generate_into_a_path_under_a_file_is_a_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SystemExit) as exc:
        assets_main(["generate", "--out", str(blocker / "data")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "is not a directory" in err and len(err.splitlines()) == 1
