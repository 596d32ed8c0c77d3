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
