"""Training configuration on TRL's own dataclasses: ``TrlParser((SituRec args, SFTConfig | GSPOConfig, ModelConfig))``.

Every TRL, Trainer and PEFT option comes from TRL's classes (``SFTConfig``, ``GRPOConfig``,
``ModelConfig``); only the environment, reward and teacher-data fields are ours. YAML files
(``train/configs/*.yaml``) set any of them; ``--field value`` overrides them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig, ModelConfig, SFTConfig, TrlParser

from situ_gym.env import ABLATIONS
from situ_gym.protocol import check_protocol

__all__ = ["INTERFACES", "STAGES", "VARIANT_NAMES", "GSPOConfig", "SituRecArguments", "TeacherDataArguments",
           "load_model_and_tokenizer", "parse_args", "parse_or_exit"]

logger = logging.getLogger(__name__)

# The RecRM variants (recrm.composite.VARIANTS): the ablation ladder R1..R5 and the paper's formula.
VARIANT_NAMES = ("outcome", "+instruction", "+relevance", "+behavior", "full", "paper")
INTERFACES = ("rollout_func", "environment_factory")


@dataclass
class SituRecArguments:
    """The environment (stores, task split, episode shape) and the RecRM reward GSPO trains on."""

    stores: list[str] = field(
        default_factory=lambda: ["supermarket"],
        metadata={"help": "Stores to train on: registered store ids (supermarket, home_furnishings) or "
                          "store folders (situ_gym.stores)."},
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
        metadata={"help": "Env catalog view: 'full', 'retrieved' (compact, for small contexts) or 'tools' (no catalog "
                          "listed: the catalog tools of situ_gym.assistant_tools, with interface: environment_factory); "
                          "must match evaluation."},
    )
    catalog_k: int = field(default=5, metadata={"help": "Entries the 'retrieved' catalog view lists per observation."})
    env_protocol: str = field(
        default="default",
        metadata={"help": "Env protocol: 'default' or 'paper' (situ_gym.protocol; pair it with reward_variant: paper "
                          "for RecRM-Bench's formula); must match evaluation."},
    )
    env_ablation: str | None = field(
        default=None,
        metadata={"help": "App. D.4 input ablation: no_ego_view or no_ego_view_no_caption (the prompt follows it)."},
    )
    env_text_only: bool = field(
        default=False,
        metadata={"help": "Env step without colour image, Set-of-Mark drawing or minimap (SituRecEnv(text_only=True)): "
                          "the same episodes, faster, for a policy that reads no pixels."},
    )
    episodes_per_task: int = field(
        default=4, metadata={"help": "GSPO dataset rows per task (env seeds seed..seed+N-1)."}
    )
    max_new_tokens: int = field(default=256, metadata={"help": "Tokens the model may write per turn."})
    reward_variant: str = field(
        default="full",
        metadata={"help": "RecRM ladder: outcome (R1), +instruction (R2), +relevance (R3), +behavior (R4), full (R5); "
                          "or paper (RecRM-Bench 4.5 as written: not normalised, no dialogue credit)."},
    )
    recrm_alpha: float = field(default=1.0, metadata={"help": "RecRM alpha (relevance weight)."})
    recrm_beta: float = field(default=0.5, metadata={"help": "RecRM beta (ranking + behaviour weight)."})
    recrm_tau: float = field(default=0.5, metadata={"help": "RecRM relevance threshold opening the behaviour terms."})
    recrm_scorers: dict[str, str] = field(
        default_factory=dict,
        metadata={"help": "RecRM scorer per dimension: 'rule' (default), 'model:PATH' or 'llm:SPEC' (a zero-shot chat "
                          "judge), e.g. {relevance: model:runs/rm/relevance}."},
    )
    outcome_bonus: float = field(
        default=1.0, metadata={"help": "Added to the trajectory reward when the episode ends with a cart addition."}
    )
    gate_floor: float = field(
        default=0.0,
        metadata={"help": "Soft gate at step 0: gates count as max(gate, floor); the floor anneals linearly to 0."},
    )
    gate_warmup_steps: int = field(default=0, metadata={"help": "Steps over which gate_floor anneals to 0."})
    reward_parts: bool = field(
        default=False,
        metadata={"help": "Hand TRL one reward function per RecRM part (train.rewards.PARTS; they sum to the "
                          "trajectory reward) so GRPOConfig's multi_objective_aggregation and reward_weights apply; "
                          "with interface environment_factory they read each rollout's environment."},
    )
    interface: str = field(
        default="rollout_func",
        metadata={"help": "How GSPO plays episodes: rollout_func (lock-step, any chat model) or environment_factory "
                          "(TRL's tool-calling environment, train/environment.py; needs a tool-calling chat template).",
                  "choices": INTERFACES},
    )

    def __post_init__(self):
        from situ_gym.stores import StoreError, store_spec

        if not self.stores:
            raise ValueError("stores must name at least one store, got none")
        try:
            self.stores = [store_spec(s).id for s in self.stores]  # a folder registers its store
        except StoreError as e:
            raise ValueError(f"stores: {e}") from None
        if not 0.0 < self.eval_profile_fraction < 1.0:
            raise ValueError(f"eval_profile_fraction must be in (0, 1), got {self.eval_profile_fraction!r}")
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be positive, got {self.max_turns!r}")
        if len(self.env_image_size) != 2 or min(self.env_image_size) < 16:
            raise ValueError(f"env_image_size must be [width, height] >= 16, got {self.env_image_size!r}")
        tools = self.catalog_view == "tools" and self.interface == "environment_factory"  # only TRL's tools call them
        if not (self.catalog_view in ("full", "retrieved") or tools) or self.catalog_k < 1:
            raise ValueError(
                f"catalog_view must be 'full' or 'retrieved' (or 'tools' with interface: environment_factory) and "
                f"catalog_k positive, got {self.catalog_view!r} (interface {self.interface!r}), {self.catalog_k!r}"
            )
        check_protocol(self.env_protocol)
        if self.env_ablation not in ABLATIONS:
            raise ValueError(f"env_ablation must be one of {ABLATIONS}, got {self.env_ablation!r}")
        if self.episodes_per_task < 1:
            raise ValueError(f"episodes_per_task must be positive, got {self.episodes_per_task!r}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be positive, got {self.max_new_tokens!r}")
        if self.reward_variant not in VARIANT_NAMES:
            raise ValueError(f"reward_variant must be one of {VARIANT_NAMES}, got {self.reward_variant!r}")
        bad = {k: v for k, v in self.recrm_scorers.items()
               if v != "rule" and not any(str(v).startswith(p) and len(str(v)) > len(p) for p in ("model:", "llm:"))}
        if bad:
            raise ValueError(f"recrm_scorers values must be 'rule', 'model:PATH' or 'llm:SPEC' (a chat backend), got {bad}")
        if not 0.0 <= self.gate_floor <= 1.0:
            raise ValueError(f"gate_floor must be in [0, 1], got {self.gate_floor!r}")
        if self.gate_floor > 0 and self.gate_warmup_steps < 1:
            raise ValueError(f"gate_floor {self.gate_floor} needs gate_warmup_steps >= 1, got {self.gate_warmup_steps}")
        if self.interface not in INTERFACES:
            raise ValueError(f"interface must be one of {INTERFACES}, got {self.interface!r}")
        if self.interface == "environment_factory" and self.gate_floor > 0:
            raise ValueError(
                f"gate_floor {self.gate_floor} needs interface rollout_func: TRL's environments do not see the "
                "training step the soft gate anneals with"
            )

    def recrm_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``recrm.RecRMReward`` for this reward."""
        return {"variant": self.reward_variant, "alpha": self.recrm_alpha, "beta": self.recrm_beta,
                "tau": self.recrm_tau, "scorers": self.recrm_scorers or None}


