"""SituRec Gym: SituRecBench's situated-recommendation stores as Gymnasium environments.

Importing the package registers the environments::

    import gymnasium as gym, situ_gym
    env = gym.make("SituRec-Supermarket-v0")
    env = gym.make("SituRec-Custom-v0", store="path/to/store_folder")  # a store as data

Every store of ``situ_gym.stores`` (the paper's two, and folders listed in ``SITUREC_STORES``)
has its own id; ``SituRec-Custom-v0`` takes any store folder (``docs/stores.md``).
"""

from gymnasium.envs.registration import register, registry

from situ_gym.stores import PAPER_STORES, register_env, registered_stores, store_spec

__all__ = ["CUSTOM_ENV_ID", "ENV_IDS", "STORE_OF_ENV"]
__version__ = "0.1.0"

CUSTOM_ENV_ID = "SituRec-Custom-v0"
# The paper's stores: SituRec-Supermarket-v0, SituRec-HomeFurnishings-v0.
STORE_OF_ENV = {store_spec(s).env_id: s for s in PAPER_STORES}
ENV_IDS = tuple(STORE_OF_ENV)

for _store in registered_stores():
    register_env(store_spec(_store))
if CUSTOM_ENV_ID not in registry:
    # No default store: gym.make(CUSTOM_ENV_ID) without store= says that it needs one.
    register(id=CUSTOM_ENV_ID, entry_point="situ_gym.env:SituRecEnv", kwargs={"store": None},
             disable_env_checker=False)
