"""SituRec Gym: SituRecBench's situated-recommendation stores as Gymnasium environments.

Importing the package registers the environments::

    import gymnasium as gym, situ_gym
    env = gym.make("SituRec-Supermarket-v0")
"""

from gymnasium.envs.registration import register, registry

__all__ = ["ENV_IDS", "STORE_OF_ENV"]
__version__ = "0.1.0"

STORE_OF_ENV = {
    "SituRec-Supermarket-v0": "supermarket",
    "SituRec-HomeFurnishings-v0": "home_furnishings",
}
ENV_IDS = tuple(STORE_OF_ENV)

for _env_id, _store in STORE_OF_ENV.items():
    if _env_id not in registry:
        # The turn limit is a rule of the benchmark with its own termination reason
        # ("turn_limit"), so the env enforces it (max_turns) instead of a TimeLimit wrapper.
        register(
            id=_env_id,
            entry_point="situ_gym.env:SituRecEnv",
            kwargs={"store": _store},
            disable_env_checker=False,
        )
