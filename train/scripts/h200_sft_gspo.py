"""One-GPU benchmark: SFT warm start then GSPO on a small model, held-out evaluation before/after.

    python train/scripts/h200_sft_gspo.py --model /models/Qwen2.5-0.5B-Instruct --out runs/h200
    python train/scripts/h200_sft_gspo.py --random-init --out runs/h200_scratch     # no weights needed
    python train/scripts/h200_sft_gspo.py --tiny --out /tmp/h200_tiny               # CPU check, ~1 min

Prints: generation tokens/s (evaluation and GSPO rollouts), GSPO step-time split
(generation / env + reward / optimisation and the rest), SR and mean R_total on held-out
tasks (profiles never trained on) before and after. Writes OUT/summary.json.
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

logger = logging.getLogger("h200_sft_gspo")

# ~0.5B-parameter Qwen2 body for --random-init (Qwen2.5-0.5B's shape, our own BPE vocabulary).
RANDOM_INIT = {"hidden_size": 896, "num_layers": 24, "vocab_size": 16384}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="local weights directory (or hub id if cached)")
    src.add_argument("--random-init", action="store_true", help="random ~0.5B Qwen2 + in-process tokenizer")
    src.add_argument("--tiny", action="store_true", help="tiny random model and shrunk settings (CPU check)")
    p.add_argument("--out", required=True)
    p.add_argument("--store", default="supermarket", choices=["supermarket", "home_furnishings"])
    p.add_argument("--sft-steps", type=int, default=None)
    p.add_argument("--gspo-steps", type=int, default=None)
    p.add_argument("--eval-tasks", type=int, default=None, help="held-out tasks evaluated before/after")
    p.add_argument("--train-tasks", type=int, default=None, help="cap on training tasks")
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--use-vllm", action="store_true")
    return p.parse_args(argv)


def settings(args) -> dict:
    if args.tiny:
        base = dict(sft_steps=8, gspo_steps=2, eval_tasks=2, train_tasks=2, max_turns=2, max_new_tokens=24,
                    num_generations=4, batch=4, steps_per_generation=2, image_size=[160, 120], bf16=False,
                    max_completion_length=2048, max_length=32768, lr_sft=1e-2, lr_gspo=1e-3)
    else:
        base = dict(sft_steps=200, gspo_steps=30, eval_tasks=20, train_tasks=None, max_turns=20, max_new_tokens=256,
                    num_generations=8, batch=16, steps_per_generation=4, image_size=[640, 480], bf16=True,
                    max_completion_length=8192, max_length=32768, lr_sft=1e-5, lr_gspo=1e-6)
    for key in ("sft_steps", "gspo_steps", "eval_tasks", "train_tasks", "max_turns"):
        if getattr(args, key) is not None:
            base[key] = getattr(args, key)
    return base


def prepare_model(args, out: Path) -> str:
    if args.model:
        return args.model
    from train.tiny import build_tiny_model, store_texts

    if args.tiny:  # whole-line tokens keep CPU prompts ~1k tokens (see train/tiny.py)
        texts = store_texts((args.store,), teacher_tasks=2)
        return str(build_tiny_model(out / "base", texts, seed=args.seed, vocab_size=8192, hidden_size=32,
                                    whole_lines=True))
    from situ_gym.scene import SceneIndex
    from situ_gym.scene.loader import load_scene
    from situ_gym.text import catalog_text

    lines = catalog_text(SceneIndex(load_scene(args.store))).splitlines()
    return str(build_tiny_model(out / "base", lines, seed=args.seed, vocab_size=RANDOM_INIT["vocab_size"],
                                hidden_size=RANDOM_INIT["hidden_size"], num_layers=RANDOM_INIT["num_layers"]))


def evaluate(model_dir: str, held_out: list[str], s: dict, args) -> dict:
    from agents.hf_policy import HFPolicyAssistant
    from train.evaluate import evaluate_policy

    agent = HFPolicyAssistant(model_dir, max_new_tokens=s["max_new_tokens"], temperature=0.7, top_p=0.95,
                              seed=args.seed)
    result = evaluate_policy(agent, args.store, held_out, seed=args.seed, max_turns=s["max_turns"],
                             image_size=tuple(s["image_size"]))
    del agent
    return result


def gspo_timing(log_history: list[dict], runtime: float) -> dict:
    gen = sum(float(h.get("timing/generate_s", 0.0)) for h in log_history)
    env = sum(float(h.get("timing/env_reward_s", 0.0)) for h in log_history)
    return {"total_s": runtime, "generation_s": gen, "env_reward_s": env, "optimisation_and_rest_s": runtime - gen - env}


def main(argv=None) -> dict:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch

    from train import gspo, sft
    from train.config import GSPOScriptConfig, SFTScriptConfig
    from train.tasks import split_tasks

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    s = settings(args)
    logger.info("settings: %s", s)
    held_out = split_tasks(args.store, 0.2, args.seed)[1][: s["eval_tasks"]]
    model_dir = prepare_model(args, out)
    summary: dict = {"model": model_dir, "store": args.store, "held_out_tasks": held_out, "settings": s,
                     "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}

    summary["before"] = evaluate(model_dir, held_out, s, args)
    logger.info("before: %s", summary["before"])

    common = dict(stores=[args.store], seed=args.seed, max_turns=s["max_turns"], env_image_size=s["image_size"],
                  max_tasks=s["train_tasks"], bf16=s["bf16"], logging_steps=1, report_to=["none"])
    t0 = time.perf_counter()
    sft_cfg = SFTScriptConfig(model_name_or_path=model_dir, output_dir=str(out / "sft"), teacher="heuristic",
                              success_only=not args.tiny, max_steps=s["sft_steps"], learning_rate=s["lr_sft"],
                              per_device_train_batch_size=1, max_length=s["max_length"],
                              save_steps=max(1, s["sft_steps"]), **common)
    sft_final = sft.main(sft_cfg)
    summary["sft_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    gspo_cfg = GSPOScriptConfig(
        model_name_or_path=str(sft_final), output_dir=str(out / "gspo"), max_steps=s["gspo_steps"],
        learning_rate=s["lr_gspo"], num_generations=s["num_generations"], per_device_train_batch_size=s["batch"],
        steps_per_generation=s["steps_per_generation"], gradient_accumulation_steps=1,
        max_new_tokens=s["max_new_tokens"], max_completion_length=s["max_completion_length"],
        gate_floor=0.3, gate_warmup_steps=max(1, s["gspo_steps"] // 2), use_vllm=args.use_vllm,
        save_steps=max(1, s["gspo_steps"]), episodes_per_task=1, **common,
    )
    gspo_dir = gspo.main(gspo_cfg)
    runtime = time.perf_counter() - t0
    history = json.loads((gspo_dir / "log_history.json").read_text())
    summary["gspo_timing"] = gspo_timing(history, runtime)
    lengths = [float(h["completions/mean_length"]) for h in history if "completions/mean_length" in h]
    gen_batch = s["batch"] * s["steps_per_generation"]
    if summary["gspo_timing"]["generation_s"] > 0:
        summary["gspo_rollout_tokens_per_s"] = sum(lengths) * gen_batch / summary["gspo_timing"]["generation_s"]

    summary["after"] = evaluate(str(gspo_dir), held_out, s, args)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))

    b, a, t = summary["before"], summary["after"], summary["gspo_timing"]
    print(f"device: {summary['device']}   model: {model_dir}")
    print(f"held-out tasks ({args.store}): {len(held_out)}")
    print(f"{'':8}{'SR':>8}{'R_total':>10}{'turns':>8}{'gen tok/s':>12}")
    for name, r in (("before", b), ("after", a)):
        print(f"{name:8}{r['success_rate']:8.3f}{r['mean_r_total']:10.4f}{r['mean_turns']:8.2f}{r['tokens_per_s']:12.1f}")
    print(f"SFT: {summary['sft_s']:.1f} s for {s['sft_steps']} steps")
    print(f"GSPO: {t['total_s']:.1f} s for {s['gspo_steps']} steps = generation {t['generation_s']:.1f} s + "
          f"env/reward {t['env_reward_s']:.1f} s + optimisation/other {t['optimisation_and_rest_s']:.1f} s")
    if "gspo_rollout_tokens_per_s" in summary:
        print(f"GSPO rollout model tokens/s: {summary['gspo_rollout_tokens_per_s']:.1f}")
    return summary


if __name__ == "__main__":
    main()
