"""Protocol of App. C.2: seeded task sample, cyclic assignment, shuffled anonymous assistants."""

from collections import Counter

import pytest

from eval.human.protocol import participant_plan, sample_tasks
from situ_gym.scene.loader import load_task_bank

ASSISTANTS = ["heuristic", "random", "hf:runs/x"]


def test_sample_is_seeded_distinct_and_from_the_bank():
    ids = [t.id for t in load_task_bank("supermarket").tasks]
    five = sample_tasks(ids, seed=42, count=5)
    assert five == sample_tasks(ids, seed=42, count=5)
    assert len(set(five)) == 5 and set(five) <= set(ids)
    assert five != sample_tasks(ids, seed=43, count=5)
    assert five != ids[:5]  # a draw, not the head of the bank


def test_paper_pairs_give_every_task_to_two_participants():
    tasks = ["t0", "t1", "t2", "t3", "t4"]
    counts = Counter()
    for k in range(5):
        plan = participant_plan(tasks, ASSISTANTS, k, 2, seed=42)
        mine = list(dict.fromkeys(p.task_id for p in plan))
        assert mine == [tasks[k], tasks[(k + 1) % 5]]  # adjacent pair, cyclic
        counts.update(mine)
    assert counts == {t: 2 for t in tasks}


def test_each_task_meets_every_assistant_once_under_stable_letters():
    plan = participant_plan(["t0", "t1"], ASSISTANTS, 3, 2, seed=42)
    for task in ("t0", "t1"):
        assert sorted(p.assistant for p in plan if p.task_id == task) == sorted(ASSISTANTS)
    letters = {}
    for p in plan:
        assert letters.setdefault(p.assistant, p.label) == p.label
    assert plan[0].label == "A"  # the first assistant met is A, whichever it is
    assert sorted(letters.values()) == ["A", "B", "C"]


def test_order_varies_across_participants():
    orders = {tuple(p.assistant for p in participant_plan(["t0"], ASSISTANTS, k, 1, seed=42)) for k in range(10)}
    assert len(orders) > 1


@pytest.mark.parametrize(
    "tasks, assistants, per, match",
    [
        (["t0"], ["a", "a"], 1, "distinct"),
        (["t0", "t1"], ["a"], 3, "tasks_per_participant"),
        ([], ["a"], 1, "at least one"),
    ],
)
def test_bad_plans_are_refused(tasks, assistants, per, match):
    with pytest.raises(ValueError, match=match):
        participant_plan(tasks, assistants, 0, per, seed=0)
