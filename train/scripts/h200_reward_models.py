"""One-GPU RecRM reward models: rollouts -> RecRM data -> five trained scorers -> metrics table.

    python train/scripts/h200_reward_models.py --model gguf:smollm2 --out runs/rm_h200   # H200, < 9 min
    python train/scripts/h200_reward_models.py --tiny --out /tmp/rm_tiny                 # CPU check, ~2 min

Plays every task of both stores with several assistants (heuristic at two seeds, random:
600 episodes), synthesises the five databases (held-out shopper profiles form the test
split), fine-tunes SmolLM2-135M-Instruct as the instruction, consistency and relevance
judges (TRL SFT), the cross-encoder reranker (BCE + lambda listwise CE) and the behaviour
classifier, then prints the paper's metrics for the rule scorers and the learned ones on
the same held-out records, with the time of every stage. Writes OUT/summary.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

logger = logging.getLogger("h200_reward_models")

RUNS = [("heuristic", 0), ("heuristic", 1), ("random", 0)]
ENVS = ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="base model: gguf:smollm2, a folder or a hub id")
    src.add_argument("--tiny", action="store_true", help="tiny random model, 8 tasks, 2 steps (CPU check)")
    p.add_argument("--out", required=True)
    p.add_argument("--workers", type=int, default=8, help="rollout worker processes")
    p.add_argument("--epochs", type=float, default=1.0, help="judge epochs (ranker and classifier: at least 2)")
    p.add_argument("--tasks", default=None, help="rollout task range (default: all; --tiny: 0-7)")
    p.add_argument("--only", nargs="*", default=None, help="train only these dimensions")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import torch

    from eval.rollout import RolloutConfig, run
    from recrm.data.__main__ import main as data_main
    from recrm.evaluate import evaluate, format_table
    from recrm.train import TASKS, RMTrainConfig, train

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    t_all = time.perf_counter()
    gpu = torch.cuda.is_available()
    print(f"device: {torch.cuda.get_device_name(0) if gpu else 'cpu'}")

    # ---- 1. rollouts
    t0 = time.perf_counter()
    tasks = args.tasks or ("0-7" if args.tiny else "all")  # --tiny: two shopper profiles, one held out
    run_dirs = []
    for env in ENVS[:1] if args.tiny else ENVS:
        for agent, seed in RUNS:
            d = out / "runs" / f"{env.split('-')[1].lower()}-{agent}-s{seed}"
            run(RolloutConfig(env=env, agent=agent, tasks=tasks, workers=1 if args.tiny else args.workers,
                              seed=seed, out=str(d), no_report=True, resume=True))
            run_dirs.append(str(d))
    times["rollouts"] = time.perf_counter() - t0

    # ---- 2. data
    t0 = time.perf_counter()
    data = out / "data"
    if data_main(["synthesize", "--runs", *run_dirs, "--out", str(data), "--seed", str(args.seed)]) != 0:
        return 2
    times["synthesis"] = time.perf_counter() - t0

    # ---- 3. training
    base = args.model
    if args.tiny:
        from recrm.data import read_records
        from recrm.data.prompts import SYSTEM_PROMPTS
        from train.tiny import build_tiny_model

        texts = list(SYSTEM_PROMPTS.values())
        for r in read_records(data / "relevance.jsonl"):
            texts += [r.query, r.item, r.reason]
        base = str(build_tiny_model(out / "tiny_base", texts, hidden_size=32, num_layers=1))
    # full fine-tuning in bf16 on the GPU; --tiny: 2 steps of 4 records (checks the plumbing)
    common = dict(data=str(data), model=base, seed=args.seed, bf16=gpu, logging_steps=20)
    shrink = dict(max_steps=2, batch_size=4, limit=8, max_length=2048) if args.tiny else {}
    plan = {
        "relevance": dict(learning_rate=1e-4, batch_size=32, max_length=512, epochs=args.epochs),
        "instruction": dict(learning_rate=1e-4, batch_size=16, max_length=1024, epochs=args.epochs),
        "consistency": dict(learning_rate=1e-4, batch_size=16, max_length=768, epochs=args.epochs),
        "ranking": dict(learning_rate=3e-5, batch_size=8, max_length=256, epochs=max(args.epochs, 2.0),
                        listwise_lambda=1.0),
        "behavior": dict(learning_rate=3e-5, batch_size=16, max_length=768, epochs=max(args.epochs, 2.0)),
    }
    scorers: dict[str, str] = {}
    for task in TASKS:
        if args.only and task not in args.only:
            continue
        t0 = time.perf_counter()
        cfg = RMTrainConfig(task=task, out=str(out / "models" / task), **common, **{**plan[task], **shrink})
        scorers[task] = f"model:{train(cfg)}"
        times[f"train/{task}"] = time.perf_counter() - t0

    # ---- 4. evaluation on the held-out profiles
    t0 = time.perf_counter()
    rule = evaluate(str(data), {k: "rule" for k in TASKS})
    learned = evaluate(str(data), scorers)
    times["evaluation"] = time.perf_counter() - t0
    times["total"] = time.perf_counter() - t_all
    table = {**{f"{k} (rule)": v for k, v in rule.items()}, **{f"{k} (model)": v for k, v in learned.items()}}
    print("\nHeld-out metrics (%):")
    print(format_table({k: v for k, v in sorted(table.items())}))
    print("\nSeconds per stage: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
    counts = json.loads((data / "counts.json").read_text())
    summary = {"base": args.model or "tiny", "device": "cuda" if gpu else "cpu", "times_s": times,
               "rule": rule, "model": learned, "counts": counts}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
