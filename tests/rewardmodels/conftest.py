"""Small real runs (heuristic + random, a few Supermarket tasks) and the data synthesised from them."""

import pytest


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    from eval.rollout import RolloutConfig, run

    root = tmp_path_factory.mktemp("rm_runs")
    out = []
    for agent in ("heuristic", "random"):
        # 8 tasks per assistant: enough for every record kind and both splits, ~5 s
        cfg = RolloutConfig(agent=agent, tasks="0-7", workers=1, seed=0, out=str(root / agent), no_report=True)
        run(cfg)
        out.append(root / agent)
    return out


@pytest.fixture(scope="session")
def episodes(runs):
    from situ_gym.records import read_episodes

    return [e for r in runs for e in read_episodes(r / "trajectories.jsonl")]


@pytest.fixture(scope="session")
def worlds():
    from recrm.data.synth import World

    return {"supermarket": World.load("supermarket")}


@pytest.fixture(scope="session")
def data_dir(runs, tmp_path_factory):
    from recrm.data.__main__ import main

    out = tmp_path_factory.mktemp("rm_data")
    # eval_fraction 0.3: with 8 tasks (2 profiles) one profile is held out
    assert main(["synthesize", "--runs", *map(str, runs), "--out", str(out), "--eval-fraction", "0.3"]) == 0
    return out
