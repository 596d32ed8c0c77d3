"""The one configuration of reward-model training (a dataclass parsed by HfArgumentParser)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from recrm import dimensions as dims

__all__ = ["RMTrainConfig", "TASKS", "JUDGE_FORMATS", "HEADS"]

TASKS = dims.TRAINED  # the dimensions with a learned model (recrm.dimensions)
JUDGE_FORMATS = ("paper", "short")
HEADS = ("classifier", "generative", "select")


def _synthesised_negative(record) -> bool:
    """A record whose negative label comes from a templated edit (every instruction violation
    and consistency hallucination in these databases is one)."""
    return getattr(record, "violation", None) is not None or getattr(record, "hallucination", "none") != "none"


@dataclass
class RMTrainConfig:
    """What to train, on which data, from which base model, for how long."""

    task: str = field(metadata={"help": f"reward dimension to train: one of {TASKS}"})
    data: str = field(metadata={"help": "directory of RecRM <kind>.jsonl files (python -m recrm.data synthesize)"})
    model: str = field(metadata={"help": "base model: local folder, hub id, 'gguf:smollm2' or 'gguf:PATH'"})
    out: str = field(metadata={"help": "folder the trained scorer is saved to (usable as model:OUT)"})
    epochs: float = field(default=1.0, metadata={"help": "passes over the training records"})
    max_steps: int = field(default=-1, metadata={"help": "stop after this many optimizer steps (-1: epochs decide)"})
    learning_rate: float = field(default=5e-5, metadata={"help": "AdamW learning rate"})
    batch_size: int = field(default=8, metadata={"help": "records per device step (ranking: lists)"})
    grad_accum: int = field(default=1, metadata={"help": "gradient accumulation steps"})
    max_length: int = field(default=512, metadata={"help": "token limit of one training sequence"})
    limit: int = field(default=0, metadata={"help": "use at most this many training records (0: all)"})
    listwise_lambda: float = field(default=1.0, metadata={"help": "ranking: weight of the listwise CE beside BCE"})
    lora: bool = field(default=False, metadata={"help": "train LoRA adapters (peft) instead of all weights; merged on save"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    judge_format: str = field(default="paper", metadata={
        "help": "judges' answer: 'paper' (RecRM-Bench App. A JSON: overall and six dimension scores, hallucination "
                "lists, relevance reason and score) or 'short' ('Reason: ...' then 'Score: N')"})
    head: str = field(default="classifier", metadata={
        "help": "ranking / behavior: 'classifier' (cross-encoder or list classifier head), 'generative' (a causal LM "
                "answering yes/no or 1/0, scored by P(yes)), or 'select' (train both, keep the better on held-out "
                "records: HR mean for ranking, AUC for behavior)"})
    synthesised_negatives: bool = field(default=True, metadata={
        "help": "train on the synthesised negatives (instruction violations, injected hallucinations); false: the "
                "paper's augmentation ablation, positives and natural records only"})
    seed: int = field(default=0, metadata={"help": "seed of data order and initialisation"})
    bf16: bool = field(default=False, metadata={"help": "bfloat16 mixed precision (GPU)"})
    logging_steps: int = field(default=10, metadata={"help": "log the loss every N steps"})

    def train_records(self) -> list:
        """The ``train`` split of ``task``'s records in ``data``, shuffled under ``seed``, at most ``limit``
        (without the synthesised negatives when ``synthesised_negatives`` is false)."""
        import numpy as np

        from recrm.data.io import load_split

        records = load_split(self.data, self.task, "train")
        if not self.synthesised_negatives:
            records = [r for r in records if not _synthesised_negative(r)]
        if not records:
            raise ValueError(f"no training records for {self.task!r} in {self.data}")
        order = np.random.default_rng(self.seed).permutation(len(records))
        picked = [records[int(i)] for i in order]
        return picked[: self.limit] if self.limit else picked

    def trainer_kwargs(self) -> dict:
        """The Trainer arguments every reward-model trainer shares (TrainingArguments/SFTConfig)."""
        return dict(
            output_dir=str(Path(self.out) / "checkpoints"),
            num_train_epochs=self.epochs,
            max_steps=self.max_steps,
            learning_rate=self.learning_rate,
            per_device_train_batch_size=self.batch_size,
            gradient_accumulation_steps=self.grad_accum,
            logging_steps=self.logging_steps,
            save_strategy="no",
            report_to=[],
            seed=self.seed,
            bf16=self.bf16,
        )

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {list(TASKS)}, got {self.task!r}")
        if self.epochs <= 0 and self.max_steps <= 0:
            raise ValueError(f"need epochs > 0 or max_steps > 0, got epochs={self.epochs}, max_steps={self.max_steps}")
        if self.batch_size < 1 or self.grad_accum < 1:
            raise ValueError(f"batch_size and grad_accum must be >= 1, got {self.batch_size}, {self.grad_accum}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if self.listwise_lambda < 0:
            raise ValueError(f"listwise_lambda must be >= 0, got {self.listwise_lambda}")
        if self.limit < 0:
            raise ValueError(f"limit must be >= 0, got {self.limit}")
        if self.judge_format not in JUDGE_FORMATS:
            raise ValueError(f"judge_format must be one of {list(JUDGE_FORMATS)}, got {self.judge_format!r}")
        if self.head not in HEADS:
            raise ValueError(f"head must be one of {list(HEADS)}, got {self.head!r}")
