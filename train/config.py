"""Script configs for SFT warm start and GSPO: one dataclass each, read by ``trl.TrlParser``.

YAML files (``train/configs/*.yaml``) set the fields; ``--field value`` overrides them.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["VARIANT_NAMES", "SFTScriptConfig", "GSPOScriptConfig", "gate_floor_at", "parse_config"]

logger = logging.getLogger(__name__)

# The RecRM ablation ladder (recrm.composite.VARIANTS): R1..R5.
VARIANT_NAMES = ("outcome", "+instruction", "+relevance", "+behavior", "full")
_STORES = ("supermarket", "home_furnishings")


def _check_common(cfg: Any) -> None:
    unknown = [s for s in cfg.stores if s not in _STORES]
    if unknown or not cfg.stores:
        raise ValueError(f"stores must be a non-empty subset of {_STORES}, got {cfg.stores!r}")
    if not 0.0 < cfg.eval_profile_fraction < 1.0:
        raise ValueError(f"eval_profile_fraction must be in (0, 1), got {cfg.eval_profile_fraction!r}")
    if cfg.lora_r < 1:
        raise ValueError(f"lora_r must be positive, got {cfg.lora_r!r}")
    if cfg.max_turns < 1:
        raise ValueError(f"max_turns must be positive, got {cfg.max_turns!r}")
    if len(cfg.env_image_size) != 2 or min(cfg.env_image_size) < 16:
        raise ValueError(f"env_image_size must be [width, height] >= 16, got {cfg.env_image_size!r}")
    if cfg.catalog_view not in ("full", "retrieved") or cfg.catalog_k < 1:
        raise ValueError(
            f"catalog_view must be 'full' or 'retrieved' and catalog_k positive, got {cfg.catalog_view!r}, {cfg.catalog_k!r}"
        )


@dataclass
class _Common:
    model_name_or_path: str = field(
        default="", metadata={"help": "Local checkpoint directory (full, merged or PEFT adapter) or hub id."}
    )
    output_dir: str = field(default="runs/train", metadata={"help": "Checkpoints and logs go here."})
    seed: int = field(default=0, metadata={"help": "Seeds torch/numpy/python, the task split and env seeds."})
    stores: list[str] = field(
        default_factory=lambda: ["supermarket"],
        metadata={"help": "Stores to train on: supermarket and/or home_furnishings."},
    )
    eval_profile_fraction: float = field(
        default=0.2,
        metadata={"help": "Share of shopper PROFILES held out for evaluation; their tasks never train."},
    )
    split_seed: int = field(default=0, metadata={"help": "Seed of the profile permutation that makes the split."})
    max_tasks: int | None = field(
        default=None, metadata={"help": "Use only the first N training tasks per store (smoke runs)."}
    )
    max_turns: int = field(default=20, metadata={"help": "Turn limit of an episode (the paper's 20)."})
    env_image_size: list[int] = field(
        default_factory=lambda: [640, 480],
        metadata={"help": "Env view [width, height]; must match evaluation (captions depend on it)."},
    )
    catalog_view: str = field(
        default="full",
        metadata={"help": "Env catalog view: 'full' or 'retrieved' (compact, for small contexts); must match evaluation."},
    )
    catalog_k: int = field(default=5, metadata={"help": "Entries the 'retrieved' catalog view lists per observation."})
    use_peft: bool = field(default=False, metadata={"help": "Train a LoRA adapter instead of all weights."})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha."})
    lora_dropout: float = field(default=0.0, metadata={"help": "LoRA dropout."})
    lora_target_modules: list[str] = field(
        default_factory=lambda: ["all-linear"], metadata={"help": "Modules LoRA adapts ('all-linear' = every linear)."}
    )
    learning_rate: float = field(default=1e-6, metadata={"help": "AdamW learning rate."})
    per_device_train_batch_size: int = field(default=8, metadata={"help": "Sequences per device per micro-batch."})
    gradient_accumulation_steps: int = field(default=1, metadata={"help": "Micro-batches per optimizer step."})
    max_steps: int = field(default=100, metadata={"help": "Optimizer steps."})
    logging_steps: int = field(default=1, metadata={"help": "Log every N steps."})
    save_steps: int = field(default=50, metadata={"help": "Checkpoint every N steps."})
    save_total_limit: int | None = field(default=3, metadata={"help": "Keep at most N checkpoints."})
    bf16: bool = field(default=False, metadata={"help": "bf16 mixed precision (GPU)."})
    gradient_checkpointing: bool = field(default=False, metadata={"help": "Trade compute for memory."})
    report_to: list[str] = field(default_factory=lambda: ["none"], metadata={"help": "TrainingArguments.report_to."})
    run_name: str | None = field(default=None, metadata={"help": "Run name; default {env}__{exp}__{seed}__{time}."})

    def peft_config(self):
        if not self.use_peft:
            return None
        from peft import LoraConfig

        targets = self.lora_target_modules
        return LoraConfig(
            r=self.lora_r,
            lora_alpha=self.lora_alpha,
            lora_dropout=self.lora_dropout,
            target_modules=targets[0] if targets == ["all-linear"] else list(targets),
            task_type="CAUSAL_LM",
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SFTScriptConfig(_Common):
    """SFT warm start on a teacher's trajectories (replayed) or on teacher episodes run now."""

    trajectories: list[str] = field(
        default_factory=list,
        metadata={"help": "runs/NAME/trajectories.jsonl files of a teacher (eval.rollout output)."},
    )
    teacher: str | None = field(
        default=None,
        metadata={"help": "Run this agent (agents.registry name, e.g. heuristic) now instead of reading files."},
    )
    teacher_episodes_per_task: int = field(default=1, metadata={"help": "Teacher episodes per training task."})
    success_only: bool = field(default=True, metadata={"help": "Keep only episodes that ended with a purchase."})
    min_mean_reward: float | None = field(
        default=None,
        metadata={"help": "Also keep failed episodes whose mean recrm/total per turn reaches this (needs rewards)."},
    )
    max_length: int = field(default=16384, metadata={"help": "Tokens per training sequence (one episode)."})
    num_train_epochs: float = field(default=1.0, metadata={"help": "Epochs (max_steps wins when > 0)."})

    def __post_init__(self):
        _check_common(self)
        if not self.trajectories and self.teacher is None:
            raise ValueError("give trajectories (files) or teacher (an agent name), got neither")
        if self.teacher_episodes_per_task < 1:
            raise ValueError(f"teacher_episodes_per_task must be positive, got {self.teacher_episodes_per_task!r}")
        if self.max_length < 64:
            raise ValueError(f"max_length must be at least 64, got {self.max_length!r}")

    def to_sft_config(self):
        from trl import SFTConfig

        return SFTConfig(
            output_dir=self.output_dir,
            seed=self.seed,
            learning_rate=self.learning_rate,
            per_device_train_batch_size=self.per_device_train_batch_size,
            gradient_accumulation_steps=self.gradient_accumulation_steps,
            max_steps=self.max_steps,
            num_train_epochs=self.num_train_epochs,
            logging_steps=self.logging_steps,
            save_steps=self.save_steps,
            save_total_limit=self.save_total_limit,
            bf16=self.bf16,
            activation_checkpointing=self.gradient_checkpointing,
            report_to=self.report_to,
            run_name=self.run_name,
            max_length=self.max_length,
            completion_only_loss=True,  # loss on the model's own turns only (completion_mask)
            packing=False,
            dataset_kwargs={"skip_prepare_dataset": False},
        )


