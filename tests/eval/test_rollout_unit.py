"""Runner pieces that need no environment: task selection, config checks, CLI parsing."""

from __future__ import annotations

import pytest

from eval.rollout import EpisodeJob, RolloutConfig, parser, select_tasks

IDS = [f"sm_t{i:03d}" for i in range(1, 11)]


def test_select_tasks():
    assert select_tasks("all", IDS) == IDS
    assert select_tasks("0-2", IDS) == IDS[:3]
    assert select_tasks("4", IDS) == [IDS[4]]
    assert select_tasks("sm_t003, sm_t010", IDS) == ["sm_t003", "sm_t010"]
    with pytest.raises(ValueError, match="outside"):
        select_tasks("5-10", IDS)
    with pytest.raises(ValueError, match="unknown task ids"):
        select_tasks("sm_t999", IDS)


def test_config_checks_and_job_seed():
    with pytest.raises(ValueError, match="workers"):
        RolloutConfig(workers=0)
    with pytest.raises(ValueError, match="reward"):
        RolloutConfig(reward="dense")
    with pytest.raises(ValueError, match="--model"):
        RolloutConfig(agent="hf")
    job = EpisodeJob(RolloutConfig(seed=10), "sm_t001", 2, "p1", 0, "sm_p001", ("sm_p001",), 9.0)
    assert job.seed == 12 and job.episode_id == "sm_t001#r2"


def test_cli_maps_onto_the_config():
    args = parser().parse_args(["--agent", "random", "--tasks", "0-3", "--workers", "2", "--repeats", "3",
                                 "--resume", "--save-frames", "--max-turns", "5", "--out", "runs/x",
                                 "--env-kwargs", '{"ablation": "no_ego_view"}'])
    cfg = RolloutConfig(**vars(args))
    assert (cfg.agent, cfg.tasks, cfg.workers, cfg.repeats, cfg.max_turns) == ("random", "0-3", 2, 3, 5)
    assert cfg.resume and cfg.save_frames and cfg.env_kwargs == {"ablation": "no_ego_view"}
    assert cfg.max_episodes is None and cfg.model is None


def test_executor_flags_and_both_flag_spellings():
    args = parser().parse_args(["--executor", "ray", "--ray-address", "auto", "--workers", "4",
                                "--max_turns", "7", "--env_kwargs", '{"image_size": [64, 48]}'])
    cfg = RolloutConfig(**vars(args))
    assert (cfg.executor, cfg.ray_address, cfg.workers, cfg.max_turns) == ("ray", "auto", 4, 7)
    assert cfg.env_kwargs == {"image_size": [64, 48]} and cfg.reward_kwargs == {}
    with pytest.raises(ValueError, match="executor must be one of"):
        RolloutConfig(executor="dask")
    with pytest.raises(ValueError, match="--ray-address needs --executor ray"):
        RolloutConfig(ray_address="auto")
    with pytest.raises(ValueError, match="env_kwargs is not JSON"):
        RolloutConfig(env_kwargs="{image_size: 1}")


def test_default_executor_follows_workers_and_work():
    from eval.rollout_config import executor_of

    assert executor_of(RolloutConfig(), chunks=5) == "inline"
    assert executor_of(RolloutConfig(workers=2), chunks=5) == "process"
    assert executor_of(RolloutConfig(workers=2), chunks=1) == "inline"  # one chunk: no pool to start
    assert executor_of(RolloutConfig(executor="ray"), chunks=1) == "ray"
