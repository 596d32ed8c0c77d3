"""One-GPU benchmark: SFT warm start then GSPO on a small model, held-out evaluation before/after.

    python train/scripts/h200_sft_gspo.py --model /models/Qwen2.5-0.5B-Instruct --out runs/h200
    python train/scripts/h200_sft_gspo.py --random_init --out runs/h200_scratch    # no weights needed
    python train/scripts/h200_sft_gspo.py --tiny --out /tmp/h200_tiny              # CPU check, ~1 min
    # GSPO generation by `trl vllm-serve` on GPU 0, training on GPU 1:
    CUDA_VISIBLE_DEVICES=1 python train/scripts/h200_sft_gspo.py --model PATH --out runs/h200_vllm \\
        --gspo_config train/configs/gspo_supermarket_vllm_server.yaml --vllm_server_gpus 0

A thin driver: the two stages are train/sft.py and train/gspo.py configured by YAML files
(default train/configs/sft_supermarket_200_steps.yaml and gspo_supermarket_30_steps.yaml;
``--tiny``: sft_tiny.yaml and gspo_tiny.yaml), parsed by the same ``train.config.parse_args``
as the stage scripts; ``--sft_args`` / ``--gspo_args`` add overrides in the same syntax
(``--gspo_args "--max_steps 5 --warmup_steps 2"``). Prints generation tokens/s (evaluation
and GSPO rollouts), the GSPO step-time split (generation / env + reward / optimisation and
the rest), SR and mean R_total on held-out tasks (profiles never trained on) before and after.
Writes OUT/summary.json.
"""

from __future__ import annotations

import json
import logging
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from situ_gym.stores import PAPER_STORES  # noqa: E402
from train.config import parse_args  # noqa: E402

__all__ = ["DriverArguments", "main", "parse_driver_args", "stage_args", "vllm_server_command"]

logger = logging.getLogger("h200_sft_gspo")

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
# ~0.5B-parameter Qwen2 body for --random_init (Qwen2.5-0.5B's shape, our own BPE vocabulary).
RANDOM_INIT = {"hidden_size": 896, "num_layers": 24, "vocab_size": 16384}


@dataclass
class DriverArguments:
    """Which model, where to write, which stage configs; training settings live in the YAML files."""

    out: str = field(metadata={"help": "Output folder: base/ (built models), sft/, gspo/, summary.json."})
    model: str | None = field(default=None, metadata={"help": "Local weights directory (or hub id if cached)."})
    random_init: bool = field(default=False, metadata={"help": "Random ~0.5B Qwen2 + in-process tokenizer."})
    tiny: bool = field(default=False, metadata={"help": "Tiny random model and the *_tiny.yaml configs (CPU check)."})
    store: str = field(default="supermarket", metadata={"help": "Store trained and evaluated (sets --stores)."})
    seed: int = field(default=0, metadata={"help": "Seed of both stages and of the evaluation."})
    eval_tasks: int | None = field(default=None, metadata={"help": "Held-out tasks evaluated (default 20, tiny 2)."})
    sft_config: str | None = field(default=None, metadata={"help": "SFT YAML (default by mode, see above)."})
    gspo_config: str | None = field(default=None, metadata={"help": "GSPO YAML (default by mode, see above)."})
    sft_args: str = field(default="", metadata={"help": "Extra train/sft.py flags, e.g. '--max_steps 20'."})
    gspo_args: str = field(default="", metadata={"help": "Extra train/gspo.py flags, e.g. '--max_steps 5'."})
    vllm_server_gpus: str | None = field(
        default=None,
        metadata={"help": "With a vllm_mode: server config, launch `trl vllm-serve` on these CUDA devices."},
    )

    def __post_init__(self):
        sources = [bool(self.model), self.random_init, self.tiny]
        if sum(sources) != 1:
            raise ValueError("give exactly one of --model PATH, --random_init, --tiny")
        if self.store not in PAPER_STORES:
            raise ValueError(f"store must be one of {PAPER_STORES}, got {self.store!r}")
        if self.eval_tasks is None:
            self.eval_tasks = 2 if self.tiny else 20
        if self.eval_tasks < 1:
            raise ValueError(f"eval_tasks must be positive, got {self.eval_tasks}")
        size = "tiny" if self.tiny else None
        self.sft_config = self.sft_config or str(CONFIGS / ("sft_tiny.yaml" if size else "sft_supermarket_200_steps.yaml"))
        self.gspo_config = self.gspo_config or str(CONFIGS / ("gspo_tiny.yaml" if size else "gspo_supermarket_30_steps.yaml"))


def stage_args(args: DriverArguments, model_dir: str) -> tuple[tuple, tuple]:
    """(SFT, GSPO) parsed configs: the YAML files + the driver's paths, store and seed + extra flags."""
    out = Path(args.out)
    common = ["--stores", args.store, "--seed", str(args.seed)]
    sft = parse_args("sft", ["--config", args.sft_config, "--model_name_or_path", model_dir,
                             "--output_dir", str(out / "sft"), *common, *shlex.split(args.sft_args)])
    sft_final = Path(sft[1].output_dir) / "final"  # what train/sft.py writes
    gspo = parse_args("gspo", ["--config", args.gspo_config, "--model_name_or_path", str(sft_final),
                               "--output_dir", str(out / "gspo"), *common, *shlex.split(args.gspo_args)])
    return sft, gspo


