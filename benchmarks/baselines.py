"""The README's baseline table: every listed assistant on all 100 tasks of both stores.

    python benchmarks/baselines.py --agents heuristic paraphrase plain random --out runs/baselines

Runs ``eval.rollout`` (rule shopper, seed 0, ``--reward recrm``) for each assistant and
store, then prints one markdown row per run: SR, Turn, RPR, RPR|Cart (subset mean ± SD),
termination counts, mean per-turn RecRM R_total and the per-episode training reward
(mean per-turn R_total + 1 when an item was bought). Existing runs are resumed, not redone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

STORES = {"Supermarket": "SituRec-Supermarket-v0", "Home Furnishings": "SituRec-HomeFurnishings-v0"}
SHORT = {"success_cart_added": "cart", "recommendation_exhausted": "3 recs", "moderator_end": "moderator",
         "motion_stall": "stall", "turn_limit": "20 turns", "error": "error"}


def _fmt(metric: dict) -> str:
    return f"{metric['mean']:.1f}±{metric['sd']:.1f}" if metric.get("sd") is not None else f"{metric['mean']:.1f}"


def row(store: str, agent: str, run: Path) -> str:
    group = next(iter(json.loads((run / "metrics.json").read_text())["groups"].values()))
    m = group["metrics"]
    episodes = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines() if line]
    turn_r = [t["reward"].get("recrm/total") or 0.0 for e in episodes for t in e["turns"]]
    episode_r = [
        statistics.mean([t["reward"].get("recrm/total") or 0.0 for t in e["turns"]])
        + (e["termination"] == "success_cart_added")
        for e in episodes if e["turns"]
    ]
    ends = ", ".join(f"{SHORT.get(k, k)} {v}" for k, v in sorted(group["termination"].items(), key=lambda kv: -kv[1]))
    cart = m.get("RPR|Cart", {})
    return (
        f"| {store} | {agent} | {_fmt(m['SR'])} | {_fmt(m['Turn'])} | {_fmt(m['RPR'])} | "
        f"{cart.get('cohort', float('nan')):.1f} | {ends} | {statistics.mean(turn_r):.3f} | {statistics.mean(episode_r):.3f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["heuristic", "paraphrase", "plain", "random"])
    parser.add_argument("--out", type=Path, default=Path("runs/baselines"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    rows = []
    for store, env_id in STORES.items():
        for agent in args.agents:
            run = args.out / f"{agent}-{env_id}"
            cmd = [sys.executable, "-m", "eval.rollout", "--env", env_id, "--agent", agent, "--user", "rule",
                   "--tasks", "all", "--workers", str(args.workers), "--seed", "0", "--reward", "recrm",
                   "--out", str(run)]
            if (run / "trajectories.jsonl").exists():
                cmd.append("--resume")
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            rows.append(row(store, agent, run))
    print("| Store | Assistant | SR % | Turn | RPR % | RPR\\|Cart % | Episode ends | R_total / turn | reward / episode |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
