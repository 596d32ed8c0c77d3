"""The list of departures from the papers is the docs page, and every row is tested in both protocols."""

from __future__ import annotations

import ast
from pathlib import Path

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.protocol import DEPARTURES, PROTOCOLS, check_protocol, markdown

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_page_is_written_from_the_list():
    page = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert page == markdown(), "docs/protocol.md is stale: run python -m situ_gym.protocol > docs/protocol.md"


def test_the_readme_links_the_docs_page():
    assert "docs/protocol.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("departure", DEPARTURES, ids=lambda d: d.key)
def test_every_row_has_a_test_of_each_protocol(departure):
    path = Path(__file__).with_name(f"test_{departure.key}.py")
    assert path.exists(), f"{departure.key}: no tests/protocol/{path.name}"
    tests = [n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    for protocol in PROTOCOLS:
        assert any(protocol in name for name in tests), f"{path.name} has no test naming {protocol!r}"


def test_keys_are_unique_and_every_field_is_written():
    assert len({d.key for d in DEPARTURES}) == len(DEPARTURES)
    for d in DEPARTURES:
        assert all(getattr(d, f).strip() for f in ("section", "paper", "default", "why", "restore")), d.key


@pytest.mark.parametrize("bad", ["Paper", "", None, 1, ["paper"]])
def test_an_unknown_protocol_is_refused_naming_the_choices(bad):
    with pytest.raises(ValueError, match="protocol must be one of"):
        check_protocol(bad)
    with pytest.raises(ValueError, match="protocol must be one of"):
        gym.make("SituRec-Supermarket-v0", protocol=bad)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_env_tells_the_assistant_its_protocol_and_ablation(protocol):
    from agents.base import agent_info

    env = gym.make("SituRec-Supermarket-v0", protocol=protocol, ablation="no_ego_view")
    _, info = env.reset(seed=0)
    assert env.unwrapped.protocol == protocol
    assert agent_info(info) == {"store": "supermarket", "ablation": "no_ego_view", "protocol": protocol}
