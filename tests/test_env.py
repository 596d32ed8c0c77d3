"""SituRecEnv: Gymnasium conformance, determinism, termination rules, robustness, no leaks."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import situ_gym
from agents.base import agent_info
from situ_gym.env import SituRecEnv
from situ_gym.user import UserSimulator, UserTurn

SMALL = (160, 120)  # rendering size is irrelevant to the rules under test; keeps tests fast


def _say(response: str, action: dict | None = None, expected: dict | None = None, ranking=()) -> str:
    return json.dumps(
        {
            "response": response,
            "assistant_actions": [action or {"type": "AskPreference"}],
            "expected_user_action": expected or {"name": "idle", "arguments": {}},
            "ranking": list(ranking),
        }
    )


class ScriptedUser(UserSimulator):
    """Plays a fixed list of tool calls (user handles chosen from the live view)."""

    name = "scripted"

    def __init__(self, plan):
        self.plan = plan  # callables: UserObservation -> (utterance, tool_call, gave_up)

    def reset(self, task, profile, index, rng):
        self.step = 0

    def respond(self, obs):
        fn = self.plan[min(self.step, len(self.plan) - 1)]
        self.step += 1
        utterance, call, gave_up = fn(obs)
        return UserTurn(utterance=utterance, tool_call=call, gave_up=gave_up, intent="give_up" if gave_up else "explore")


def idle(obs):
    return "Hmm, let me think.", {"name": "idle", "arguments": {}}, False


def walk_into_wall(obs):
    return "I'll keep walking.", {"name": "move_backward", "arguments": {"distance": "long"}}, False


def buy_first_visible(obs):
    products = [v for v in obs.view.visible if v.kind == "product"]
    if not products:
        return idle(obs)
    return "I'll take it.", {"name": "add_to_cart", "arguments": {"item": products[0].handle}}, False


def give_up(obs):
    return "No thanks, I'll leave it. Goodbye.", {"name": "idle", "arguments": {}}, True


def make(env_id="SituRec-Supermarket-v0", **kwargs):
    kwargs.setdefault("image_size", SMALL)
    return gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", situ_gym.ENV_IDS)
def test_check_env_passes_without_warnings(env_id, recwarn):
    env = make(env_id, disable_env_checker=True).unwrapped
    check_env(env, skip_render_check=True)
    assert not recwarn.list, [f"{w.filename}: {w.message}" for w in recwarn]


def test_make_without_import_prefix():
    env = gym.make("situ_gym:SituRec-HomeFurnishings-v0", image_size=SMALL)
    obs, info = env.reset(seed=0)
    assert info["store"] == "home_furnishings"
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("env_id", situ_gym.ENV_IDS)
def test_same_seed_same_episode(env_id):
    actions = [
        _say("Hello! What are you looking for today?", {"type": "Greet"}),
        _say("What is your budget?"),
        "not json at all",
        _say("Could you look around to your left?", expected={"name": "turn", "arguments": {"direction": "left", "angle": 90}}),
    ]

    def run():
        env = make(env_id)
        obs, info = env.reset(seed=7)
        trace = [(obs, info["task_id"])]
        for a in actions:
            obs, reward, term, trunc, info = env.step(a)
            trace.append((obs, reward, term, trunc, info["turn"].model_dump()))
            if term or trunc:
                break
        return trace

    first, second = run(), run()
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        assert a[0]["history"] == b[0]["history"]
        assert np.array_equal(a[0]["som_rgb"], b[0]["som_rgb"])
        assert a[1:] == b[1:]


def test_reset_task_id_and_seeded_choice():
    env = make()
    _, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[5]})
    assert info["task_id"] == env.unwrapped.task_ids[5]
    picks = {make().reset(seed=s)[1]["task_id"] for s in range(6)}
    assert len(picks) > 1  # the seed picks the task
    assert make().reset(seed=3)[1]["task_id"] == make().reset(seed=3)[1]["task_id"]


def test_purchase_ends_with_success_and_reward():
    env = SituRecEnv("supermarket", user=ScriptedUser([buy_first_visible]), image_size=SMALL)
    env.reset(seed=0)
    # Walk the user to the first fixture that shows products by teleporting through the backend.
    fixture = next(f for f in env.scene.fixtures if f.product_ids)
    side, pose = next(iter(fixture.approach.items()))
    from situ_gym.backends.base import Pose

    env.backend.reset(Pose(pose.x, pose.y, pose.yaw, -10.0))
    env._observe()
    assert any(v.kind == "product" for v in env.user_view.visible), "approach point shows no product"
    _, reward, terminated, truncated, info = env.step(_say("Take whatever you like."))
    assert (terminated, truncated, reward) == (True, False, 1.0)
    assert info["termination"] == "success_cart_added"
    assert info["turn"].cart


def test_purchase_takes_precedence_over_recommendation_limit():
    env = SituRecEnv("supermarket", user=ScriptedUser([idle, idle, buy_first_visible]), image_size=SMALL)
    env.reset(seed=0)
    fixture = next(f for f in env.scene.fixtures if f.product_ids)
    pose = next(iter(fixture.approach.values()))
    from situ_gym.backends.base import Pose

    env.backend.reset(Pose(pose.x, pose.y, pose.yaw, -10.0))
    env._observe()
    product = next(v for v in env.assistant_view.visible if v.kind == "product")
    name = env.index.name(product.entity_id)
    rec = {"type": "Recommend", "display_name": name, "visible_now": True, "reason": "It fits."}
    for _ in range(2):
        _, _, terminated, _, _ = env.step(_say(f"Try the {name}.", rec))
        assert not terminated
    _, _, terminated, _, info = env.step(_say(f"Try the {name}.", rec))
    assert terminated and info["termination"] == "success_cart_added"


def test_recommendation_exhaustion_counts_products_proposed_whatever_the_label():
    env = SituRecEnv("supermarket", user=ScriptedUser([idle]), image_size=SMALL)
    env.reset(seed=0)
    a, b, c = (p.name for p in env.scene.products[:3])
    turns = [
        (f"How about the {a}?", {"type": "Recommend", "display_name": a, "visible_now": False, "reason": "It fits."}),
        (f"The {a} is still my pick.", {"type": "Explain"}),  # the same product again: no new attempt
        ("Let me think about what else could work.", {"type": "Recommend", "display_name": b,
                                                      "visible_now": False, "reason": "x"}),  # names nothing
        (f"You could also try the {b}.", {"type": "Explain"}),  # a proposal labelled Explain counts
        (f"Or grab the {c} instead.", {"type": "AnswerQuestion"}),
    ]
    reasons = [env.step(_say(text, action))[4]["termination"] for text, action in turns]
    assert reasons == [None, None, None, None, "recommendation_exhausted"]


def test_moderator_ends_when_user_gives_up():
    env = SituRecEnv("supermarket", user=ScriptedUser([idle, give_up]), image_size=SMALL)
    env.reset(seed=0)
    assert env.step(_say("Hi!", {"type": "Greet"}))[4]["termination"] is None
    _, _, terminated, _, info = env.step(_say("What else can I do?"))
    assert terminated and info["termination"] == "moderator_end"


def test_motion_stall_after_three_blocked_moves():
    env = SituRecEnv("supermarket", user=ScriptedUser([walk_into_wall]), image_size=SMALL)
    env.reset(seed=0)
    reasons, displacements = [], []
    for _ in range(6):
        _, _, terminated, _, info = env.step(_say("Take your time."))
        reasons.append(info["termination"])
        displacements.append(info["turn"].result.displacement)
        if terminated:
            break
    assert reasons[-1] == "motion_stall"
    assert all(d < 0.05 for d in displacements[-3:])


def test_turn_limit_truncates():
    env = SituRecEnv("supermarket", user=ScriptedUser([idle]), image_size=SMALL, max_turns=2)
    env.reset(seed=0)
    assert env.step(_say("Hello!"))[3] is False
    _, _, terminated, truncated, info = env.step(_say("Anything else?"))
    assert (terminated, truncated, info["termination"]) == (False, True, "turn_limit")
    with pytest.raises(RuntimeError):
        env.step(_say("again"))


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "{",
        "null",
        "[1, 2, 3]",
        '{"response": 5}',
        '{"response": "hi", "assistant_actions": "Greet"}',
        json.dumps({"response": "hi", "assistant_actions": [{"type": "Teleport"}], "ranking": "x"}),
        json.dumps({"response": "go", "assistant_actions": [{"type": "Navigate"}],
                    "expected_user_action": {"name": "move_to_fixture", "arguments": {"fixture": "ZZZ"}}}),
        "x" * 300_000,
        "```json\n{\"response\": \"héllo 😀 你好\", \"assistant_actions\": []}\n```",
        "\x00\x01\x02 control",
    ],
)
def test_invalid_actions_never_raise_and_are_reported(bad):
    env = make()
    env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(bad)
    turn = info["turn"]
    assert not turn.assistant_valid and turn.assistant_errors
    assert env.observation_space.contains(obs)
    assert turn.user_utterance  # the user still answered


def test_invalid_output_keeps_recoverable_response():
    env = make()
    env.reset(seed=1)
    text = 'Sure! {"response": "Hello there, what do you need today?", "assistant_actions": []}'
    _, _, _, _, info = env.step(text)
    assert info["turn"].response == "Hello there, what do you need today?"
    assert "Hello there" in env.unwrapped._history[0]


@pytest.mark.parametrize("env_id", situ_gym.ENV_IDS)
def test_hidden_task_never_in_observation(env_id):
    """The observation depends on the hidden task only through what the shopper says."""
    env = make(env_id)
    ids = env.unwrapped.task_ids
    first, info = env.reset(seed=3, options={"task_id": ids[0]})
    other, other_info = env.reset(seed=3, options={"task_id": ids[-1]})  # other profile, target, budget
    assert info["task"].target_product_id != other_info["task"].target_product_id
    assert set(first) == {"som_rgb", "map", "pose", "history", "catalog", "visible"}
    for key, value in first.items():
        assert np.array_equal(value, other[key]) if isinstance(value, np.ndarray) else value == other[key], key
    task = other_info["task"]
    for _ in range(3):
        obs, *_ = env.step(_say("Tell me about your plans?", {"type": "AskPreference"}))
        assert all(task.request not in obs[key] for key in ("history", "visible", "catalog"))
        speakers = {line.split(":", 1)[0] for line in obs["history"].splitlines()}
        assert speakers <= {"Assistant", "User", "User action"}


def test_ablations_remove_image_and_caption():
    plain = make().reset(seed=2)[0]
    blind = make(ablation="no_ego_view").reset(seed=2)[0]
    bare = make(ablation="no_ego_view_no_caption").reset(seed=2)[0]
    assert plain["som_rgb"].any() and not blind["som_rgb"].any() and not bare["som_rgb"].any()
    assert blind["visible"] == plain["visible"]
    assert "Visible" not in bare["visible"] and "Navigation targets" in bare["visible"]
    with pytest.raises(ValueError, match="ablation"):
        make(ablation="blindfold")


def test_render_rgb_array_is_assistant_frame():
    env = make(render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    assert np.array_equal(env.render(), obs["som_rgb"])


@pytest.mark.parametrize("env_id", situ_gym.ENV_IDS)
def test_shopper_discloses_one_detail_per_turn_and_buys_within_needs(env_id):
    from agents.heuristic import HeuristicAssistant

    env = make(env_id)
    index = env.unwrapped.index
    agent = HeuristicAssistant()
    purchases = 0
    for episode in range(6):
        obs, info = env.reset(seed=episode, options={"task_id": env.unwrapped.task_ids[episode * 4]})
        task = info["task"]
        agent.reset(obs, agent_info(info))
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs))
            done = terminated or truncated
            turn = info["turn"]
            assert len(turn.revealed) <= 1, turn.revealed
            for pid in turn.cart:
                product = index.products[pid]
                assert product.price <= task.budget
                assert set(task.required_tags) <= set(product.tags)
                assert not set(task.avoided_tags) & set(product.tags)
                assert pid in task.reference_set
            purchases += reward == 1.0
    assert purchases >= 1  # the property is not vacuous


def test_async_vector_env_runs():
    envs = gym.make_vec(
        "SituRec-Supermarket-v0",
        num_envs=2,
        vectorization_mode="async",
        vector_kwargs={"shared_memory": False},
        image_size=SMALL,
    )
    try:
        obs, infos = envs.reset(seed=[0, 1])
        assert obs["som_rgb"].shape == (2, SMALL[1], SMALL[0], 3)
        obs, rewards, terminated, truncated, infos = envs.step([_say("Hello!", {"type": "Greet"})] * 2)
        assert rewards.shape == (2,) and len(obs["history"]) == 2
        assert all("Hello!" in h for h in obs["history"])
    finally:
        envs.close()


def test_home_search_turn_without_visible_waypoint_is_valid_and_rewarded():
    """A Home Navigate may have next_waypoint null while the shopper turns to find a store."""
    from recrm import RecRMReward

    env = RecRMReward(make("SituRec-HomeFurnishings-v0"))
    obs, _ = env.reset(seed=0)
    goal = next(h for h, e in env.unwrapped._assistant_fixed.items() if env.unwrapped.index.kind(e) == "area")
    action = {
        "type": "Navigate",
        "navigation_goal": goal,
        "reason": "The lamps are on display there.",
        "next_waypoint": None,
        "target_approach": "outside_doorway",
    }
    text = _say("Turn left to look for the shop.", action, {"name": "turn", "arguments": {"direction": "left", "angle": 90}})
    _, _, _, _, info = env.step(text)
    assert info["turn"].assistant_valid, info["turn"].assistant_errors
    assert info["recrm"]["components"]["instruction"] == 1.0
    # The same null waypoint with a targeted move is invalid and fails the gate.
    env.reset(seed=0)
    store = next(h for h, e in env.unwrapped._assistant_fixed.items() if env.unwrapped.index.kind(e) == "store")
    text = _say("Go in.", action, {"name": "move_to_store", "arguments": {"store": store, "approach": "inside_doorway"}})
    _, reward, _, _, info = env.step(text)
    assert not info["turn"].assistant_valid and reward == 0.0


def test_termination_order_exhaustion_then_moderator_then_stall():
    # Third recommendation on the turn the shopper gives up: exhaustion is checked first.
    env = SituRecEnv("supermarket", user=ScriptedUser([idle, idle, give_up]), image_size=SMALL)
    env.reset(seed=0)
    names = [p.name for p in env.scene.products[:3]]
    recs = [{"type": "Recommend", "display_name": n, "visible_now": False, "reason": "It fits."} for n in names]
    reasons = [env.step(_say(f"How about the {n}?", r))[4]["termination"] for n, r in zip(names, recs, strict=True)]
    assert reasons == [None, None, "recommendation_exhausted"]

    # Third blocked move on the turn the shopper gives up: the moderator comes before the stall.
    def blocked_then_quit(obs):
        _, call, _ = walk_into_wall(obs)
        return "No thanks, I'll leave it. Goodbye.", call, True

    env = SituRecEnv("supermarket", user=ScriptedUser([walk_into_wall, walk_into_wall, blocked_then_quit]), image_size=SMALL)
    env.reset(seed=0)
    from situ_gym.backends.base import Primitive

    for _ in range(20):  # back the shopper up against a wall first
        if env.backend.execute(Primitive("move_backward", {"distance": 3.0})).displacement < 0.05:
            break
    env._observe()
    for _ in range(2):
        info = env.step(_say("Take your time."))[4]
        assert info["termination"] is None and info["turn"].result.displacement < 0.05
    _, _, terminated, _, info = env.step(_say("Take your time."))
    assert info["turn"].result.displacement < 0.05  # the stall rule would fire too
    assert terminated and info["termination"] == "moderator_end"


def test_marks_of_an_unchanged_frame_are_kept_and_always_equal_fresh_ones(monkeypatch):
    """A turn that leaves the pose as it was keeps the last analysis (and with the held item
    unchanged the drawn views); every observation's marks equal those drawn afresh."""
    import situ_gym.env as env_module
    from agents.heuristic import HeuristicAssistant
    from situ_gym.som import analyse, annotate_roles

    calls = []
    monkeypatch.setattr(env_module, "analyse", lambda *a, **k: calls.append(1) or analyse(*a, **k))
    env = gym.make("SituRec-Supermarket-v0").unwrapped
    agent = HeuristicAssistant()
    new_frames, reused, held_changes = 0, 0, 0
    for task_id in env.task_ids[:3]:
        obs, info = env.reset(seed=0, options={"task_id": task_id})
        new_frames += 1
        agent.reset(obs, agent_info(info), seed=0)
        done = False
        while not done:
            before, frame, held = env.assistant_view, env.frame, env.backend.held_item
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
            same_frame = env.frame.rgb is frame.rgb
            new_frames += not same_frame
            held_changes += same_frame and env.backend.held_item != held
            reused += env.assistant_view is before
            fresh = annotate_roles(env.frame, env.index, max_depth=env.som_max_depth,
                                   building_max_depth=env.som_building_depth, held_item=env.backend.held_item)
            for role, view in (("user", env.user_view), ("assistant", env.assistant_view)):
                assert np.array_equal(view.image, fresh[role].image)
                assert view.handles == fresh[role].handles and view.visible_ids() == fresh[role].visible_ids()
            assert np.array_equal(obs["som_rgb"], fresh["assistant"].image)
    env.close()
    assert len(calls) == new_frames  # one analysis per frame the backend rendered anew
    assert reused > 0 and held_changes > 0  # both kinds of repeated frame occurred