def vllm_server_command(training_args: Any, model_dir: str) -> list[str] | None:
    """``trl vllm-serve`` for a server-mode GSPO config (None when the config does not use a server)."""
    if not (training_args.use_vllm and training_args.vllm_mode == "server"):
        return None
    if training_args.vllm_server_base_url:
        raise ValueError("vllm_server_base_url points at a running server: start none, drop --vllm_server_gpus")
    return ["trl", "vllm-serve", "--model", model_dir, "--host", training_args.vllm_server_host,
            "--port", str(training_args.vllm_server_port)]


def prepare_model(args: DriverArguments) -> str:
    if args.model:
        return args.model
    from train.tiny import build_tiny_model, store_texts

    out = Path(args.out)
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


def evaluate(model_dir: str, held_out: list[str], env_args: Any, args: DriverArguments) -> dict:
    from agents.hf_policy import HFPolicyAssistant
    from train.evaluate import evaluate_policy

    agent = HFPolicyAssistant(model_dir, max_new_tokens=env_args.max_new_tokens, temperature=0.7, top_p=0.95,
                              seed=args.seed)
    result = evaluate_policy(agent, args.store, held_out, seed=args.seed, max_turns=env_args.max_turns,
                             image_size=tuple(env_args.env_image_size))
    del agent
    return result


def gspo_timing(log_history: list[dict], runtime: float) -> dict:
    gen = sum(float(h.get("timing/generate_s", 0.0)) for h in log_history)
    env = sum(float(h.get("timing/env_reward_s", 0.0)) for h in log_history)
    return {"total_s": runtime, "generation_s": gen, "env_reward_s": env, "optimisation_and_rest_s": runtime - gen - env}


def _run_gspo(gspo_args: tuple, server_gpus: str | None) -> Path:
    """train/gspo.py's main, with a `trl vllm-serve` subprocess around it when asked for."""
    import os

    from train import gspo

    script_args, training_args, model_args = gspo_args
    command = vllm_server_command(training_args, model_args.model_name_or_path) if server_gpus is not None else None
    if command is None:
        return gspo.main(script_args, training_args, model_args)
    logger.info("starting %s on CUDA devices %s", shlex.join(command), server_gpus)
    server = subprocess.Popen(command, env=dict(os.environ, CUDA_VISIBLE_DEVICES=server_gpus))
    try:  # the trainer waits up to vllm_server_timeout for the server's /health
        return gspo.main(script_args, training_args, model_args)
    finally:
        server.terminate()
        server.wait(timeout=60)


def main(args: DriverArguments) -> dict:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch

    from train import sft
    from train.tasks import split_tasks

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model_dir = prepare_model(args)
    sft_args, gspo_args = stage_args(args, model_dir)
    env_args = gspo_args[0]
    held_out = split_tasks(args.store, env_args.eval_profile_fraction, env_args.split_seed)[1][: args.eval_tasks]
    summary: dict = {"model": model_dir, "store": args.store, "held_out_tasks": held_out,
                     "configs": {"sft": args.sft_config, "gspo": args.gspo_config},
                     "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}

    summary["before"] = evaluate(model_dir, held_out, env_args, args)
    logger.info("before: %s", summary["before"])

    t0 = time.perf_counter()
    sft.main(*sft_args)
    summary["sft_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    gspo_dir = _run_gspo(gspo_args, args.vllm_server_gpus)
    runtime = time.perf_counter() - t0
    history = json.loads((gspo_dir / "log_history.json").read_text())
    summary["gspo_timing"] = gspo_timing(history, runtime)
    lengths = [float(h["completions/mean_length"]) for h in history if "completions/mean_length" in h]
    if summary["gspo_timing"]["generation_s"] > 0:
        summary["gspo_rollout_tokens_per_s"] = (
            sum(lengths) * gspo_args[1].generation_batch_size / summary["gspo_timing"]["generation_s"]
        )

    summary["after"] = evaluate(str(gspo_dir), held_out, env_args, args)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))

    b, a, t = summary["before"], summary["after"], summary["gspo_timing"]
    print(f"device: {summary['device']}   model: {model_dir}")
    print(f"held-out tasks ({args.store}): {len(held_out)}")
    print(f"{'':8}{'SR':>8}{'R_total':>10}{'turns':>8}{'gen tok/s':>12}")
    for name, r in (("before", b), ("after", a)):
        print(f"{name:8}{r['success_rate']:8.3f}{r['mean_r_total']:10.4f}{r['mean_turns']:8.2f}{r['tokens_per_s']:12.1f}")
    print(f"SFT: {summary['sft_s']:.1f} s for {sft_args[1].max_steps} steps")
    print(f"GSPO: {t['total_s']:.1f} s for {gspo_args[1].max_steps} steps = generation {t['generation_s']:.1f} s + "
          f"env/reward {t['env_reward_s']:.1f} s + optimisation/other {t['optimisation_and_rest_s']:.1f} s")
    if "gspo_rollout_tokens_per_s" in summary:
        print(f"GSPO rollout model tokens/s: {summary['gspo_rollout_tokens_per_s']:.1f}")
    return summary


def parse_driver_args(argv: list[str] | None = None) -> DriverArguments:
    """The driver's flags through the same parser as the stages (``TrlParser``); bad input exits with one line."""
    from trl import TrlParser

    try:
        (args,) = TrlParser((DriverArguments,)).parse_args_and_config(argv)
        _, (_, gspo, _) = stage_args(args, args.model or "MODEL")  # fail before any model is built or trained
        if args.vllm_server_gpus is not None and vllm_server_command(gspo, "MODEL") is None:
            raise ValueError("--vllm_server_gpus needs a GSPO config with use_vllm: true and vllm_mode: server")
    except (ValueError, OSError) as err:
        sys.exit(f"error: {err}")
    return args


if __name__ == "__main__":
    main(parse_driver_args())
