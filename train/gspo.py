"""GSPO on multi-turn SituRec episodes with TRL's GRPOTrainer and a rollout_func.

    accelerate launch train/gspo.py --config train/configs/gspo_supermarket.yaml
    accelerate launch --cpu --num_processes 1 --mixed_precision no --dynamo_backend no \\
        train/gspo.py --config train/configs/gspo_tiny.yaml --model_name_or_path runs/tiny/model

Dataset rows are (store, task_id, seed) for the TRAINING tasks (held-out profiles never
train; their task ids are written to OUTPUT_DIR/held_out_tasks.json for evaluation).
TRL repeats each row G times; ``train.rollout.SituRecRollout`` plays the G episodes of a
group from the same env seed (same starting situation) and returns one token sequence
each; ``trajectory_reward`` hands TRL the trajectory reward. Metrics: rewards/*,
recrm/<component>/mean, recrm/gate_*/pass_rate, siturec/success_rate, timing/*.
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

from train.config import GSPOScriptConfig, parse_config  # noqa: E402

__all__ = ["build_dataset", "main"]

logger = logging.getLogger(__name__)


def build_dataset(cfg: GSPOScriptConfig):
    """(train Dataset of prompt keys, {store: held-out task ids})."""
    from datasets import Dataset

    from train.tasks import gspo_rows, split_tasks

    rows, held_out = [], {}
    for store in cfg.stores:
        train_ids, held = split_tasks(store, cfg.eval_profile_fraction, cfg.split_seed)
        if cfg.max_tasks is not None:
            train_ids = train_ids[: cfg.max_tasks]
        held_out[store] = held
        rows.extend(gspo_rows(store, train_ids, cfg.episodes_per_task, cfg.seed))
    if not rows:
        raise ValueError(f"no training tasks for stores {cfg.stores!r}")
    return Dataset.from_list(rows), held_out


def main(cfg: GSPOScriptConfig) -> Path:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from transformers import set_seed
    from trl import GRPOTrainer

    from agents.hf_policy import load_tokenizer
    from situ_gym.llm.gguf import load_model  # also takes gguf:smollm2 / gguf:PATH
    from train.rollout import SituRecRollout, trajectory_reward

    set_seed(cfg.seed)
    if not cfg.model_name_or_path:
        raise ValueError("model_name_or_path is required")
    if cfg.run_name is None:
        cfg.run_name = f"{'+'.join(cfg.stores)}__gspo-{cfg.reward_variant}__{cfg.seed}__{int(time.time())}"
    logger.info("config: %s", json.dumps(cfg.to_dict(), default=str))

    dataset, held_out = build_dataset(cfg)
    tokenizer = load_tokenizer(cfg.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = load_model(cfg.model_name_or_path, dtype=torch.bfloat16 if cfg.bf16 else torch.float32)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[trajectory_reward],
        args=cfg.to_grpo_config(),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=cfg.peft_config(),
        rollout_func=SituRecRollout(cfg),
    )
    trainer.train()
    out = Path(cfg.output_dir)
    trainer.save_model(str(out))
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(out)
        (out / "held_out_tasks.json").write_text(json.dumps(held_out, indent=1))
        (out / "script_config.json").write_text(json.dumps(cfg.to_dict(), indent=1, default=str))
        (out / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1, default=str))
    return out


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    main(parse_config(GSPOScriptConfig))
