"""Turn and episode records as the env writes them, in the reward world of tests/world.py (RecRM tests)."""

from __future__ import annotations

import json

from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord


def output(
    response: str,
    action: dict | None = None,
    ranking: list[str] | None = None,
    eua: dict | None = None,
) -> str:
    obj = {
        "response": response,
        "assistant_actions": [action or {"type": "AskPreference"}],
        "ranking": ranking or [],
    }
    if eua is not None:
        obj["expected_user_action"] = eua
    return json.dumps(obj)


def turn(
    response: str,
    action_type: str = "AskPreference",
    *,
    n: int = 1,
    action: dict | None = None,
    recommended_id: str | None = None,
    ranking: list[str] | None = None,
    errors: list[str] | None = None,
    visible: list[str] | None = None,
    eua: ToolCall | None = None,
    user: str = "",
    revealed: list[str] | None = None,
    held: str | None = None,
    cart: list[str] | None = None,
    raw: str | None = None,
) -> TurnRecord:
    """A TurnRecord as the env would write it; ``eua`` defaults to a legal idle."""
    action = {"type": action_type, **(action or {})}
    if eua is None:
        eua = ToolCall(name="idle", arguments={})
    return TurnRecord(
        turn=n,
        assistant_raw=raw
        if raw is not None
        else output(response, action, ranking, {"name": eua.name, "arguments": eua.arguments}),
        assistant_valid=not errors,
        assistant_errors=errors or [],
        response=response,
        action_type=action_type,
        action=action,
        recommended_id=recommended_id,
        expected_user_action=eua,
        ranking=ranking or [],
        user_utterance=user,
        visible_before=visible
        if visible is not None
        else ["sm_f02", "sm_p004", "sm_p005", "sm_p008"],
        held_item=held,
        cart=cart or [],
        revealed=revealed or [],
    )


def recommend(
    response: str,
    display_name: str,
    product_id: str | None,
    *,
    visible_now: bool = True,
    reason: str = "x y z",
    n: int = 3,
    **fields,
) -> TurnRecord:
    """A Recommend turn naming ``display_name``; ``product_id`` is what the env resolved it to."""
    action = {"display_name": display_name, "visible_now": visible_now, "reason": reason}
    return turn(response, "Recommend", n=n, action=action, recommended_id=product_id, **fields)


def honest_recommend(n: int = 3) -> TurnRecord:
    """What a good heuristic assistant says once category, budget and nuts are known."""
    return recommend(
        "The Sunny Fields Gluten-Free Oat Cereal is $4.99, gluten-free and made without nuts, so it fits your kids and your budget.",
        "Sunny Fields Gluten-Free Oat Cereal",
        "sm_p004",
        reason="gluten-free, nut-free and under budget",
        n=n,
        ranking=["sm_p004", "sm_p008", "sm_p005"],
        eua=ToolCall(name="pick_up_item", arguments={"item": "a"}, target_id="sm_p004"),
    )


def opening_history() -> list[TurnRecord]:
    """Two earlier turns in which the user revealed category and budget."""
    return [
        turn(
            "Hi! What are you shopping for today?",
            "Greet",
            n=1,
            user="I need some breakfast cereal.",
            revealed=["category"],
        ),
        turn(
            "Any price range in mind?",
            "AskPreference",
            n=2,
            user="Under six dollars please.",
            revealed=["budget"],
        ),
    ]


def reward_episode(**fields) -> EpisodeRecord:
    """An EpisodeRecord of the reward task ``sm_t001`` without turns; ``fields`` override."""
    record = {
        "episode_id": "sm_t001#a",
        "env_id": "SituRec-Supermarket-v0",
        "store": "supermarket",
        "task_id": "sm_t001",
        "profile_id": "pr_01",
        "subset": 0,
        "seed": 0,
        "agent": "a",
        "user": "rule",
        "target_id": "sm_p004",
        "reference_set": ["sm_p004", "sm_p008"],
        "budget": 6.0,
        "termination": "turn_limit",
    }
    return EpisodeRecord(**{**record, **fields})
