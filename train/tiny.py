"""A tiny random-weight Qwen2 policy with an in-process byte-level BPE tokenizer (tests, --tiny).

Nothing is downloaded: the tokenizer is trained with ``tokenizers`` on our own prompt text,
wrapped in ``PreTrainedTokenizerFast`` with a ChatML template, and the model is a
``Qwen2ForCausalLM`` built from a config with random weights.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

__all__ = [
    "CHATML_TEMPLATE",
    "SPECIAL_TOKENS",
    "corpus",
    "store_texts",
    "build_tiny_tokenizer",
    "build_tiny_model",
]

logger = logging.getLogger(__name__)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# ChatML, as Qwen2 renders it (without tool support).
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def corpus(extra: list[str] | None = None) -> list[str]:
    """Training text for the tokenizer: our system prompts, example outputs and ``extra``."""
    import json

    from agents.prompting import STORES, system_prompt
    from situ_gym.stores import store_spec

    lines: list[str] = []
    for store in STORES:
        lines.extend(system_prompt(store, "Catalog (id | name | category | price | location):").splitlines())
        lines.append(json.dumps(store_spec(store).prompt.example))
    lines.extend(extra or [])
    return [line for line in lines if line.strip()]


def store_texts(
    stores: tuple[str, ...] = ("supermarket",),
    *,
    image_size: tuple[int, int] = (160, 120),
    teacher_tasks: int = 0,
    teacher_turns: int = 3,
) -> list[str]:
    """Lines of the stores' observation text (catalog, navigation targets, captions).

    With ``teacher_tasks > 0`` the heuristic assistant plays the first training tasks
    (``train.tasks.split_tasks``, seed 0) and its outputs are added WHOLE: with
    ``whole_lines`` each becomes a single token, so a few SFT steps teach a tiny model to
    emit valid assistant JSON that can pass RecRM's gates (a random model never does, and
    GSPO then sees identical rewards in every group and no gradient).
    """
    import gymnasium as gym

    import situ_gym  # noqa: F401
    from train.tasks import ENV_OF_STORE, split_tasks

    lines: list[str] = []
    for store in stores:
        env = gym.make(ENV_OF_STORE[store], image_size=image_size, max_turns=teacher_turns)
        obs, _ = env.reset(seed=0)
        lines.extend(obs["catalog"].splitlines() + obs["visible"].splitlines())
        if teacher_tasks > 0:
            from agents.heuristic import HeuristicAssistant
            from eval.runner import EpisodeSpec, play_batch

            def on_step(_i: int, text: str, obs: dict[str, Any], _info: dict[str, Any], _done: bool) -> None:
                lines.append(text)
                lines.extend(obs["visible"].splitlines())

            teacher = HeuristicAssistant()
            for task_id in split_tasks(store, 0.2, 0)[0][:teacher_tasks]:
                for seed in (0, 1):
                    (result,) = play_batch([env], teacher, [EpisodeSpec(task_id, seed)], on_step=on_step)
                    if result.error is not None:
                        raise RuntimeError(f"teacher episode {task_id} crashed: {result.error.strip().splitlines()[-1]}")
        env.close()
    return lines


def build_tiny_tokenizer(texts: list[str], vocab_size: int = 1024, *, whole_lines: bool = False):
    """A byte-level BPE ``PreTrainedTokenizerFast`` trained on ``texts``, with a ChatML template.

    ``whole_lines=True`` lets merges cross spaces, so lines seen in training (catalog rows)
    become one or two tokens: the ~50k-character catalog shrinks to ~500 tokens, which keeps
    CPU test prompts short. Still lossless byte-level BPE: any text round-trips.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if vocab_size < 300:
        raise ValueError(f"vocab_size must be at least 300 (256 bytes + specials), got {vocab_size!r}")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=not whole_lines)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.padding_side = "left"
    return fast


def build_tiny_model(out_dir: str | Path, texts: list[str] | None = None, *, seed: int = 0, vocab_size: int = 1024,
                     hidden_size: int = 64, num_layers: int = 2, max_positions: int = 32768,
                     whole_lines: bool = False) -> Path:
    """Save a random-weight Qwen2 (hidden 64, 2 layers by default) and its tokenizer to ``out_dir``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tiny_tokenizer(corpus(texts), vocab_size=vocab_size, whole_lines=whole_lines)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        initializer_range=0.2,  # larger than the default 0.02 so greedy outputs vary
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    logger.info("tiny model: %d parameters, vocab %d -> %s", model.num_parameters(), len(tokenizer), out)
    return out
