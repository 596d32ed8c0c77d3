"""P(yes) of a generative judge: the next-token probability of the positive answer over {positive, negative}.

The paper's reranker scores a (shopper, item) pair by the probability of "yes"; its behaviour
model answers "1" or "0". With a transformers causal LM at hand (a trained judge folder, or the
model behind an ``hf:`` chat backend) that probability is read off the logits of the first
answer token, one left-padded forward pass per batch, no sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["answer_token_ids", "yes_probs"]


def answer_token_ids(tokenizer: Any, positive: str, negative: str) -> tuple[int, int]:
    """The first token of each answer as the model would start its reply."""
    ids = []
    for word in (positive, negative):
        toks = tokenizer.encode(word, add_special_tokens=False)
        if not toks:
            raise ValueError(f"the tokenizer encodes {word!r} as no token")
        ids.append(int(toks[0]))
    if ids[0] == ids[1]:
        raise ValueError(f"{positive!r} and {negative!r} start with the same token")
    return ids[0], ids[1]


def yes_probs(model: Any, tokenizer: Any, conversations: Sequence[list[dict[str, str]]], positive: str,
              negative: str, *, batch_size: int = 8, max_length: int | None = None) -> list[float]:
    """P(positive) / (P(positive) + P(negative)) at the first reply token of each conversation."""
    import torch

    pos, neg = answer_token_ids(tokenizer, positive, negative)
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = next(model.parameters()).device
    out: list[float] = []
    try:
        prompts = [tokenizer.apply_chat_template(list(c), tokenize=False, add_generation_prompt=True)
                   for c in conversations]
        for i in range(0, len(prompts), batch_size):
            kw: dict[str, Any] = {"truncation": True, "max_length": max_length} if max_length else {}
            enc = tokenizer(prompts[i : i + batch_size], return_tensors="pt", padding=True,
                            add_special_tokens=False, **kw).to(device)
            with torch.no_grad():
                logits = model(**enc).logits[:, -1, :].float()
            pair = torch.softmax(logits[:, [pos, neg]], dim=-1)[:, 0]
            out += pair.cpu().tolist()
    finally:
        tokenizer.padding_side = side
    return out
