"""Hand-made trajectory records for the eval tests (their stores: the records world of tests/world.py)."""

from __future__ import annotations

import json

from situ_gym.records import EpisodeRecord, ExecutionResult, ToolCall, TurnRecord


def call(name, target_id=None, **arguments):
    return ToolCall(name=name, arguments=arguments, target_id=target_id)


def turn(n, *, ranking=None, raw=None, expected=None, actual=None, action_type="Navigate", **kw):
    """A TurnRecord; ``ranking=None`` means the output had no ranking key at all."""
    if raw is None:
        obj = {"response": f"turn {n}"}
        if ranking is not None:
            obj["ranking"] = ranking
        raw = json.dumps(obj)
    return TurnRecord(
        turn=n,
        assistant_raw=raw,
        assistant_valid=True,
        response=kw.pop("response", f"turn {n}"),
        action_type=action_type,
        ranking=ranking or [],
        expected_user_action=expected,
        user_action=actual,
        result=ExecutionResult(ok=True, message="ok"),
        **kw,
    )


def episode(turns=(), *, cart=(), store="supermarket", subset=0, task_id="t1", repeat=0,
            reference_set=(), termination=None, agent="test", env_id=None):
    if termination is None:
        termination = "success_cart_added" if cart else "turn_limit"
    return EpisodeRecord(
        episode_id=f"{task_id}#r{repeat}",
        env_id=env_id or ("SituRec-Supermarket-v0" if store == "supermarket" else "SituRec-HomeFurnishings-v0"),
        store=store,
        task_id=task_id,
        profile_id="p1",
        subset=subset,
        seed=repeat,
        agent=agent,
        user="rule",
        target_id="a",
        reference_set=list(reference_set),
        budget=20.0,
        turns=list(turns),
        cart=list(cart),
        termination=termination,
    )
