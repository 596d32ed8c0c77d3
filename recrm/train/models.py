"""Base-model loading for reward-model training: folders, hub ids and the team's GGUF loader."""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["is_gguf", "load_causal", "load_sequence_classifier", "plain_model_folder", "save_scorer"]

logger = logging.getLogger(__name__)


def _gguf():
    try:
        from situ_gym.llm import gguf
    except ImportError as exc:
        raise ValueError(
            "a 'gguf:' model needs situ_gym.llm.gguf (the team's GGUF loader) and "
            'pip install "situ-gym[train]" gguf'
        ) from exc
    return gguf


def is_gguf(spec: str) -> bool:
    return spec.startswith("gguf:") or spec.endswith(".gguf")


def plain_model_folder(spec: str, out_dir: str | Path) -> Path:
    """Convert a ``gguf:...`` base to a plain transformers folder once (drivers that train
    several scorers from one GGUF reuse it instead of dequantizing it per scorer)."""
    gguf = _gguf()
    model, tok = gguf.load_causal_lm(spec)
    return gguf.save_as_model_folder(model, tok, out_dir)


def _plain(spec: str) -> tuple[str, tempfile.TemporaryDirectory | None]:
    """A transformers folder for ``spec``: a GGUF is converted first (a model loaded straight
    from GGUF is flagged as quantized and the Trainer refuses to fine-tune it)."""
    if not is_gguf(spec):
        return spec, None
    tmp = tempfile.TemporaryDirectory(prefix="recrm-base-")
    plain_model_folder(spec, tmp.name)  # a plain, trainable folder
    return tmp.name, tmp


def load_causal(spec: str):
    """(model, tokenizer) of a causal LM from a folder, hub id or ``gguf:...`` spec."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, tmp = _plain(spec)
    try:
        tok = AutoTokenizer.from_pretrained(path)
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        return AutoModelForCausalLM.from_pretrained(path), tok
    finally:
        if tmp is not None:
            tmp.cleanup()


def load_sequence_classifier(spec: str, num_labels: int):
    """(model, tokenizer) of ``AutoModelForSequenceClassification`` on the base ``spec`` (fresh head)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path, tmp = _plain(spec)
    try:
        tok = AutoTokenizer.from_pretrained(path)
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=num_labels)
    finally:
        if tmp is not None:
            tmp.cleanup()
    model.config.pad_token_id = tok.pad_token_id
    return model, tok


def save_scorer(model, tokenizer, out: str | Path, meta: dict[str, Any]) -> Path:
    """Save a trained scorer folder: weights, tokenizer and ``recrm_scorer.json``."""
    from recrm.scorers import SCORER_FILE

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / SCORER_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    logger.info("saved %s scorer to %s", meta.get("dimension"), out)
    return out
