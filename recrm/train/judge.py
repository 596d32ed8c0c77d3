"""SFT of a generative judge (instruction, consistency, relevance) with TRL's SFTTrainer.

Each record becomes a prompt-completion pair: the judge prompt (system + user) and the
answer ``Reason: ...`` then ``Score: N``; the loss covers the answer only.
"""

from __future__ import annotations

import logging
from pathlib import Path

from recrm.data.prompts import judge_fields, judge_messages, judge_target
from recrm.train.config import RMTrainConfig

__all__ = ["judge_rows", "train_judge"]

logger = logging.getLogger(__name__)


def judge_rows(kind: str, records) -> list[dict]:
    """Conversational prompt-completion rows for TRL."""
    rows = []
    for r in records:
        score = r.score if kind == "relevance" else r.label
        rows.append({
            "prompt": judge_messages(kind, judge_fields(kind, r)),
            "completion": [{"role": "assistant", "content": judge_target(r.reason, score)}],
        })
    return rows


def train_judge(cfg: RMTrainConfig, training_overrides: dict | None = None) -> Path:
    """Fine-tune ``cfg.model`` as the ``cfg.task`` judge and save it to ``cfg.out``."""
    from datasets import Dataset
    from transformers import set_seed
    from trl import SFTConfig, SFTTrainer

    from recrm.train.models import load_causal, save_scorer

    set_seed(cfg.seed)
    records = cfg.train_records()
    model, tok = load_causal(cfg.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    dataset = Dataset.from_list(judge_rows(cfg.task, records))
    peft_config = None
    if cfg.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, target_modules="all-linear",
                                 task_type="CAUSAL_LM")
    args = SFTConfig(
        **cfg.trainer_kwargs(),
        max_length=cfg.max_length,
        completion_only_loss=True,
        gradient_checkpointing=False,  # small judges: recomputation costs more than the memory it saves
        **(training_overrides or {}),
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tok, peft_config=peft_config)
    if len(trainer.train_dataset) == 0:  # TRL drops examples whose answer was truncated away
        raise ValueError(
            f"all {len(records)} {cfg.task} examples lose their answer at max_length={cfg.max_length}; raise --max_length"
        )
    result = trainer.train()
    model = trainer.model
    if cfg.lora:
        model = model.merge_and_unload()
    logger.info("%s judge: %d records, final loss %.4f", cfg.task, len(records), result.training_loss)
    return save_scorer(model, tok, cfg.out, {"dimension": cfg.task, "type": "judge", "base": cfg.model,
                                             "train_records": len(records), "train_loss": result.training_loss})
