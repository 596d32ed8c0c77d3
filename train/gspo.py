"""GSPO on multi-turn SituRec episodes with TRL's GRPOTrainer and a rollout_func.

    accelerate launch train/gspo.py --config train/configs/gspo_supermarket.yaml
    accelerate launch --cpu --num_processes 1 --mixed_precision no --dynamo_backend no \\
        train/gspo.py --config train/configs/gspo_tiny.yaml --model_name_or_path runs/tiny/model

Configuration: ``train.config.parse_args("gspo")``, i.e. ``TrlParser((SituRecArguments,
GSPOConfig, ModelConfig))``: every GRPOConfig / ModelConfig option is a YAML key or flag.

Dataset rows are (store, task_id, seed) for the TRAINING tasks (held-out profiles never
train; their task ids are written to OUTPUT_DIR/held_out_tasks.json for evaluation).
TRL repeats each row G times; ``train.rollout.SituRecRollout`` plays the G episodes of a
group from the same env seed (same starting situation) and returns one token sequence
each; ``trajectory_reward`` hands TRL the trajectory reward (``reward_parts: true``: one
reward function per RecRM part, ``train.rewards``, for ``multi_objective_aggregation``).
Metrics: rewards/*, recrm/<component>/mean, recrm/gate_*/pass_rate, recrm/part_*/mean and
/advantage_share, siturec/success_rate, siturec/pass^k (k = 1, 2, 4.. <= G), timing/*.
With ``use_vllm`` the rollout generates through TRL's ``VLLMGeneration`` (server or
colocate) and returns vLLM's token log-probabilities, which TRL's importance-sampling
correction (``vllm_importance_sampling_correction``, on by default) needs; on several
processes the ranks generate together every turn until all their episodes have ended.
With ``interface: environment_factory`` TRL plays the episodes itself through
``train.environment.SituRecToolEnv`` (one ``assist`` tool call per turn, reward from
``get_reward``, logged as rewards/SituRecToolEnv/*).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python train/gspo.py` / `accelerate launch train/gspo.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from train.config import SituRecArguments, load_model_and_tokenizer, parse_or_exit  # noqa: E402
from train.tasks import training_rows  # noqa: E402

__all__ = ["build_dataset", "main", "training_rows"]

logger = logging.getLogger(__name__)


def build_dataset(cfg: SituRecArguments, seed: int):
    """(train Dataset of prompt keys, {store: held-out task ids}); env seeds start at ``seed``."""
    from datasets import Dataset

    rows, held_out = training_rows(cfg, seed)
    return Dataset.from_list(rows), held_out


def main(script_args: SituRecArguments, training_args, model_args) -> Path:
    """Train; returns the output directory (model, tokenizer, held-out task ids, configs, log)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from dataclasses import asdict

    from transformers import set_seed
    from trl import GRPOTrainer, get_peft_config

    from train.rewards import part_reward_functions
    from train.rollout import SituRecRollout, trajectory_reward

    set_seed(training_args.seed)
    if training_args.run_name is None:
        training_args.run_name = (
            f"{'+'.join(script_args.stores)}__gspo-{script_args.reward_variant}__{training_args.seed}__{int(time.time())}"
        )
    logger.info("config: %s", json.dumps(asdict(script_args)))

    if script_args.interface == "environment_factory":  # TRL's tool-calling environments (train/environment.py)
        from train.environment import SituRecToolEnv, tool_dataset

        dataset, held_out = tool_dataset(script_args, training_args.seed)
        episodes = {"environment_factory": SituRecToolEnv.factory(script_args)}  # get_reward is the reward,
        if script_args.reward_parts:  # or one function per part, read from the environments
            episodes["reward_funcs"] = part_reward_functions()
    else:
        dataset, held_out = build_dataset(script_args, training_args.seed)
        reward_funcs = part_reward_functions() if script_args.reward_parts else [trajectory_reward]
        episodes = {"reward_funcs": reward_funcs,
                    "rollout_func": SituRecRollout(script_args, training_args.max_completion_length)}
    model, tokenizer = load_model_and_tokenizer(training_args, model_args)
    trainer = GRPOTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        **episodes,
    )
    trainer.train()
    out = Path(training_args.output_dir)
    trainer.save_model(str(out))
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(out)
        (out / "held_out_tasks.json").write_text(json.dumps(held_out, indent=1))
        configs = {"situ_rec": asdict(script_args), "model": asdict(model_args)}
        (out / "script_config.json").write_text(json.dumps(configs, indent=1, default=str))
        (out / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1, default=str))
    return out


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    main(*parse_or_exit("gspo"))
