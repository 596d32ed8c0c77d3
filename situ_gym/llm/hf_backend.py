"""Chat with a local transformers model: a folder, a hub id or a GGUF file; text or vision.

A batch is one left-padded ``generate`` over every request's chat-templated prompt.
Sampling is seeded from the batch's request seeds (``transformers.set_seed``), so the
same batch gives the same text; ``temperature == 0`` decodes greedily.

Structured output: a request with a ``schema`` (or ``json_mode``: any JSON object) is
decoded under that schema's grammar (``situ_gym.llm.structured``, one llguidance matcher
per row; rows without one are left free in the same ``generate``).

The model is loaded on the first ``chat_batch`` (the constructor only checks that the
spec exists and whether it is a vision model), so a run answered wholly by the response
cache loads none. A prompt longer than the model's context (its config's
``max_position_embeddings``, for GGUF files the file's context length) gets a result with
``EpisodeError("context_length")``; the batch's other rows are answered.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

from situ_gym.llm.errors import EpisodeError
from situ_gym.llm.gguf import load_causal_lm, parse_gguf_spec
from situ_gym.llm.settings import current as current_settings
from situ_gym.llm.structured import GrammarConstraint, request_schema
from situ_gym.llm.types import BackendUnavailable, ChatBackend, ChatRequest, ChatResult

__all__ = ["HFChatBackend", "load_vision_model"]

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


def _looks_local(spec: str) -> bool:
    return spec.startswith((".", "/", "~")) or spec.count("/") > 1 or Path(spec).expanduser().exists()


def load_vision_model(spec: str, *, dtype: Any = None) -> tuple[Any, Any]:
    """``(model, processor)`` of an image-text model folder or hub id."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(spec)
    return AutoModelForImageTextToText.from_pretrained(spec, dtype=dtype or torch.float32), processor


