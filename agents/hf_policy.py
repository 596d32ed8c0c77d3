"""HFPolicyAssistant: a transformers causal LM (optionally + LoRA adapter) as a SituRec assistant.

The prompt is ``agents.prompting.Conversation``, the same token ids GSPO trains on. The
output is returned as raw text; the env parses it with its own parser. Generation is free,
as in GSPO training; ``constrained=True`` (evaluation of a trained policy) decodes each
turn under the env's assistant-output schema (``agents.chat_agent.assistant_schema``,
one grammar matcher per episode of the batch, ``situ_gym.llm.structured``).

    >>> agent = HFPolicyAssistant("runs/gspo/checkpoint-50", max_new_tokens=256)  # doctest: +SKIP
    >>> agent.reset(obs, info, seed=0); text = agent.act(obs)                     # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from agents.base import Assistant
from agents.prompting import (
    Conversation,
    catalog_names,
    check_ablation,
    render_prompt,
    state_text,
    turn_end_ids,
    turn_text,
)
from situ_gym.llm.errors import EpisodeError

__all__ = [
    "HFPolicyAssistant", "ContextLengthError", "context_length", "load_tokenizer", "load_policy", "generate_batch",
    "eos_token_ids",
]

logger = logging.getLogger(__name__)


def _looks_like_path(name: str) -> bool:
    """A hub id is "name" or "org/name"; "runs/x" whose "runs" exists here is a local path."""
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or (os.sep != "/" and os.sep in name):
        return True
    parent = Path(name).parent
    return parent != Path(".") and parent.is_dir()


def load_tokenizer(name_or_path: str, *, local_files_only: bool = False):
    """The tokenizer of a model spec (``situ_gym.llm.gguf.load_tokenizer``: GGUF, folder or hub id)."""
    from situ_gym.llm.gguf import load_tokenizer as load

    return load(name_or_path, local_files_only=local_files_only)


def load_policy(
    name_or_path: str,
    adapter: str | None = None,
    *,
    device: str | None = None,
    dtype: str = "auto",
    images: str | bool = "auto",
    local_files_only: bool = False,
) -> tuple[Any, Any, Any | None]:
    """Load (model, tokenizer, image processor or None) for generation.

    ``name_or_path`` is a local directory (a full or merged checkpoint, or a PEFT adapter
    directory whose ``adapter_config.json`` names its base model), a hub id, or a GGUF file
    (``gguf:smollm2``, ``gguf:PATH``; loaded by ``situ_gym.llm.gguf``).
    ``adapter`` is an optional LoRA adapter directory applied with ``PeftModel``.
    """
    import torch

    from situ_gym.llm.gguf import load_model, parse_gguf_spec

    if not isinstance(name_or_path, str) or not name_or_path:
        raise ValueError(f"model must be a non-empty path or hub id, got {name_or_path!r}")
    try:
        gguf = parse_gguf_spec(name_or_path)
    except FileNotFoundError as exc:
        raise ValueError(str(exc)) from exc
    path = Path(name_or_path).expanduser()
    if gguf is None and _looks_like_path(name_or_path) and not path.exists():
        raise ValueError(f"model path does not exist: {name_or_path!r}")
    if adapter is not None and not Path(adapter).expanduser().exists():
        raise ValueError(f"adapter path does not exist: {adapter!r}")
    base = name_or_path
    if path.is_dir() and (path / "adapter_config.json").exists() and not (path / "config.json").exists():
        meta = json.loads((path / "adapter_config.json").read_text())
        base = meta.get("base_model_name_or_path") or ""
        if not base:
            raise ValueError(f"adapter {name_or_path!r} names no base_model_name_or_path")
        adapter = adapter or str(path)

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        torch_dtype = torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    else:
        torch_dtype = getattr(torch, dtype, None)
        if not isinstance(torch_dtype, torch.dtype):
            raise ValueError(f"dtype must be 'auto' or a torch dtype name, got {dtype!r}")

    processor = None
    try:
        tokenizer = load_tokenizer(base, local_files_only=local_files_only)
        vision = False
        if images is not False:
            vision = gguf is None and _has_image_processor(base, local_files_only)
            if images is True and not vision:
                raise ValueError(f"images=True but {base!r} has no image processor")
        if vision:
            from transformers import AutoModelForImageTextToText, AutoProcessor

            processor = AutoProcessor.from_pretrained(base, local_files_only=local_files_only)
            model = AutoModelForImageTextToText.from_pretrained(
                base, dtype=torch_dtype, local_files_only=local_files_only
            )
        else:
            model = load_model(base, dtype=torch_dtype, local_files_only=local_files_only)
    except OSError as exc:
        raise ValueError(f"cannot load model {base!r}: {exc}") from exc
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(Path(adapter).expanduser()))
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device)
    model.eval()
    return model, tokenizer, processor


def _has_image_processor(base: str, local_files_only: bool) -> bool:
    path = Path(base).expanduser()
    if path.is_dir():
        return (path / "preprocessor_config.json").exists() or (path / "processor_config.json").exists()
    try:
        from transformers import AutoProcessor

        return hasattr(AutoProcessor.from_pretrained(base, local_files_only=local_files_only), "image_processor")
    except (OSError, ValueError):
        return False


class ContextLengthError(EpisodeError):
    """An episode's conversation has filled the policy model's context (that episode ends
    with ``error_cause="context_length"``; the others of its batch go on)."""

    def __init__(self, message: str):
        super().__init__("context_length", message)

    def __reduce__(self):
        return (type(self), (str(self).split(": ", 1)[-1],))


def context_length(model: Any) -> int | None:
    """The model's context in tokens (``max_position_embeddings`` of its text config), if it says."""
    config = getattr(model, "config", None)
    config = getattr(config, "text_config", None) or config
    value = getattr(config, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and value > 0 else None


def eos_token_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """Every id that ends a turn: the generation config's eos ids, the tokenizer's, and the
    chat template's single end-of-turn token (e.g. ``<|im_end|>`` for base Qwen models)."""
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None)
    if isinstance(eos, int):
        ids.add(eos)
    elif eos is not None:
        ids.update(int(i) for i in eos)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    if getattr(tokenizer, "chat_template", None):
        end = turn_end_ids(tokenizer)
        if len(end) == 1:
            ids.add(int(end[0]))
    return frozenset(ids)