def test_consecutive_observations_share_no_array_even_when_the_frame_repeats():
    from agents.heuristic import HeuristicAssistant

    env = gym.make("SituRec-Supermarket-v0").unwrapped
    agent = HeuristicAssistant()
    repeated = 0
    for task_id in env.task_ids[:3]:
        obs, info = env.reset(seed=0, options={"task_id": task_id})
        agent.reset(obs, agent_info(info), seed=0)
        done = False
        while not done:
            frame = env.frame
            nxt, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
            repeated += env.frame.rgb is frame.rgb
            for key, value in nxt.items():
                if isinstance(value, np.ndarray):
                    assert not np.shares_memory(value, obs[key]), key
            obs = nxt
    env.close()
    assert repeated  # the case that matters: the frame and its marks were reused


# ---------------------------------------------------------------------- marker labels in the shopper's words
def say_a_label(obs):
    """Names the first visible product by its marker label, then stands still."""
    handle = next(v.handle for v in obs.view.visible if v.kind == "product")
    return f"Is it the one labelled [{handle}]?", {"name": "idle", "arguments": {}}, False


def _first_view_with_a_product(env):
    # Turn on the spot until a product is in the user's view (the start pose may face a wall).
    for seed in range(20):
        env.reset(seed=seed, options={"task_id": env.task_ids[0]})
        if any(v.kind == "product" for v in env.user_view.visible):
            return seed
    pytest.skip("no start view with a product")


