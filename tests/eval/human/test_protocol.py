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


def test_paper_plan_by_default_five_supermarket_tasks_in_adjacent_pairs(tmp_path):
    """C.2 as the study runs it with no options: five tasks of the Supermarket bank (seed 42);
    participants 0..4 get (t0, t1), (t1, t2), ..., (t4, t0): each task exactly twice."""
    import json

    from eval.human.__main__ import _parser
    from eval.human.protocol import PAPER_TASKS_PER_PARTICIPANT
    from eval.human.study import Study, StudyConfig

    assert PAPER_TASKS_PER_PARTICIPANT == 2
    assert StudyConfig(assistants=("heuristic",), out=str(tmp_path / "x")).tasks_per_participant == 2
    assert _parser().parse_args(["serve", "--assistants", "heuristic"]).tasks_per_participant == 2
    study = Study(StudyConfig(assistants=tuple(ASSISTANTS[:2]), out=str(tmp_path / "s")))
    ids = [t.id for t in load_task_bank("supermarket").tasks]
    t = sample_tasks(ids, seed=42, count=5)
    assert study.task_ids == t
    counts = Counter()
    profile = {"age_group": "25-34", "shopping_frequency": "weekly", "note": ""}
    for k in range(5):
        pid, _ = study.join(profile)
        saved = json.loads((tmp_path / "s" / "participants" / f"{pid}.json").read_text())
        mine = list(dict.fromkeys(p["task_id"] for p in saved["plan"]))
        assert mine == [t[k], t[(k + 1) % 5]]
        assert len(saved["plan"]) == 2 * 2  # two tasks, each with both assistants
        counts.update(mine)
    assert counts == {task: 2 for task in t}
    study.close()