class HFChatBackend(ChatBackend):
    """``spec``: "gguf:smollm2", "gguf:PATH", a model folder or a hub id (see situ_gym.llm.gguf).

    Vision models (a folder or id with an image processor) get the request's images;
    text models get the text parts only. ``max_batch`` caps rows per ``generate``.
    ``net``, ``tokenizer`` and ``processor`` load the model when first read.
    """

    def __init__(self, spec: str, *, dtype: Any = None, device: str | None = None, max_batch: int = 16):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.model = spec
        self.max_batch = int(max_batch)
        self._dtype, self._device = dtype, device
        try:
            gguf = parse_gguf_spec(spec)
        except (FileNotFoundError, ValueError) as exc:
            raise BackendUnavailable(f"cannot load model {spec!r}: {str(exc).splitlines()[0]}") from exc
        if gguf is None and _looks_local(spec) and not Path(spec).expanduser().is_dir():
            raise BackendUnavailable(f"cannot load model {spec!r}: no such model folder")
        self.supports_images = gguf is None and _has_processor(spec)
        self._net: Any = None
        self._tokenizer: Any = None
        self._processor: Any = None
        self._grammar: GrammarConstraint | None = None
        self._eos: frozenset[int] = frozenset()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lazy model
    def _load(self) -> None:
        with self._lock:
            if self._net is not None:
                return
            import torch

            t0 = time.perf_counter()
            try:
                if self.supports_images:
                    net, processor = load_vision_model(self.model, dtype=self._dtype)
                    tokenizer = processor.tokenizer
                else:
                    (net, tokenizer), processor = load_causal_lm(self.model, dtype=self._dtype), None
            except (OSError, FileNotFoundError, ValueError) as exc:
                raise BackendUnavailable(f"cannot load model {self.model!r}: {str(exc).splitlines()[0]}") from exc
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            tokenizer.padding_side = "left"
            net.to(self._device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
            eos = getattr(net.generation_config, "eos_token_id", None)
            eos = [eos] if isinstance(eos, int) else list(eos or [])
            self._eos = frozenset(int(i) for i in [*eos, tokenizer.eos_token_id] if i is not None)
            self._tokenizer, self._processor, self._net = tokenizer, processor, net
            logger.info("loaded %s in %.1f s", self.model, time.perf_counter() - t0)

    @property
    def net(self) -> Any:
        self._load()
        return self._net

    @property
    def tokenizer(self) -> Any:
        self._load()
        return self._tokenizer

    @property
    def processor(self) -> Any:
        self._load()
        return self._processor

    def context_length(self) -> int | None:
        """The model's context in tokens (its config; else ``LLMSettings.max_context``)."""
        config = self.net.config
        config = getattr(config, "text_config", None) or config
        value = getattr(config, "max_position_embeddings", None)
        return int(value) if isinstance(value, int) and value > 0 else current_settings().max_context

    def _constraint(self) -> GrammarConstraint:
        if self._grammar is None:
            vocab = self.net.get_output_embeddings().weight.shape[0]
            self._grammar = GrammarConstraint(self.tokenizer, vocab_size=vocab, eos_ids=sorted(self._eos))
        return self._grammar

    # ------------------------------------------------------------------ generation
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
        """One ``generate`` for ``requests`` (or more, where rows need less room than the longest)."""
        t0 = time.perf_counter()
        batch = self._encode(requests)
        lengths = [int(n) for n in batch["attention_mask"].sum(dim=1)]
        context = self.context_length()
        room = [r.max_tokens if context is None else min(r.max_tokens, context - n) for r, n in zip(requests, lengths, strict=True)]
        results: list[ChatResult | None] = [None] * len(requests)
        for i, (n, free) in enumerate(zip(lengths, room, strict=True)):
            if free < 1:
                results[i] = ChatResult(text="", prompt_tokens=n, model=self.model, error=EpisodeError(
                    "context_length", f"the prompt holds {n} tokens, the model's context is {context}"))
        todo = [i for i, res in enumerate(results) if res is None]
        if todo:
            # Never past the context: rows with less room than the longest budget go in a later generate.
            widest = max(room[i] for i in todo)
            now = [i for i in todo if context is None or lengths[i] + widest <= context]
            later = [i for i in todo if i not in now]
            if later or len(todo) < len(requests):
                batch = self._encode([requests[i] for i in now])
            for i, res in zip(now, self._decode([requests[i] for i in now], batch, [room[i] for i in now]),
                              strict=True):
                results[i] = res
            if later:
                for i, res in zip(later, self._generate([requests[i] for i in later]), strict=True):
                    results[i] = res
        share = (time.perf_counter() - t0) / len(requests)
        for res in results:
            if res is not None and res.error is not None:
                res.seconds = share
        return [r for r in results if r is not None]

    def _decode(self, requests: list[ChatRequest], batch: Any, budgets: list[int]) -> list[ChatResult]:
        import torch
        from transformers import LogitsProcessorList, set_seed

        t0 = time.perf_counter()
        batch = batch.to(self.net.device)
        first = requests[0]
        sample = first.temperature > 0
        schemas = [request_schema(r) for r in requests]
        processors = LogitsProcessorList()
        if any(s is not None for s in schemas):
            processors.append(self._constraint().logits_processor(schemas))
        set_seed(self._seed(requests))
        with torch.no_grad():
            out = self.net.generate(
                **batch,
                max_new_tokens=max(budgets),
                do_sample=sample,
                temperature=first.temperature if sample else None,
                top_p=first.top_p if sample else None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=sorted(self._eos),
                logits_processor=processors,
            )
        width = batch["input_ids"].shape[1]
        seconds = (time.perf_counter() - t0) / len(requests)
        stop = self._eos | {self.tokenizer.pad_token_id}
        results = []
        for row, budget, mask, schema in zip(out[:, width:].tolist(), budgets, batch["attention_mask"], schemas,
                                             strict=True):
            kept = []
            for tok in row[:budget]:
                if tok in stop:
                    break
                kept.append(tok)
            results.append(ChatResult(
                text=self.tokenizer.decode(kept, skip_special_tokens=True).strip(),
                prompt_tokens=int(mask.sum()),
                completion_tokens=len(kept),
                seconds=seconds,
                model=self.model,
                extra={"constrained": True} if schema is not None else {},
            ))
        return results

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        if not requests:
            return []
        self._load()
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
        return [by_index[i] for i in range(len(requests))]

    def close(self) -> None:
        self._net = self._tokenizer = self._processor = self._grammar = None