def test_a_shoppers_marker_label_is_recorded_and_changes_nothing_else():
    env = SituRecEnv("supermarket", user=ScriptedUser([say_a_label]), image_size=SMALL)
    seed = _first_view_with_a_product(env)
    handle = next(v.handle for v in env.user_view.visible if v.kind == "product")
    _, _, _, _, info = env.step(_say("Hello! What are you looking for?"))
    turn = info["turn"]
    assert turn.user_marker_disclosures == [f"[{handle}]"]
    assert turn.user_utterance == f"Is it the one labelled [{handle}]?"  # heard as said
    assert turn.user_action.name == "idle" and turn.result.ok
    # A plain line on the same turn: nothing recorded, and the rest of the turn is the same.
    plain = SituRecEnv("supermarket", user=ScriptedUser([idle]), image_size=SMALL)
    plain.reset(seed=seed, options={"task_id": plain.task_ids[0]})
    _, _, _, _, info2 = plain.step(_say("Hello! What are you looking for?"))
    assert info2["turn"].user_marker_disclosures == []
    assert info2["turn"].visible_after == turn.visible_after and info2["termination"] == info["termination"]


def test_turn_records_written_before_the_disclosure_field_still_load():
    from situ_gym.records import TurnRecord

    env = make()
    env.reset(seed=0)
    _, _, _, _, info = env.step(_say("Hello! What are you looking for?"))
    old = info["turn"].model_dump(mode="json")
    del old["user_marker_disclosures"]
    assert TurnRecord.model_validate(old).user_marker_disclosures == []


@pytest.mark.parametrize("env_id", situ_gym.ENV_IDS)
def test_the_rule_shopper_never_says_a_marker_label(env_id):
    from agents.heuristic import HeuristicAssistant
    from tests.episodes import play

    env = make(env_id)
    said = []
    for task_id in env.unwrapped.task_ids[:20]:
        turns, _ = play(env, HeuristicAssistant(), task_id, seed=0)
        said += [(task_id, t.user_utterance, t.user_marker_disclosures) for _, _, t in turns if t.user_marker_disclosures]
    assert said == []
