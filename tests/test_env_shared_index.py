"""Envs of one store share one SceneIndex, so the tables derived from it (lexicons, name
tables) are built once per process: an index per env kept ~2 MB per env alive for good, and a
server that makes envs for its sessions grew without bound (benchmarks.serve_soak)."""

import gc
import weakref

import gymnasium as gym

import situ_gym  # noqa: F401
from situ_gym.language import lexicon_for
from situ_gym.scene.index import SceneIndex


def test_envs_of_a_store_share_the_index_and_its_lexicon():
    a = gym.make("SituRec-Supermarket-v0", image_size=(64, 48)).unwrapped
    b = gym.make("SituRec-Supermarket-v0", image_size=(64, 48)).unwrapped
    other = gym.make("SituRec-HomeFurnishings-v0", image_size=(64, 48)).unwrapped
    assert a.index is b.index and a.index is not other.index
    assert lexicon_for(a.index) is lexicon_for(b.index)


def test_making_and_closing_envs_leaves_no_index_behind():
    def indexes() -> int:
        gc.collect()
        return sum(isinstance(o, SceneIndex) for o in gc.get_objects())

    env = gym.make("SituRec-Supermarket-v0", image_size=(64, 48))
    env.reset(seed=0)
    before = indexes()
    refs = []
    for seed in range(5):
        e = gym.make("SituRec-Supermarket-v0", image_size=(64, 48))
        e.reset(seed=seed)
        refs.append(weakref.ref(e.unwrapped))
        e.close()
        del e
    assert indexes() == before
    gc.collect()
    assert all(r() is None for r in refs)  # the envs themselves are freed too
