"""SFT of a generative judge (instruction, consistency, relevance) with TRL's SFTTrainer.

Each record becomes a prompt-completion pair: the judge prompt (system + user) and the
answer, the loss covering the answer only. ``judge_format="paper"`` (default): the paper's
prompt and JSON answer (``recrm.judges.formats``: overall and six dimension scores with
reasoning and critical violations; the item and content hallucination lists with severity;
the relevance reason and score); ``"short"``: ``Reason: ...`` then ``Score: N``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from recrm.data.prompts import judge_fields, judge_messages, judge_target
from recrm.train.config import RMTrainConfig

__all__ = ["judge_rows", "generative_rows", "train_judge"]

logger = logging.getLogger(__name__)


def judge_rows(kind: str, records, judge_format: str = "short") -> list[dict]:
    """Conversational prompt-completion rows for TRL (``judge_format``: "short" or "paper")."""
    from recrm.judges import formats

    rows = []
    for r in records:
        if judge_format == "paper":
            prompt, answer = formats.messages(kind, formats.fields_of(kind, r)), formats.target(kind, r)
        else:
            score = r.score if kind == "relevance" else r.label
            prompt, answer = judge_messages(kind, judge_fields(kind, r)), judge_target(r.reason, score)
        rows.append({"prompt": prompt, "completion": [{"role": "assistant", "content": answer}]})
    return rows


def generative_rows(kind: str, records) -> list[dict]:
    """Rows of a generative reranker (one per candidate: "yes" / "no") or behaviour model ("1" / "0")."""
    from recrm.judges import formats

    rows = []
    for r in records:
        items = range(len(r.candidates)) if kind == "ranking" else [None]
        for j in items:
            rows.append({"prompt": formats.messages(kind, formats.fields_of(kind, r, j)),
                         "completion": [{"role": "assistant", "content": formats.target(kind, r, item=j)}]})
    return rows


def train_judge(cfg: RMTrainConfig, training_overrides: dict | None = None, *, generative: bool = False,
                out: str | Path | None = None) -> Path:
    """Fine-tune ``cfg.model`` as the ``cfg.task`` judge (``generative``: the ranking / behaviour
    yes-no model) and save it to ``out`` (default ``cfg.out``)."""
    from datasets import Dataset
    from transformers import set_seed
    from trl import SFTConfig, SFTTrainer

    from recrm.train.models import load_causal, save_scorer

    set_seed(cfg.seed)
    records = cfg.train_records()
    model, tok = load_causal(cfg.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    rows = generative_rows(cfg.task, records) if generative else judge_rows(cfg.task, records, cfg.judge_format)
    dataset = Dataset.from_list(rows)
    peft_config = None
    if cfg.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, target_modules="all-linear",
                                 task_type="CAUSAL_LM")
    kwargs = cfg.trainer_kwargs()
    if out is not None:
        kwargs["output_dir"] = str(Path(out) / "checkpoints")
    args = SFTConfig(
        **kwargs,
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
    meta = {"dimension": cfg.task, "type": "generative" if generative else "judge", "base": cfg.model,
            "train_records": len(records), "train_loss": result.training_loss,
            "synthesised_negatives": cfg.synthesised_negatives}
    if not generative:
        meta["format"] = cfg.judge_format
    return save_scorer(model, tok, out or cfg.out, meta)