def generate_batch(
    model: Any,
    contexts: list[list[int]],
    *,
    pad_id: int,
    eos_ids: frozenset[int],
    max_new_tokens: int,
    do_sample: bool = True,
    temperature: float = 1.0,
    top_p: float = 1.0,
    logits_processor: list[Any] | None = None,
) -> list[list[int]]:
    """ONE left-padded ``generate`` over ``contexts``; each output cut after its first eos.

    Used by ``HFPolicyAssistant`` and by the GSPO rollout, so evaluation and training
    generate identically; ``logits_processor`` (e.g. a schema constraint) only where the
    caller asks for one.
    """
    import torch
    from transformers import GenerationConfig, LogitsProcessorList

    if not contexts:
        return []
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be positive, got {max_new_tokens!r}")
    device = next(model.parameters()).device
    width = max(len(c) for c in contexts)
    input_ids = torch.full((len(contexts), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(contexts), width), dtype=torch.long)
    for row, ctx in enumerate(contexts):
        input_ids[row, width - len(ctx) :] = torch.tensor(ctx, dtype=torch.long)
        attention[row, width - len(ctx) :] = 1
    config = GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=do_sample,
        temperature=temperature if do_sample else None,
        top_p=top_p if do_sample else None,
        top_k=None,
        pad_token_id=pad_id,
        eos_token_id=sorted(eos_ids),
        bos_token_id=None,
    )
    with torch.no_grad():
        out = model.generate(
            input_ids=input_ids.to(device), attention_mask=attention.to(device), generation_config=config,
            logits_processor=LogitsProcessorList(logits_processor or []),
        )
    results = []
    for row in out[:, width:].tolist():
        kept: list[int] = []
        for token in row:
            kept.append(token)
            if token in eos_ids:
                break
        else:
            while kept and kept[-1] == pad_id and pad_id not in eos_ids:
                kept.pop()
        results.append(kept)
    return results


