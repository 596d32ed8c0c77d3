"""Tool calls of the tools view (catalog_view="tools") are counted in the metrics and the report."""

from __future__ import annotations

from eval.aggregate import summarize_groups
from eval.io import read_episodes
from eval.report import format_markdown
from eval.rollout import RolloutConfig, run

SMALL = dict(env="SituRec-HomeFurnishings-v0", tasks="0-1", max_turns=6, judge="none", no_report=True)


def test_tool_calls_per_episode_are_the_recorded_calls(tmp_path):
    run(RolloutConfig(agent="heuristic-tools", out=str(tmp_path / "tools"),
                      env_kwargs={"image_size": [64, 48], "catalog_view": "tools"}, **SMALL))
    run(RolloutConfig(agent="heuristic", out=str(tmp_path / "full"), env_kwargs={"image_size": [64, 48]}, **SMALL))
    tools = read_episodes(tmp_path / "tools" / "trajectories.jsonl")
    recorded = [sum(len(t.tool_calls) for t in ep.turns) for ep in tools]
    assert all(n > 0 for n in recorded)  # the tool heuristic learns the catalog only through calls

    (group,) = summarize_groups(tools).values()
    assert [m["tool_calls"] for m in group["per_episode"]] == recorded
    assert group["metrics"]["Tools"]["cohort"] == sum(recorded) / len(recorded)

    (full,) = summarize_groups(read_episodes(tmp_path / "full" / "trajectories.jsonl")).values()
    assert full["metrics"]["Tools"]["cohort"] == 0.0
    report = format_markdown({**summarize_groups(tools), **summarize_groups(read_episodes(
        tmp_path / "full" / "trajectories.jsonl"))})
    assert "Tools/ep" in report
