"""Training builds its envs with the same catalog view as evaluation (catalog_view/catalog_k)."""

from __future__ import annotations

import pytest

from train.config import GSPOScriptConfig, SFTScriptConfig


def gspo(**kw):
    base = dict(model_name_or_path="m", num_generations=4, per_device_train_batch_size=4, steps_per_generation=4,
                gradient_accumulation_steps=1)
    base.update(kw)
    return GSPOScriptConfig(**base)


@pytest.mark.parametrize("kw", [{"catalog_view": "some"}, {"catalog_k": 0}])
def test_bad_catalog_view_is_refused(kw):
    with pytest.raises(ValueError, match="catalog_view must be 'full' or 'retrieved'"):
        gspo(**kw)
    with pytest.raises(ValueError, match="catalog_view must be 'full' or 'retrieved'"):
        SFTScriptConfig(model_name_or_path="m", teacher="heuristic", **kw)


def test_gspo_and_sft_envs_get_the_view():
    from train.rollout import SituRecRollout
    from train.sft import make_env

    cfg = gspo(catalog_view="retrieved", catalog_k=3, env_image_size=[64, 48])
    env = SituRecRollout(cfg)._make_env("supermarket")
    assert (env.unwrapped.catalog_view, env.unwrapped.catalog_k) == ("retrieved", 3)
    env.close()
    sft = SFTScriptConfig(model_name_or_path="m", teacher="heuristic", catalog_view="retrieved", catalog_k=3,
                          env_image_size=[64, 48])
    env = make_env("supermarket", sft)
    assert (env.unwrapped.catalog_view, env.unwrapped.catalog_k) == ("retrieved", 3)
    env.close()