@dataclass
class TeacherDataArguments(SituRecArguments):
    """SFT warm start data: a teacher's trajectories (replayed) or teacher episodes run now."""

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

    def __post_init__(self):
        super().__post_init__()
        if not self.trajectories and self.teacher is None:
            raise ValueError("give trajectories (files) or teacher (an agent name), got neither")
        if self.teacher_episodes_per_task < 1:
            raise ValueError(f"teacher_episodes_per_task must be positive, got {self.teacher_episodes_per_task!r}")


@dataclass
class GSPOConfig(GRPOConfig):
    """TRL's ``GRPOConfig`` (no new fields) with the cross-field checks GSPO on SituRec episodes needs."""

    def __post_init__(self):
        super().__post_init__()
        epsilon_high = self.epsilon if self.epsilon_high is None else self.epsilon_high
        if not (self.epsilon > 0 and epsilon_high > 0):
            raise ValueError(f"epsilon and epsilon_high must be positive, got {self.epsilon}, {self.epsilon_high}")
        if self.importance_sampling_level == "sequence" and self.loss_type != "grpo":
            raise ValueError(
                f"importance_sampling_level 'sequence' (GSPO) needs loss_type 'grpo', got {self.loss_type!r} "
                "(TRL only warns about the other losses under sequence-level sampling)"
            )
        # TRL recomputes old log-probs (and so the clip can act) only when a generation batch
        # spans more optimizer steps than one accumulation window.
        if self.steps_per_generation * self.num_iterations <= self.gradient_accumulation_steps:
            raise ValueError(
                f"steps_per_generation {self.steps_per_generation} x num_iterations {self.num_iterations} must exceed "
                f"gradient_accumulation_steps {self.gradient_accumulation_steps}: otherwise every update is on-policy "
                "and the GSPO clip never acts"
            )
        if self.remove_unused_columns:
            raise ValueError("remove_unused_columns must be false: rows carry store / task_id / seed for the rollout")


