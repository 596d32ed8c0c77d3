"""A TRL environment (train.environment) over a remote env earns the in-process reward: the
outcome credit of a purchase comes back in the last step's info["recrm"], not from local state."""

from __future__ import annotations

import pytest

from situ_gym.serve import RemoteEnv
from tests.train.test_environment import GATE_FAILING_TURN, WHOLE, play_heuristic
from train.environment import SituRecToolEnv
from train.tasks import ENV_OF_STORE


@pytest.mark.parametrize("reward_parts", [False, True])
def test_a_trl_environment_over_a_remote_env_earns_the_in_process_reward(server, reward_parts):
    import dataclasses

    args = dataclasses.replace(WHOLE, reward_parts=reward_parts)

    def remote(store: str) -> RemoteEnv:
        return RemoteEnv(server.url, ENV_OF_STORE[store], max_turns=args.max_turns,
                         image_size=tuple(args.env_image_size), text_only=args.env_text_only,
                         reward_kwargs={k: v for k, v in args.recrm_kwargs().items() if v is not None})

    local, far = SituRecToolEnv.factory(args)(), SituRecToolEnv.factory(args, env_factory=remote)()
    for env in (local, far):
        play_heuristic(env, seed=0, opening=(GATE_FAILING_TURN,))
    assert far.actions == local.actions and far.termination == "success_cart_added"
    # The purchase after a gate-failing turn earns part of the bonus, remotely as in-process.
    assert 0.0 < far.tally.last["outcome_credit"] == local.tally.last["outcome_credit"] < 1.0
    assert far.reward_fields == local.reward_fields
    far.env.close()
