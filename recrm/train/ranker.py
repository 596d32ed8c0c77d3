"""Cross-encoder reranker: ``L = BCE(s_ij, y_ij) + lambda * CE(softmax over the list, positive)``.

A transformers ``Trainer`` with a custom ``compute_loss``: one example is a whole
candidate list; the collator tokenizes its (shopper, item) pairs, and the loss reshapes
the logits back to lists (padded candidates are masked out of the listwise term).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from recrm.data.prompts import pair_text
from recrm.scorers import encode_pairs
from recrm.train.config import RMTrainConfig

__all__ = ["listwise_loss", "ListCollator", "train_ranker"]

logger = logging.getLogger(__name__)


def listwise_loss(logits, labels, mask, lam: float):
    """BCE over real candidates plus ``lam`` times the CE of the positive within its list.

    ``logits``, ``labels`` and ``mask`` are (lists, candidates); ``mask`` is 1 for real
    candidates.
    """
    import torch
    import torch.nn.functional as F

    real = mask.bool()
    bce = F.binary_cross_entropy_with_logits(logits[real], labels[real].float())
    masked = logits.masked_fill(~real, torch.finfo(logits.dtype).min)
    ce = F.cross_entropy(masked, labels.float().argmax(dim=1))
    return bce + lam * ce


class ListCollator:
    """Tokenizes lists of (shopper, item) pairs; pads every list to the batch's longest."""

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length

    def __call__(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        k = max(len(r["candidates"]) for r in rows)
        firsts, seconds, labels, mask = [], [], [], []
        for r in rows:
            pad = k - len(r["candidates"])
            firsts += [r["first"]] * k
            seconds += list(r["candidates"]) + [""] * pad
            labels.append(list(r["labels"]) + [0] * pad)
            mask.append([1] * len(r["candidates"]) + [0] * pad)
        enc = encode_pairs(self.tokenizer, firsts, seconds, self.max_length)
        enc["labels"] = torch.tensor(labels)
        enc["list_mask"] = torch.tensor(mask)
        return dict(enc)


def train_ranker(cfg: RMTrainConfig, training_overrides: dict | None = None) -> Path:
    """Fine-tune ``cfg.model`` as the cross-encoder reranker and save it to ``cfg.out``."""
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments, set_seed

    from recrm.train.models import load_sequence_classifier, save_scorer

    set_seed(cfg.seed)
    records = cfg.train_records()
    model, tok = load_sequence_classifier(cfg.model, num_labels=1)
    rows = [{"first": pair_text(r.profile, r.query), "candidates": r.candidates, "labels": r.labels} for r in records]
    lam = cfg.listwise_lambda

    class ListwiseTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            labels, mask = inputs.pop("labels"), inputs.pop("list_mask")
            out = model(**inputs)
            logits = out.logits[:, 0].view(labels.shape)
            loss = listwise_loss(logits, labels, mask, lam)
            return (loss, out) if return_outputs else loss

    args = TrainingArguments(
        **cfg.trainer_kwargs(),
        remove_unused_columns=False,
        **(training_overrides or {}),
    )
    trainer = ListwiseTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                              data_collator=ListCollator(tok, cfg.max_length))
    result = trainer.train()
    logger.info("ranker: %d lists, final loss %.4f", len(records), result.training_loss)
    return save_scorer(trainer.model, tok, cfg.out, {"dimension": "ranking", "type": "cross_encoder",
                                                     "base": cfg.model, "listwise_lambda": lam, "max_length": cfg.max_length,
                                                     "train_records": len(records), "train_loss": result.training_loss})
