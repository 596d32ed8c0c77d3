"""Chat with a local transformers model: a folder, a hub id or a GGUF file; text or vision.

A batch is one left-padded ``generate`` over every request's chat-templated prompt.
Sampling is seeded from the batch's request seeds (``transformers.set_seed``), so the
same batch gives the same text; ``temperature == 0`` decodes greedily.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import Any

from situ_gym.llm.gguf import load_causal_lm, parse_gguf_spec
from situ_gym.llm.types import BackendUnavailable, ChatBackend, ChatRequest, ChatResult

__all__ = ["HFChatBackend"]

logger = logging.getLogger(__name__)


def _has_processor(spec: str) -> bool:
    """Does ``spec`` (a folder or hub id, not GGUF) carry an image processor?"""
    path = Path(spec).expanduser()
    if path.is_dir():
        return (path / "preprocessor_config.json").exists() or (path / "processor_config.json").exists()
    try:
        from transformers import AutoProcessor

        return hasattr(AutoProcessor.from_pretrained(spec), "image_processor")
    except (OSError, ValueError):
        return False


class HFChatBackend(ChatBackend):
    """``spec``: "gguf:smollm2", "gguf:PATH", a model folder or a hub id (see situ_gym.llm.gguf).

    Vision models (a folder or id with an image processor) get the request's images;
    text models get the text parts only. ``max_batch`` caps rows per ``generate``.
    """

    def __init__(self, spec: str, *, dtype: Any = None, device: str | None = None, max_batch: int = 16):
        import torch

        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.model = spec
        self.max_batch = int(max_batch)
        self.processor = None
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            if parse_gguf_spec(spec) is None and _has_processor(spec):
                from transformers import AutoModelForImageTextToText, AutoProcessor

                self.processor = AutoProcessor.from_pretrained(spec)
                self.net = AutoModelForImageTextToText.from_pretrained(spec, dtype=dtype or torch.float32)
                self.tokenizer = self.processor.tokenizer
            else:
                self.net, self.tokenizer = load_causal_lm(spec, dtype=dtype)
        except (OSError, FileNotFoundError, ValueError) as exc:
            raise BackendUnavailable(f"cannot load model {spec!r}: {str(exc).splitlines()[0]}") from exc
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"
        self.net.to(device).eval()
        self.supports_images = self.processor is not None

    @staticmethod
    def _seed(requests: list[ChatRequest]) -> int:
        joined = ",".join(str(r.seed) for r in requests).encode()
        return int.from_bytes(hashlib.sha256(joined).digest()[:4], "little")

    def _encode(self, requests: list[ChatRequest]):
        if self.processor is not None:
            from PIL import Image

            conversations, images = [], []
            for req in requests:
                # The chat template gets an image placeholder; the pixels go to the processor.
                msgs = req.api_messages(lambda _: {"type": "image"}, text_as_parts=True)
                conversations.append(self.processor.apply_chat_template(msgs, add_generation_prompt=True))
                images.append([
                    Image.fromarray(p["image"])
                    for m in req.messages if isinstance(m.get("content"), list)
                    for p in m["content"] if p.get("type") == "image"
                ])
            self.processor.tokenizer.padding_side = "left"
            kwargs: dict[str, Any] = {"text": conversations, "padding": True, "return_tensors": "pt"}
            if any(images):
                kwargs["images"] = images
            return self.processor(**kwargs)
        prompts = [
            self.tokenizer.apply_chat_template(r.text_messages(), add_generation_prompt=True, tokenize=False)
            for r in requests
        ]
        return self.tokenizer(prompts, padding=True, return_tensors="pt", add_special_tokens=False)

    def _generate(self, requests: list[ChatRequest]) -> list[ChatResult]:
        import torch
        from transformers import set_seed

        t0 = time.perf_counter()
        batch = self._encode(requests).to(next(self.net.parameters()).device)
        first = requests[0]
        sample = first.temperature > 0
        set_seed(self._seed(requests))
        with torch.no_grad():
            out = self.net.generate(
                **batch,
                max_new_tokens=max(r.max_tokens for r in requests),
                do_sample=sample,
                temperature=first.temperature if sample else None,
                top_p=first.top_p if sample else None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        width = batch["input_ids"].shape[1]
        seconds = (time.perf_counter() - t0) / len(requests)
        results = []
        eos = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
        for row, req, mask in zip(out[:, width:].tolist(), requests, batch["attention_mask"], strict=True):
            kept = []
            for tok in row[: req.max_tokens]:
                if tok in eos:
                    break
                kept.append(tok)
            results.append(
                ChatResult(
                    text=self.tokenizer.decode(kept, skip_special_tokens=True).strip(),
                    prompt_tokens=int(mask.sum()),
                    completion_tokens=len(kept),
                    seconds=seconds,
                    model=self.model,
                )
            )
        return results

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        results: list[ChatResult] = []
        # Requests with different sampling settings cannot share one generate call.
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.temperature, r.top_p), []).append(i)
        by_index: dict[int, ChatResult] = {}
        for idx in groups.values():
            for k in range(0, len(idx), self.max_batch):
                chunk = idx[k : k + self.max_batch]
                for i, res in zip(chunk, self._generate([requests[i] for i in chunk]), strict=True):
                    by_index[i] = res
        results = [by_index[i] for i in range(len(requests))]
        return results

    def close(self) -> None:
        self.net = None
