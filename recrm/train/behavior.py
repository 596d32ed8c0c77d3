"""List-level behaviour classifier: does the shopper act on this recommended list (CE, two classes)."""

from __future__ import annotations

import logging
from pathlib import Path

from recrm.data.prompts import list_text
from recrm.train.config import RMTrainConfig

__all__ = ["train_behavior"]

logger = logging.getLogger(__name__)


def train_behavior(cfg: RMTrainConfig, training_overrides: dict | None = None) -> Path:
    """Fine-tune ``cfg.model`` as the behaviour classifier and save it to ``cfg.out``."""
    from datasets import Dataset
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

    from recrm.train.models import load_sequence_classifier, save_scorer

    set_seed(cfg.seed)
    records = cfg.train_records()
    model, tok = load_sequence_classifier(cfg.model, num_labels=2)
    enc = tok([list_text(r.profile, r.query, r.items) for r in records], truncation=True, max_length=cfg.max_length)
    dataset = Dataset.from_dict({**enc, "labels": [r.label for r in records]})
    args = TrainingArguments(
        **cfg.trainer_kwargs(),
        **(training_overrides or {}),
    )
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=DataCollatorWithPadding(tok))
    result = trainer.train()
    logger.info("behaviour classifier: %d lists, final loss %.4f", len(records), result.training_loss)
    return save_scorer(trainer.model, tok, cfg.out, {"dimension": "behavior", "type": "classifier",
                                                     "base": cfg.model, "train_records": len(records),
                                                     "train_loss": result.training_loss})
