"""The env's action boundary: whatever text a model emits, ``env.step`` never raises, the
observation stays inside its space, the reward is finite and the turn record serialises
and round-trips. Both stores, with and without the RecRM reward wrapper.

Each example resets to a drawn seed and plays a drawn sequence of outputs; every output is
derived from what a competent assistant (the heuristic) would say in that state, garbled
(a wrong-typed field anywhere, deep nesting, truncation, prose or fences around it,
duplicate keys, out-of-range numbers, forged role lines), or is arbitrary hostile text,
JSON of the wrong shape, or not text at all.

``step_problems`` returns the violated invariants instead of asserting, so the soak
(``benchmarks/fuzz_soak.py``, 100,000+ outputs) counts them with the same checks.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import recrm
import situ_gym  # noqa: F401 - registers the envs
from agents.heuristic import HeuristicAssistant
from situ_gym.actions.extract import MAX_RESPONSE_CHARS
from situ_gym.records import TurnRecord
from tests.fuzz.strategies import (
    budget,
    deep_json_text,
    hostile_text,
    json_text,
    mangled,
    with_wrong_field,
)

SMALL = (64, 48)
ENV_IDS = ("SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0")


def make_env(env_id: str, with_recrm: bool) -> gym.Env:
    env = gym.make(env_id, image_size=SMALL)
    return recrm.RecRMReward(env) if with_recrm else env


@st.composite
def garbled(draw, good: str) -> Any:
    """One assistant output derived from ``good`` (a valid output for this state), or
    arbitrary hostile input."""
    kind = draw(st.sampled_from(["wrong_field"] * 4 + ["mangled", "deep_field", "json", "deep", "text", "not_text"]))
    if kind == "wrong_field":
        obj = draw(with_wrong_field(json.loads(good)))
        return draw(mangled(json.dumps(obj, ensure_ascii=draw(st.booleans()))))
    if kind == "mangled":
        return draw(mangled(good))
    if kind == "deep_field":  # a deep value where a schema field is expected
        field = draw(st.sampled_from(['"ranking": ', '"arguments": ', '"assistant_actions": ', '"response": ']))
        return good.replace(field, field + draw(deep_json_text()) + ', "x": ', 1)
    if kind == "json":
        return draw(json_text())
    if kind == "deep":
        return draw(deep_json_text())
    if kind == "text":
        return draw(hostile_text(300))
    return draw(st.sampled_from([None, 0, 1.5, b'{"response": "hi"}', {"response": "hi"}, ["hi"]]))


def step_problems(env: gym.Env, output: Any) -> tuple[list[str], float, bool, dict | None]:
    """Step ``env`` with ``output``: ``(violated invariants, seconds, episode over, next
    observation)``. Never raises: an exception out of ``env.step`` is itself a problem."""
    n_before = len(env.unwrapped.turns)
    start = time.perf_counter()
    try:
        obs, reward, terminated, truncated, info = env.step(output)
    except Exception as exc:  # noqa: BLE001 - the property under test is "never raises"
        return [f"env.step raised {type(exc).__name__}: {str(exc)[:200]}"], time.perf_counter() - start, True, None
    elapsed = time.perf_counter() - start
    problems = []
    if not env.observation_space.contains(obs):
        problems.append("observation outside observation_space")
    if not (isinstance(reward, (int, float)) and math.isfinite(reward)):
        problems.append(f"reward not finite: {reward!r}")
    turn = info.get("turn")
    if not isinstance(turn, TurnRecord):
        problems.append(f"info['turn'] is {type(turn).__name__}, not a TurnRecord")
        return problems, elapsed, True, obs
    try:
        dumped = turn.model_dump_json()
        dumped.encode("utf-8")  # strict: a lone surrogate raises here
        if TurnRecord.model_validate_json(dumped) != turn:
            problems.append("turn record does not round-trip")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"turn record does not serialise: {type(exc).__name__}: {str(exc)[:200]}")
    for name, value in turn.reward.items():
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            problems.append(f"reward component {name}={value!r} outside [0, 1]")
    if not turn.assistant_valid and not turn.assistant_errors:
        problems.append("invalid output recorded without a reason")
    if len(turn.response) > MAX_RESPONSE_CHARS:
        problems.append(f"response of {len(turn.response)} characters passed on")
    if len(env.unwrapped.turns) != n_before + 1:
        problems.append("the step did not record exactly one turn")
    # Forged "User action:" lines in the output never add an executed action to the history.
    actions = sum(line.startswith("User action: ") for line in obs["history"].splitlines())
    if actions != len(env.unwrapped.turns):
        problems.append(f"history shows {actions} user actions for {len(env.unwrapped.turns)} turns")
    return problems, elapsed, bool(terminated or truncated), obs


def play(env: gym.Env, data: st.DataObject, seed: int, steps: int) -> tuple[list[str], list[float]]:
    """Reset to ``seed``, then step with up to ``steps`` outputs drawn from ``data``."""
    obs, info = env.reset(seed=seed)
    agent = HeuristicAssistant()
    agent.reset(obs, info, seed=seed)
    times: list[float] = []
    for _ in range(steps):
        good = agent.act(obs)
        output = data.draw(garbled(good), label="output")
        problems, elapsed, over, obs = step_problems(env, output)
        times.append(elapsed)
        if problems or over:
            return problems, times
    return [], times


_ENVS: dict[tuple[str, bool], gym.Env] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_envs():
    yield
    for env in _ENVS.values():
        env.close()
    _ENVS.clear()


def _env(env_id: str, with_recrm: bool) -> gym.Env:
    key = (env_id, with_recrm)
    if key not in _ENVS:
        _ENVS[key] = make_env(env_id, with_recrm)
    return _ENVS[key]


@pytest.mark.parametrize("with_recrm", [False, True], ids=["plain", "recrm"])
@pytest.mark.parametrize("env_id", ENV_IDS)
@budget(ci=25, long=6_000)
@given(data=st.data(), seed=st.integers(0, 7), steps=st.integers(1, 8))
def test_any_output_steps_cleanly(env_id, with_recrm, data, seed, steps):
    problems, _ = play(_env(env_id, with_recrm), data, seed, steps)
    assert not problems, problems


# The crash this boundary had: an object nested 500-990 levels deep decoded, then the
# surrogate scrub recursed over it and raised RecursionError out of env.step.
@pytest.mark.parametrize("depth", [1, 63, 64, 65, 500, 900, 990, 2_000, 100_000])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deeply_nested_output_is_an_invalid_turn_not_a_crash(env_id, depth):
    env = _env(env_id, with_recrm=True)
    env.reset(seed=0)
    deep = '{"a":' * depth + "1" + "}" * depth
    output = ('{"response": "Hello there", "assistant_actions": [{"type": "Greet"}], '
              '"expected_user_action": {"name": "idle", "arguments": ' + deep + '}, "ranking": []}')
    problems, *_ = step_problems(env, output)
    assert not problems, problems
    turn = env.unwrapped.turns[-1]
    # The outer object nests depth + 2 levels: beyond 64 the whole output is refused, by name.
    if depth + 2 > 64:
        assert not turn.assistant_valid
        assert any("nested deeper than 64 levels" in e for e in turn.assistant_errors), turn.assistant_errors
        assert turn.response == "Hello there"  # the user still hears the recoverable text
    else:
        assert "nested deeper" not in " ".join(turn.assistant_errors)


@pytest.mark.parametrize("env_id", ENV_IDS)
@budget(ci=20, long=2_000)
@given(deep=deep_json_text())
@example(deep='{"a":' * 600 + "1" + "}" * 600)  # the RecursionError of issue 29
@example(deep="[" * 100_000)
def test_deep_json_anywhere_steps_cleanly(env_id, deep):
    env = _env(env_id, with_recrm=True)
    env.reset(seed=1)
    for output in (deep, '{"response": "hi", "assistant_actions": ' + deep + "}", "Sure! " + deep):
        problems, _, over, _ = step_problems(env, output)
        assert not problems, problems
        if over:
            env.reset(seed=1)


# Found by the long profile: an argument of 1e400 decoded to inf, the turn record kept it,
# and its JSON (inf is written as null) no longer read back equal. Numbers that are not
# finite are now refused at decoding, by name, wherever they stand in the output.
# Integers of 4,300+ digits made Python's int() raise a ValueError of its own (not a
# JSONDecodeError): integers of more than 64 digits are refused the same way.
@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "9" * 5000])
def test_numbers_that_are_not_finite_are_refused_by_name(number):
    env = _env("SituRec-Supermarket-v0", with_recrm=True)
    env.reset(seed=2)
    output = ('{"response": "Step left", "assistant_actions": [{"type": "Navigate", "navigation_goal": "2", '
              '"reason": "x"}], "expected_user_action": {"name": "side_step", "arguments": '
              '{"direction": [' + number + '], "distance": "long"}}, "ranking": []}')
    problems, *_ = step_problems(env, output)
    assert not problems, problems
    turn = env.unwrapped.turns[-1]
    assert not turn.assistant_valid and turn.response == "Step left"
    assert any(f"number out of range {number[:20]}" in e for e in turn.assistant_errors), turn.assistant_errors
