"""RecRM reward models end to end: rollouts -> RecRM data -> trained scorers -> metrics table.

    python train/scripts/h200_reward_models.py --out runs/rm_h200                 # one H200, < 9 min
    python train/scripts/h200_reward_models.py --preset cpu --out runs/rm_cpu     # SmolLM2 on CPU, 7-21 min
    python train/scripts/h200_reward_models.py --preset tiny --out /tmp/rm_tiny   # CPU dry run, ~25 s idle

Presets (``PRESETS``):

* ``h200``: every task of both stores with four assistant runs (heuristic at seeds 0 and 1,
  plain, random: 800 episodes); fine-tunes SmolLM2-135M-Instruct (``--model``, default
  ``gguf:smollm2``) in bf16 as the instruction, consistency and relevance judges (TRL SFT),
  the cross-encoder reranker (BCE + lambda listwise CE) and the behaviour classifier.
* ``cpu``: Supermarket tasks 0-39 with heuristic, plain and random (120 episodes); a short
  fine-tune of SmolLM2 as the relevance judge and the reranker (a few minutes each on two
  cores), nothing else.
* ``tiny``: Supermarket tasks 0-7 with the same runs as ``h200``; a tiny random model trained
  two steps per dimension (checks the plumbing, learns nothing).

Held-out shopper profiles form the test split; the rule scorers and the learned ones are
evaluated on the same records (``recrm.evaluate``, as ``python -m recrm.evaluate`` prints
it), with the time of every stage and the data counts per class. Writes OUT/summary.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recrm.dimensions import HEADED, TRAINED  # noqa: E402 - after the path insertion

logger = logging.getLogger("h200_reward_models")

ENVS = ("SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0")
RUNS = (("heuristic", 0), ("heuristic", 1), ("plain", 0), ("random", 0))


@dataclass(frozen=True)
class Preset:
    """Which episodes feed the data, which scorers train, and how far each training is shrunk."""

    envs: tuple[str, ...]
    runs: tuple[tuple[str, int], ...]  # (assistant, seed)
    tasks: str  # eval.rollout's --tasks
    dims: tuple[str, ...]  # reward dimensions to train
    shrink: dict = field(default_factory=dict)  # RMTrainConfig overrides for every dimension
    per_dim: dict = field(default_factory=dict)  # dimension -> RMTrainConfig overrides (after shrink)


ALL_DIMS = TRAINED  # every dimension with a learned model (recrm.dimensions)
# Two shared CPU cores: SmolLM2 costs ~25-70 s per step of 8 judge prompts or 2 lists of 10
# pairs, so a few minutes is ~6 steps each; 40 tasks give 8 shopper profiles, 2 held out.
_CPU_DIMS = {"relevance": dict(max_steps=6, batch_size=8, max_length=384, learning_rate=1e-4),
             "ranking": dict(max_steps=6, batch_size=2, max_length=192, learning_rate=5e-5)}
PRESETS = {
    "h200": Preset(ENVS, RUNS, "all", ALL_DIMS),
    "cpu": Preset(ENVS[:1], (("heuristic", 0), ("plain", 0), ("random", 0)), "0-39", tuple(_CPU_DIMS),
                  per_dim=_CPU_DIMS),
    # 8 tasks = two shopper profiles, one held out; 2 steps of 4 records
    "tiny": Preset(ENVS[:1], RUNS, "0-7", ALL_DIMS, shrink=dict(max_steps=2, batch_size=4, limit=8, max_length=2048)),
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="h200")
    p.add_argument("--tiny", action="store_true", help="same as --preset tiny")
    p.add_argument("--model", default="gguf:smollm2", help="base model: gguf:smollm2, a folder or a hub id "
                   "(--preset tiny builds its own)")
    p.add_argument("--out", required=True)
    p.add_argument("--workers", type=int, default=8, help="rollout worker processes (h200)")
    p.add_argument("--epochs", type=float, default=1.0, help="judge epochs (ranker and classifier: at least 2)")
    p.add_argument("--tasks", default=None, help="rollout task range (default: the preset's)")
    p.add_argument("--only", nargs="*", default=None, choices=ALL_DIMS, help="train only these dimensions")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--judge-format", dest="judge_format", choices=("paper", "short"), default="paper",
                   help="judges' answer: the paper's JSON formats (default) or 'Reason: ... Score: N'")
    p.add_argument("--head", choices=("classifier", "generative", "select"), default=None,
                   help="ranking and behaviour heads (default: select on h200, classifier on cpu and tiny: "
                        "select trains both and keeps the better on held-out metrics)")
    args = p.parse_args(argv)
    if args.tiny:
        args.preset = "tiny"
    if args.head is None:
        args.head = "select" if args.preset == "h200" else "classifier"
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import torch

    from eval.rollout import RolloutConfig, run
    from recrm.data.__main__ import main as data_main
    from recrm.evaluate import evaluate, format_dimension_table
    from recrm.train import TASKS, RMTrainConfig, train
    from recrm.train.models import is_gguf, plain_model_folder

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    t_all = time.perf_counter()
    gpu = torch.cuda.is_available()
    print(f"device: {torch.cuda.get_device_name(0) if gpu else 'cpu'}")

    # ---- 1. rollouts
    preset = PRESETS[args.preset]
    tiny = args.preset == "tiny"
    print(f"preset {args.preset}: {len(preset.runs)} assistant runs on {', '.join(preset.envs)}, tasks "
          f"{args.tasks or preset.tasks}; training {', '.join(args.only or preset.dims)}")
    t0 = time.perf_counter()
    run_dirs = []
    for env in preset.envs:
        for agent, seed in preset.runs:
            d = out / "runs" / f"{env.split('-')[1].lower()}-{agent}-s{seed}"
            run(RolloutConfig(env=env, agent=agent, tasks=args.tasks or preset.tasks,
                              workers=args.workers if args.preset == "h200" else 1,
                              seed=seed, out=str(d), no_report=True, resume=True))
            run_dirs.append(str(d))
    times["rollouts"] = time.perf_counter() - t0

    # ---- 2. data (prints the counts per class)
    t0 = time.perf_counter()
    data = out / "data"
    if data_main(["synthesize", "--runs", *run_dirs, "--out", str(data), "--seed", str(args.seed)]) != 0:
        return 2
    times["synthesis"] = time.perf_counter() - t0

    # ---- 3. training
    base = args.model
    if tiny:
        from recrm.data import read_records
        from recrm.data.prompts import SYSTEM_PROMPTS
        from train.tiny import build_tiny_model

        texts = list(SYSTEM_PROMPTS.values())
        for r in read_records(data / "relevance.jsonl"):
            texts += [r.query, r.item, r.reason]
        base = str(build_tiny_model(out / "tiny_base", texts, hidden_size=32, num_layers=1))
    elif is_gguf(base):  # dequantize once for all the scorers
        t0 = time.perf_counter()
        base = str(plain_model_folder(base, out / "base"))
        times["gguf_conversion"] = time.perf_counter() - t0
    # full fine-tuning (bf16 on the GPU); the preset shrinks it on CPU
    common = dict(data=str(data), model=base, seed=args.seed, bf16=gpu, logging_steps=1 if not gpu else 20)
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
        if task not in (args.only or preset.dims):
            continue
        t0 = time.perf_counter()
        settings = {**plan[task], **preset.shrink, **preset.per_dim.get(task, {})}
        if task in HEADED:
            settings["head"] = args.head
        else:
            settings["judge_format"] = args.judge_format
        cfg = RMTrainConfig(task=task, out=str(out / "models" / task), **common, **settings)
        scorers[task] = f"model:{train(cfg)}"
        times[f"train/{task}"] = time.perf_counter() - t0

    # ---- 4. evaluation on the held-out profiles
    t0 = time.perf_counter()
    rule = evaluate(str(data), {k: "rule" for k in TASKS})
    learned = evaluate(str(data), scorers)
    times["evaluation"] = time.perf_counter() - t0
    times["total"] = time.perf_counter() - t_all
    print(f"\nHeld-out metrics (%), as python -m recrm.evaluate --data {data} --scorer rule "
          + " ".join(f"--scorer {k}={v}" for k, v in scorers.items()) + " prints them:")
    print(format_dimension_table({"rows": {"rule": rule, "model": learned}}))
    print("\nSeconds per stage: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
    counts = json.loads((data / "counts.json").read_text())
    summary = {"preset": args.preset, "judge_format": args.judge_format, "head": args.head, "base": "tiny" if tiny else args.model, "device": "cuda" if gpu else "cpu", "times_s": times,
               "rule": rule, "model": learned, "counts": counts}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