@dataclass
class GSPOScriptConfig(_Common):
    """GSPO (GRPOTrainer, sequence-level importance sampling) on multi-turn SituRec episodes."""

    num_generations: int = field(default=8, metadata={"help": "G: rollouts per (task, seed) group."})
    steps_per_generation: int = field(
        default=4,
        metadata={"help": "Optimizer micro-steps per generation cycle; > gradient_accumulation_steps so GSPO's clip acts."},
    )
    episodes_per_task: int = field(default=4, metadata={"help": "Dataset rows per task (env seeds seed..seed+N-1)."})
    max_new_tokens: int = field(default=256, metadata={"help": "Tokens the model may write per turn."})
    max_completion_length: int = field(
        default=4096, metadata={"help": "Cap on model + env tokens after the first prompt (truncated here)."}
    )
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature in rollouts."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling in rollouts."})
    epsilon: float = field(default=3e-4, metadata={"help": "GSPO lower clip (sequence ratio >= 1 - epsilon)."})
    epsilon_high: float = field(default=4e-4, metadata={"help": "GSPO upper clip (sequence ratio <= 1 + epsilon_high)."})
    kl_beta: float = field(default=0.0, metadata={"help": "KL coefficient (GRPOConfig.beta); 0 loads no reference model."})
    reward_variant: str = field(
        default="full",
        metadata={"help": "RecRM ladder: outcome (R1), +instruction (R2), +relevance (R3), +behavior (R4), full (R5)."},
    )
    recrm_alpha: float = field(default=1.0, metadata={"help": "RecRM alpha (relevance weight)."})
    recrm_beta: float = field(default=0.5, metadata={"help": "RecRM beta (ranking + behaviour weight)."})
    recrm_tau: float = field(default=0.5, metadata={"help": "RecRM relevance threshold opening the behaviour terms."})
    recrm_scorers: dict[str, str] = field(
        default_factory=dict,
        metadata={"help": "RecRM scorer per dimension, 'rule' (default) or 'model:PATH', e.g. {relevance: model:runs/rm/relevance}."},
    )
    outcome_bonus: float = field(
        default=1.0, metadata={"help": "Added to the trajectory reward when the episode ends with a cart addition."}
    )
    gate_floor: float = field(
        default=0.0,
        metadata={"help": "Soft gate at step 0: gates count as max(gate, floor); the floor anneals linearly to 0."},
    )
    gate_warmup_steps: int = field(default=0, metadata={"help": "Steps over which gate_floor anneals to 0."})
    use_vllm: bool = field(default=False, metadata={"help": "Generate with TRL's vLLM backend (passthrough)."})
    vllm_mode: str = field(default="colocate", metadata={"help": "vLLM mode: colocate or server."})
    log_completions: bool = field(default=False, metadata={"help": "Log sample completions."})
    world_size: int = field(
        default=1, metadata={"help": "Processes you launch with (only for the batch-size checks below)."}
    )

    def __post_init__(self):
        _check_common(self)
        if self.reward_variant not in VARIANT_NAMES:
            raise ValueError(f"reward_variant must be one of {VARIANT_NAMES}, got {self.reward_variant!r}")
        bad = {k: v for k, v in self.recrm_scorers.items() if v != "rule" and not str(v).startswith("model:")}
        if bad:
            raise ValueError(f"recrm_scorers values must be 'rule' or 'model:PATH', got {bad}")
        if self.num_generations < 2:
            raise ValueError(f"num_generations must be >= 2 for group advantages, got {self.num_generations}")
        generation_batch = self.per_device_train_batch_size * self.world_size * self.steps_per_generation
        if generation_batch % self.num_generations:
            raise ValueError(
                f"generation batch = per_device_train_batch_size {self.per_device_train_batch_size} x world_size "
                f"{self.world_size} x steps_per_generation {self.steps_per_generation} = {generation_batch} is not "
                f"divisible by num_generations {self.num_generations}"
            )
        if self.steps_per_generation <= self.gradient_accumulation_steps:
            raise ValueError(
                f"steps_per_generation {self.steps_per_generation} must exceed gradient_accumulation_steps "
                f"{self.gradient_accumulation_steps}: otherwise every update is on-policy and the GSPO clip never acts"
            )
        if self.max_new_tokens > self.max_completion_length:
            raise ValueError(
                f"max_new_tokens {self.max_new_tokens} exceeds max_completion_length {self.max_completion_length}"
            )
        if not 0.0 <= self.gate_floor <= 1.0:
            raise ValueError(f"gate_floor must be in [0, 1], got {self.gate_floor!r}")
        if self.gate_floor > 0 and self.gate_warmup_steps < 1:
            raise ValueError(f"gate_floor {self.gate_floor} needs gate_warmup_steps >= 1, got {self.gate_warmup_steps}")
        if not 0 < self.epsilon and 0 < self.epsilon_high:
            raise ValueError(f"epsilon and epsilon_high must be positive, got {self.epsilon}, {self.epsilon_high}")
        if self.episodes_per_task < 1:
            raise ValueError(f"episodes_per_task must be positive, got {self.episodes_per_task!r}")
        logger.info(
            "GSPO: G=%d, generation batch %d (= %d groups), %d micro-steps per generation, %d accumulation",
            self.num_generations, generation_batch, generation_batch // self.num_generations,
            self.steps_per_generation, self.gradient_accumulation_steps,
        )

    def to_grpo_config(self):
        from trl import GRPOConfig

        return GRPOConfig(
            output_dir=self.output_dir,
            seed=self.seed,
            learning_rate=self.learning_rate,
            per_device_train_batch_size=self.per_device_train_batch_size,
            gradient_accumulation_steps=self.gradient_accumulation_steps,
            steps_per_generation=self.steps_per_generation,
            num_generations=self.num_generations,
            max_completion_length=self.max_completion_length,
            temperature=self.temperature,
            top_p=self.top_p,
            max_steps=self.max_steps,
            logging_steps=self.logging_steps,
            save_steps=self.save_steps,
            save_total_limit=self.save_total_limit,
            bf16=self.bf16,
            activation_checkpointing=self.gradient_checkpointing,
            report_to=self.report_to,
            run_name=self.run_name,
            # GSPO (Zheng et al. 2025): sequence-level ratio, tiny clip range, no KL.
            importance_sampling_level="sequence",
            loss_type="grpo",
            epsilon=self.epsilon,
            epsilon_high=self.epsilon_high,
            beta=self.kl_beta,
            use_vllm=self.use_vllm,
            vllm_mode=self.vllm_mode,
            log_completions=self.log_completions,
            remove_unused_columns=False,  # rows carry task_id / seed / store for the rollout and reward
        )


def gate_floor_at(step: int, floor: float, warmup_steps: int) -> float:
    """Soft-gate floor at ``step``: ``floor`` at 0, linear to 0 at ``warmup_steps``.

    >>> [gate_floor_at(s, 0.5, 4) for s in (0, 2, 4, 9)]
    [0.5, 0.25, 0.0, 0.0]
    """
    if floor <= 0 or warmup_steps < 1:
        return 0.0
    return floor * max(0.0, 1.0 - step / warmup_steps)


def parse_config(cls: type, args: list[str] | None = None):
    """``--config FILE.yaml`` plus ``--field value`` overrides -> one ``cls`` instance."""
    from trl import TrlParser

    (cfg,) = TrlParser((cls,)).parse_args_and_config(args)
    return cfg
