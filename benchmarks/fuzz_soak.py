"""Soak the env's action boundary with Hypothesis-generated assistant outputs and print
the figures: outputs stepped, uncaught exceptions, unserialisable turns, other violated
invariants, and the time of a step (p50 / p95 / max).

The outputs and the checks are the property test's (tests/fuzz/test_assistant_output.py);
here a violation is counted instead of raised, so the run goes on and nothing is shrunk.

    python -m benchmarks.fuzz_soak --outputs 100000                 # both stores, +-RecRM
    python -m benchmarks.fuzz_soak --outputs 50000 --env SituRec-Supermarket-v0
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

import hypothesis
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agents.heuristic import HeuristicAssistant
from tests.fuzz.test_assistant_output import ENV_IDS, garbled, make_env, step_problems


def soak(env_id: str, with_recrm: bool, outputs: int, seed: int, seconds: float = float("inf")) -> dict:
    env = make_env(env_id, with_recrm)

    times: list[float] = []
    problems: Counter[str] = Counter()
    examples = 0

    def one_episode(data, episode_seed, steps):
        nonlocal examples
        examples += 1
        obs, info = env.reset(seed=episode_seed)
        agent = HeuristicAssistant()
        agent.reset(obs, info, seed=episode_seed)
        for _ in range(steps):
            output = data.draw(garbled(agent.act(obs)))
            found, elapsed, over, obs = step_problems(env, output)
            times.append(elapsed)
            for p in found:
                problems[p.split(":")[0]] += 1
            if found or over:
                break

    started = time.perf_counter()
    rounds = 0
    # Short rounds, each with its own seed: Hypothesis keeps every choice of a run in memory,
    # and one long run grows to gigabytes and slows down. A line per round shows progress.
    while len(times) < outputs and time.perf_counter() - started < seconds:
        run = settings(max_examples=200, phases=[Phase.generate], database=None,
                       deadline=None, suppress_health_check=list(HealthCheck))(
            given(data=st.data(), episode_seed=st.integers(0, 63), steps=st.integers(1, 20))(one_episode))
        hypothesis.seed(seed * 100_000 + rounds)(run)()
        rounds += 1
        raised = sum(n for p, n in problems.items() if p.startswith("env.step raised"))
        print(f"  {env_id} recrm={with_recrm}: {len(times)} outputs, {raised} raised, "
              f"{sum(problems.values())} violations, {time.perf_counter() - started:.0f} s", flush=True)
    env.close()
    t = np.array(times) * 1000
    return {
        "env": env_id, "recrm": with_recrm, "outputs": len(times), "episodes": examples,
        "raised": sum(n for p, n in problems.items() if p.startswith("env.step raised")),
        "unserialisable": sum(n for p, n in problems.items() if p.startswith("turn record")),
        "other_problems": {p: n for p, n in problems.items()
                           if not p.startswith(("env.step raised", "turn record"))},
        "step_ms_p50": round(float(np.percentile(t, 50)), 2),
        "step_ms_p95": round(float(np.percentile(t, 95)), 2),
        "step_ms_max": round(float(t.max()), 1),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=100_000, help="total outputs, split over the runs")
    parser.add_argument("--env", choices=ENV_IDS, action="append", help="default: both stores")
    parser.add_argument("--recrm", choices=["with", "without", "both"], default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=float("inf"),
                        help="stop after this long (split over the runs), whatever the count")
    args = parser.parse_args(argv)
    runs = [(e, r) for e in (args.env or ENV_IDS)
            for r in {"with": [True], "without": [False], "both": [False, True]}[args.recrm]]
    rows = []
    for e, r in runs:
        rows.append(soak(e, r, args.outputs // len(runs), args.seed, args.max_seconds / len(runs)))
        print(json.dumps(rows[-1]), flush=True)
    total = sum(r["outputs"] for r in rows)
    raised = sum(r["raised"] for r in rows)
    unserialisable = sum(r["unserialisable"] for r in rows)
    print(f"total: {total} outputs, {raised} uncaught exceptions, {unserialisable} unserialisable turns, "
          f"{sum(sum(r['other_problems'].values()) for r in rows)} other violations")
    return 1 if raised or unserialisable else 0


if __name__ == "__main__":
    raise SystemExit(main())