class HFPolicyAssistant(Assistant):
    """A transformers policy playing one (``reset``) or several (``reset_batch``) episodes.

    Arguments: ``model`` (local path, merged checkpoint, adapter dir or hub id), ``adapter``
    (LoRA adapter dir), ``max_new_tokens``, ``temperature``, ``top_p``, ``do_sample``,
    ``seed`` (default per-episode seed), ``device``, ``dtype``, ``images`` ("auto": pass
    ``obs["som_rgb"]`` when the model has an image processor; never under an App. D.4
    ablation, which reset reads from ``info["ablation"]`` with the prompt), ``local_files_only``,
    ``constrained`` (decode under the assistant-output schema; off for training rollouts).

    Generation is seeded per call from the episode seed and the turn number
    (``transformers.set_seed``), so the same seed, task and batch give the same text.
    ``act_batch(observations)`` continues the episodes opened by ``reset_batch`` (one
    observation per episode, same order) with ONE batched ``generate``.
    """

    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        adapter: str | None = None,
        max_new_tokens: int = 256,
        temperature: float = 0.7,
        top_p: float = 0.95,
        do_sample: bool = True,
        seed: int = 0,
        device: str | None = None,
        dtype: str = "auto",
        images: str | bool = "auto",
        local_files_only: bool = False,
        constrained: bool = False,
    ):
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be positive, got {max_new_tokens!r}")
        if do_sample and not temperature > 0:
            raise ValueError(f"temperature must be > 0 when sampling, got {temperature!r}")
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
        self.model, self.tokenizer, self.processor = load_policy(
            model, adapter, device=device, dtype=dtype, images=images, local_files_only=local_files_only
        )
        self.model_name = model
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.do_sample = bool(do_sample)
        self.seed = int(seed)
        self.eos_ids = eos_token_ids(self.model, self.tokenizer)
        self.context_tokens = context_length(self.model)
        self._slots: list[dict[str, Any]] = []
        self.generated_tokens = 0  # running totals, for throughput figures
        self.generate_seconds = 0.0
        self.constrained = bool(constrained)
        self._constraint: Any = None

    # ------------------------------------------------------------------ episodes
    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.reset_batch([observation], [info], seeds=[seed])

    def reset_batch(
        self,
        observations: list[dict[str, Any]],
        infos: list[dict[str, Any]],
        *,
        seeds: list[int | None] | None = None,
    ) -> None:
        """Open one episode per (observation, info); ``act_batch`` then continues them in order."""
        seeds = seeds if seeds is not None else [None] * len(infos)
        if not len(observations) == len(infos) == len(seeds):
            raise ValueError(
                f"reset_batch needs equal lengths, got {len(observations)} observations, "
                f"{len(infos)} infos, {len(seeds)} seeds"
            )
        self._slots = []
        for info, seed in zip(infos, seeds, strict=True):
            store = info.get("store")
            if store is None:
                raise ValueError(f"info must carry 'store', got keys {sorted(info)!r}")
            self._slots.append(
                {"store": store, "ablation": check_ablation(info.get("ablation")),
                 "seed": self.seed if seed is None else int(seed), "turn": 0, "conv": None,
                 "messages": None, "images": [], "seen": "", "shown": {}, "state": None}
            )

    def act(self, observation: dict[str, Any]) -> str:
        (text,) = self.act_batch([observation])
        if isinstance(text, EpisodeError):
            raise text
        return text

    def check_first_prompt(self, observation: dict[str, Any]) -> None:
        """Raise ContextLengthError when the first prompt of the episode just reset leaves the
        model no room to answer (the rollout calls this before any episode runs)."""
        if self.context_tokens is None or self.processor is not None or not self._slots:
            return
        slot = self._slots[0]
        tokens = len(Conversation(self.tokenizer, slot["store"], observation, ablation=slot["ablation"]).ids)
        if tokens >= self.context_tokens:
            raise ContextLengthError(
                f"the first prompt holds {tokens} tokens, the model's context is {self.context_tokens}: "
                "use the compact observation (--env-kwargs '{\"catalog_view\": \"retrieved\"}') or a "
                "longer-context model"
            )

    def act_batch(self, observations: list[dict[str, Any]], *,
                  episodes: list[int] | None = None) -> list[str | EpisodeError]:
        """One turn for several open episodes with ONE ``generate``.

        ``episodes`` lists which episodes (indices into ``reset_batch``'s order) the
        observations continue; default: all open episodes, in order. Finished episodes
        are simply left out. An episode whose conversation has filled the model's context
        gets a ``ContextLengthError`` in place of its text; the others are answered.
        """
        if not self._slots:
            raise RuntimeError("call reset() or reset_batch() before act()")
        if episodes is None:
            if len(observations) != len(self._slots):
                raise ValueError(
                    f"act_batch got {len(observations)} observations for {len(self._slots)} open episodes"
                )
            episodes = list(range(len(self._slots)))
        if len(episodes) != len(observations) or len(set(episodes)) != len(episodes):
            raise ValueError(f"episodes {episodes!r} must name one distinct episode per observation")
        if any(not 0 <= i < len(self._slots) for i in episodes):
            raise ValueError(f"episodes {episodes!r} out of range for {len(self._slots)} open episodes")
        from transformers import set_seed

        slots = [self._slots[i] for i in episodes]
        set_seed(slots[0]["seed"] * 1009 + slots[0]["turn"])
        t0 = time.perf_counter()
        if self.processor is not None:
            texts = self._act_vision(slots, observations)
        else:
            texts = self._act_text(slots, observations)
        self.generate_seconds += time.perf_counter() - t0
        for slot in slots:
            slot["turn"] += 1
        return texts

    def _schema_processors(self, slots: list[dict], observations: list[dict[str, Any]]) -> list[Any]:
        """With ``constrained``: one logits processor holding each episode to the assistant schema."""
        if not self.constrained:
            return []
        from agents.chat_agent import assistant_schema
        from situ_gym.llm.structured import GrammarConstraint

        if self._constraint is None:
            tokenizer = self.processor.tokenizer if self.processor is not None else self.tokenizer
            vocab = self.model.get_output_embeddings().weight.shape[0]
            self._constraint = GrammarConstraint(tokenizer, vocab_size=vocab, eos_ids=sorted(self.eos_ids))
        schemas = [assistant_schema(obs, slot["store"]) for slot, obs in zip(slots, observations, strict=True)]
        return [self._constraint.logits_processor(schemas)]

    # ------------------------------------------------------------------ text models
    def _act_text(self, slots: list[dict], observations: list[dict[str, Any]]) -> list[str]:
        for slot, obs in zip(slots, observations, strict=True):
            if slot["conv"] is None:
                slot["conv"] = Conversation(self.tokenizer, slot["store"], obs, ablation=slot["ablation"])
            else:
                slot["conv"].add_observation(obs)
        # Never generate past the model's context: positions beyond it were never trained.
        # An episode with no room left ends alone (its ContextLengthError is its "text").
        budgets = [self.max_new_tokens] * len(slots)
        if self.context_tokens is not None:
            budgets = [min(self.max_new_tokens, self.context_tokens - len(slot["conv"].ids)) for slot in slots]
        texts: list[str | EpisodeError] = [
            ContextLengthError(f"the conversation holds {len(slot['conv'].ids)} tokens, the model's context is "
                               f"{self.context_tokens}: use the compact observation (env keyword "
                               "catalog_view='retrieved') or a longer-context model")
            if budget < 1 else ""
            for slot, budget in zip(slots, budgets, strict=True)
        ]
        rows = [k for k, budget in enumerate(budgets) if budget >= 1]
        if not rows:
            return texts
        outputs = generate_batch(
            self.model,
            [slots[k]["conv"].ids for k in rows],
            pad_id=self.tokenizer.pad_token_id,
            eos_ids=self.eos_ids,
            max_new_tokens=max(budgets[k] for k in rows),
            do_sample=self.do_sample,
            temperature=self.temperature,
            top_p=self.top_p,
            logits_processor=self._schema_processors([slots[k] for k in rows], [observations[k] for k in rows]),
        )
        for k, ids in zip(rows, outputs, strict=True):
            ids = list(ids)[: budgets[k]]
            slots[k]["conv"].add_model_tokens(ids, eos_ids=self.eos_ids)
            self.generated_tokens += len(ids)
            texts[k] = self.tokenizer.decode(ids, skip_special_tokens=True).strip()
        return texts

    # ------------------------------------------------------------------ vision models
    def _act_vision(self, slots: list[dict], observations: list[dict[str, Any]]) -> list[str]:
        """Image-text models: messages re-rendered by the processor each turn, one image per turn.

        No image under an ablation, nor when the observation has none (the paper's protocol
        drops ``som_rgb`` under an ablation; the default's black frame is no view either)."""
        import torch
        from PIL import Image
        from transformers import LogitsProcessorList

        from agents.prompting import render_messages

        prompts, images = [], []
        for slot, obs in zip(slots, observations, strict=True):
            ablation = slot["ablation"]
            view = obs.get("som_rgb") if ablation is None else None
            if slot["messages"] is None:
                slot["messages"] = render_messages(obs, slot["store"], image=view is not None, ablation=ablation)
            else:
                text = turn_text(obs, slot["seen"], slot["shown"], slot["state"], ablation=ablation)
                content = [{"type": "text", "text": text}]
                slot["messages"].append({"role": "user",
                                         "content": ([{"type": "image"}] if view is not None else []) + content})
            slot["seen"] = str(obs.get("history", ""))
            slot["state"] = state_text(obs, slot["shown"], ablation=ablation)
            slot["shown"].update(catalog_names(obs))
            if view is not None:
                slot["images"].append(Image.fromarray(view))
            prompts.append(render_prompt(self.processor, slot["messages"]))
            images.append(list(slot["images"]))
        self.processor.tokenizer.padding_side = "left"
        # A batch without any image is a text batch for the processor (images=None).
        batch = self.processor(text=prompts, images=images if any(images) else None, padding=True,
                               return_tensors="pt")
        batch = batch.to(next(self.model.parameters()).device)
        with torch.no_grad():
            out = self.model.generate(
                **batch,
                max_new_tokens=self.max_new_tokens,
                do_sample=self.do_sample,
                temperature=self.temperature if self.do_sample else None,
                top_p=self.top_p if self.do_sample else None,
                logits_processor=LogitsProcessorList(self._schema_processors(slots, observations)),
                **({"eos_token_id": sorted(self.eos_ids)} if self.constrained else {}),
            )
        new = out[:, batch["input_ids"].shape[1] :]
        texts = [t.strip() for t in self.processor.batch_decode(new, skip_special_tokens=True)]
        for slot, text in zip(slots, texts, strict=True):
            self.generated_tokens += len(self.processor.tokenizer(text, add_special_tokens=False)["input_ids"])
            slot["messages"].append({"role": "assistant", "content": text})
        return texts
