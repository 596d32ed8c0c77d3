"""The human-evaluation protocol (SituRecBench App. C.2): sampled tasks, per-participant plans.

Five tasks are drawn from the store's 100-task bank with a fixed seed (42 in the paper).
Participant ``k`` (0-based, in joining order) gets ``tasks_per_participant`` consecutive
tasks of that sample, cyclically from task ``k``: the default, 2
(``PAPER_TASKS_PER_PARTICIPANT``), is the paper's adjacent pairs (participants 0..4 do
(t0, t1), (t1, t2), ..., (t4, t0): each task twice over five participants); 5 gives
everyone all five tasks. On
each task the participant meets every assistant, in an order shuffled per participant and
task, under letter labels ("Assistant A", ...) that hide which assistant it is.

>>> sample_tasks([f"t{i}" for i in range(100)], seed=42, count=5) == sample_tasks(
...     [f"t{i}" for i in range(100)], seed=42, count=5)
True
>>> [s.task_id for s in participant_plan(["a", "b", "c"], ["x", "y"], 1, 2, seed=0)][::2]
['b', 'c']
"""

from __future__ import annotations

import string
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["PAPER_SEED", "PAPER_TASK_COUNT", "PAPER_TASKS_PER_PARTICIPANT", "PlannedConversation", "sample_tasks",
           "participant_plan"]

PAPER_SEED = 42
PAPER_TASK_COUNT = 5
PAPER_TASKS_PER_PARTICIPANT = 2  # C.2: "Each participant completes the two assigned tasks in sequence"


@dataclass(frozen=True)
class PlannedConversation:
    """One conversation of a participant: which task, which assistant, shown as which letter."""

    task_id: str
    assistant: str  # the assistant's name (never shown to the participant)
    label: str  # "A", "B", ... as the participant sees it

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def sample_tasks(task_ids: list[str], *, seed: int = PAPER_SEED, count: int = PAPER_TASK_COUNT) -> list[str]:
    """``count`` distinct task ids drawn from the bank order with ``seed`` (the draw order is kept)."""
    if not 1 <= count <= len(task_ids):
        raise ValueError(f"count must be in 1..{len(task_ids)}, got {count!r}")
    picks = np.random.default_rng(seed).choice(len(task_ids), size=count, replace=False)
    return [task_ids[int(i)] for i in picks]


def _label(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else letters[i // len(letters) - 1] + letters[i % len(letters)]


def participant_plan(
    tasks: list[str], assistants: list[str], participant: int,
    tasks_per_participant: int = PAPER_TASKS_PER_PARTICIPANT, *, seed: int,
) -> list[PlannedConversation]:
    """The ordered conversations of participant number ``participant`` (0-based).

    Labels are given in order of first appearance, so the first assistant a participant
    meets is always "A" whoever it is; the same assistant keeps its letter across that
    participant's tasks so that they can compare.
    """
    if not tasks or not assistants:
        raise ValueError(f"need at least one task and one assistant, got {len(tasks)} and {len(assistants)}")
    if len(set(assistants)) != len(assistants):
        raise ValueError(f"assistant names must be distinct, got {assistants!r}")
    if not 1 <= tasks_per_participant <= len(tasks):
        raise ValueError(f"tasks_per_participant must be in 1..{len(tasks)}, got {tasks_per_participant!r}")
    if participant < 0:
        raise ValueError(f"participant must be >= 0, got {participant!r}")
    rng = np.random.default_rng([seed, participant])
    labels: dict[str, str] = {}
    plan = []
    for j in range(tasks_per_participant):
        task_id = tasks[(participant + j) % len(tasks)]
        for i in rng.permutation(len(assistants)):
            name = assistants[int(i)]
            labels.setdefault(name, _label(len(labels)))
            plan.append(PlannedConversation(task_id, name, labels[name]))
    return plan