# stage -> (our dataclass, TRL's training config); ModelConfig completes both.
STAGES: dict[str, tuple[type, type]] = {"sft": (TeacherDataArguments, SFTConfig), "gspo": (SituRecArguments, GSPOConfig)}


def _check_stage(stage: str, script_args: Any, training_args: Any, model_args: ModelConfig) -> None:
    """Checks that need two of the three dataclasses."""
    if not model_args.model_name_or_path:
        raise ValueError("model_name_or_path is required (a local checkpoint directory or a hub id)")
    if stage == "sft":
        if training_args.completion_only_loss is not True:
            raise ValueError(
                f"completion_only_loss must be true, got {training_args.completion_only_loss!r}: "
                "only the teacher's turns carry the loss (completion_mask), never the catalog or the shopper"
            )
        if training_args.max_length is None or training_args.max_length < 64:
            raise ValueError(f"max_length must be at least 64, got {training_args.max_length!r}")
    elif script_args.max_new_tokens > training_args.max_completion_length:
        raise ValueError(
            f"max_new_tokens {script_args.max_new_tokens} exceeds max_completion_length "
            f"{training_args.max_completion_length}"
        )


def parse_args(stage: str, args: Sequence[str] | None = None) -> tuple[Any, Any, ModelConfig]:
    """``--config FILE.yaml`` plus ``--field value`` overrides -> (script args, training args, model args)."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {sorted(STAGES)}, got {stage!r}")
    script_cls, training_cls = STAGES[stage]
    parser = TrlParser((script_cls, training_cls, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config(None if args is None else list(args))
    _check_stage(stage, script_args, training_args, model_args)
    if stage == "gspo":
        logger.info(
            "GSPO: G=%d, generation batch %d (= %d groups), %d micro-steps per generation, %d accumulation",
            training_args.num_generations, training_args.generation_batch_size,
            training_args.generation_batch_size // training_args.num_generations,
            training_args.steps_per_generation, training_args.gradient_accumulation_steps,
        )
    return script_args, training_args, model_args


def parse_or_exit(stage: str, args: Sequence[str] | None = None) -> tuple[Any, Any, ModelConfig]:
    """``parse_args`` for command lines: a bad setting exits with one line, not a traceback."""
    try:
        return parse_args(stage, args)
    except (ValueError, OSError) as err:
        sys.exit(f"error: {err}")


def load_model_and_tokenizer(training_args: Any, model_args: ModelConfig) -> tuple[Any, Any]:
    """(causal LM, tokenizer with a pad token) of ``model_args``, loaded as TRL's own scripts do.

    A GGUF spec (``gguf:smollm2``, ``gguf:PATH``) loads through ``situ_gym.llm.gguf.load_model``:
    dequantised weights without the GGUF quantizer, which Trainer refuses to fine-tune.
    """
    from transformers import AutoModelForCausalLM

    from agents.hf_policy import load_tokenizer
    from situ_gym.llm.gguf import load_model, parse_gguf_spec

    tokenizer = load_tokenizer(model_args.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    kwargs = {"revision": model_args.model_revision, "trust_remote_code": training_args.trust_remote_code,
              "attn_implementation": model_args.attn_implementation, "dtype": model_args.dtype}
    kwargs.update(training_args.model_init_kwargs or {})  # GRPOConfig/SFTConfig.model_init_kwargs win
    if parse_gguf_spec(model_args.model_name_or_path) is not None:
        dtype = kwargs["dtype"] if kwargs.get("dtype") not in (None, "auto") else None
        return load_model(model_args.model_name_or_path, dtype=dtype), tokenizer
    return AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **kwargs), tokenizer
