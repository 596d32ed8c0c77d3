"""Training builds its envs with the same catalog view as evaluation (catalog_view/catalog_k)."""

from __future__ import annotations

import pytest

from train.config import SituRecArguments, TeacherDataArguments


@pytest.mark.parametrize("kw", [{"catalog_view": "some"}, {"catalog_k": 0}])
def test_bad_catalog_view_is_refused(kw):
    with pytest.raises(ValueError, match="catalog_view must be 'full' or 'retrieved'"):
        SituRecArguments(**kw)
    with pytest.raises(ValueError, match="catalog_view must be 'full' or 'retrieved'"):
        TeacherDataArguments(teacher="heuristic", **kw)


def test_gspo_and_sft_envs_get_the_view():
    from train.rollout import make_recrm_env
    from train.sft import make_env

    env = make_recrm_env(SituRecArguments(catalog_view="retrieved", catalog_k=3, env_image_size=[64, 48]), "supermarket")
    assert (env.unwrapped.catalog_view, env.unwrapped.catalog_k) == ("retrieved", 3)
    env.close()
    sft = TeacherDataArguments(teacher="heuristic", catalog_view="retrieved", catalog_k=3, env_image_size=[64, 48])
    env = make_env("supermarket", sft)
    assert (env.unwrapped.catalog_view, env.unwrapped.catalog_k) == ("retrieved", 3)
    env.close()
