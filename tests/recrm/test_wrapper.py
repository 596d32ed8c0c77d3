import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from recrm.wrapper import RecRMReward
from tests.recrm.turns import honest_recommend, opening_history
from tests.world import reward_market, reward_task


class ScriptedEnv(gym.Env):
    """Replays fixed TurnRecords; pays 1.0 when the cart grows (the env's outcome reward)."""

    metadata = {"render_modes": []}

    def __init__(self, script=None):
        self.observation_space = spaces.Discrete(1)
        self.action_space = spaces.Text(max_length=4096)
        self.index, self.task = reward_market(), reward_task()
        self.script = script or [
            *opening_history(),
            honest_recommend(n=3).model_copy(update={"cart": ["sm_p004"]}),
        ]
        self.turns = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.turns = []
        return 0, {"task_id": self.task.id}

    def step(self, action):
        record = self.script[len(self.turns)].model_copy(deep=True)
        before = len(self.turns[-1].cart) if self.turns else 0
        self.turns.append(record)
        reward = 1.0 if len(record.cart) > before else 0.0
        done = len(self.turns) == len(self.script)
        return 0, reward, done, False, {"turn": record, "task": self.task, "termination": None}


def run(env):
    env.reset(seed=0)
    out = []
    for _ in range(3):
        out.append(env.step("{}"))
    return out


def test_rewards_info_and_turn_record():
    env = RecRMReward(ScriptedEnv())
    steps = run(env)
    rewards = [s[1] for s in steps]
    assert rewards == pytest.approx([0.2, 0.2, 1.0])  # two questions on open slots, honest recommend
    info = steps[-1][4]
    assert info["recrm"]["components"]["relevance"] == 1.0
    assert info["recrm"]["gates"] == {"instruction": 1.0, "consistency": 1.0}
    assert info["recrm"]["env_reward"] == 1.0
    assert info["turn"].reward["recrm/total"] == pytest.approx(1.0)
    assert env.unwrapped.turns[-1].reward["recrm/relevance"] == 1.0  # the trajectory keeps them


def test_outcome_variant_and_bonus():
    r1 = run(RecRMReward(ScriptedEnv(), variant="outcome"))
    assert [s[1] for s in r1] == [0.0, 0.0, 1.0]
    assert [s[4]["recrm"]["total"] for s in r1] == [0.0, 0.0, 1.0]  # R1's total is the outcome
    assert r1[-1][4]["recrm"]["components"]["relevance"] == 1.0  # still judged and reported
    bonus = [s[1] for s in run(RecRMReward(ScriptedEnv(), outcome_bonus=2.0))]
    assert bonus == pytest.approx([0.2, 0.2, 3.0])


def test_missing_turn_info_is_an_error():
    class Bare(ScriptedEnv):
        def step(self, action):
            obs, r, term, trunc, info = super().step(action)
            return obs, r, term, trunc, {}

    env = RecRMReward(Bare())
    env.reset()
    with pytest.raises(ValueError, match="info\\['turn'\\]"):
        env.step("{}")


def test_records_constructor_args_and_rejects_bad_values():
    env = RecRMReward(ScriptedEnv(), tau=0.3, variant="+behavior")
    assert env._saved_kwargs["tau"] == 0.3 and env._saved_kwargs["variant"] == "+behavior"
    with pytest.raises(ValueError, match="R9"):
        RecRMReward(ScriptedEnv(), variant="R9")
    with pytest.raises(ValueError, match="outcome_bonus"):
        RecRMReward(ScriptedEnv(), outcome_bonus=-1)


def test_variant_follows_the_env_protocol_unless_given():
    class PaperEnv(ScriptedEnv):
        protocol = "paper"

    assert RecRMReward(ScriptedEnv()).composite.variant.name == "full"  # no protocol: the default
    paper = RecRMReward(PaperEnv())
    assert paper.composite.variant.name == "paper" and paper._saved_kwargs["variant"] is None
    assert [s[1] for s in run(paper)] == pytest.approx([0.0, 0.0, 2.0])  # questions 0, honest 1 + 0.5 (1 + 1)
    assert RecRMReward(PaperEnv(), variant="R4").composite.variant.name == "+behavior"


def test_vector_env():
    gym.register("RecRMScripted-v0", entry_point=ScriptedEnv, disable_env_checker=True)
    try:
        envs = gym.make_vec(
            "RecRMScripted-v0", num_envs=2, vectorization_mode="sync", wrappers=[RecRMReward]
        )
        envs.reset(seed=0)
        rewards = [envs.step(["{}", "{}"])[1] for _ in range(3)]
        np.testing.assert_allclose(rewards, [[0.2, 0.2], [0.2, 0.2], [1.0, 1.0]])
        envs.close()
    finally:
        gym.registry.pop("RecRMScripted-v0")
