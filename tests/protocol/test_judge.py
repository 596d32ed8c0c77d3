"""The rule judge: by default it reads the hidden task; under the paper's protocol the trajectory alone."""

from __future__ import annotations

import pytest

from eval.judge import DIMENSIONS, make_judge
from eval.rollout_config import RolloutConfig, judge_kwargs
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import AcceptancePolicy, DisclosureItem, Task
from tests.eval.builders import episode, turn
from tests.world import records_market


@pytest.fixture
def market_index():
    """Cod Fillets (a, $9.99), Salmon (b, $12.50), Tuna (c, $4.00): all lamps tagged modern."""
    return SceneIndex(records_market())


def _task():
    return Task(
        id="t1", store="supermarket", profile_id="p1", theme="dinner", request="fish under $10",
        category="lamp", required_tags=[], avoided_tags=[], target_product_id="a",
        disclosure=[DisclosureItem(kind="budget", text="under ten dollars", value=10.0)],
        acceptance=AcceptancePolicy(inspect_before_buying=False, explanations_needed=0,
                                    accept_substitutes=True, rejection_style="reason"),
        budget_tier="strict", budget=10.0, reference_set=["a"], subset=0,
    )


class _Untouchable:
    """A task that fails the test on any read: the paper's judge must not look at it."""

    def __getattr__(self, name):
        raise AssertionError(f"the paper's judge read task.{name}")


def _bought(item: str, **kw):
    return episode([turn(1, response="Hello! What are you looking for?", action_type="Greet"),
                    turn(2, response="The Tuna is $4.00 and fits.", action_type="Recommend", recommended_id=item)],
                   cart=[item], **kw)


def test_default_rule_judge_reads_the_hidden_task(market_index):
    judge = make_judge("rule")
    assert judge.protocol == "default"
    # Outcome against the reference set: the reference item 5, another purchase 4
    ref, other = judge.rate(_bought("a", reference_set=["a"]), _task(), market_index), \
        judge.rate(_bought("a", reference_set=["c"]), _task(), market_index)
    six = [ref[d] for d in DIMENSIONS[:-1]]
    assert ref["Overall"] == pytest.approx(0.7 * sum(six) / 6 + 0.3 * 5.0, abs=1e-3)
    assert other["Overall"] == pytest.approx(ref["Overall"] - 0.3, abs=1e-3)
    # Preference Alignment from the task's disclosure and the shopper's record of what it revealed
    ep = episode([turn(1, action_type="Recommend", recommended_id="c", revealed=["budget"]),
                  turn(2, action_type="Recommend", recommended_id="b"),  # b: $12.50 over the $10
                  turn(3, action_type="Recommend", recommended_id="a")])
    assert judge.rate(ep, _task(), market_index)["Preference Alignment"] == pytest.approx(1 + 8 / 3, abs=1e-3)
    assert judge.rate(ep, None, market_index)["Preference Alignment"] == 3.0  # neutral without the task
    assert judge_kwargs(RolloutConfig()) == {"protocol": "default"}


def test_paper_rule_judge_rates_from_the_trajectory_alone(market_index):
    judge = make_judge("rule", protocol="paper")
    assert judge.protocol == "paper" and judge.name == "rule-based"
    # Nothing reads the task, the reference set or the shopper's record of what it revealed
    bought = judge.rate(_bought("a", reference_set=["a"]), _Untouchable(), market_index)
    assert judge.rate(_bought("a", reference_set=["c"]), None, market_index) == bought
    six = [bought[d] for d in DIMENSIONS[:-1]]
    assert bought["Overall"] == pytest.approx(0.7 * sum(six) / 6 + 0.3 * 5.0, abs=1e-3)  # something was bought
    empty = episode(_bought("a").turns, cart=[])
    nothing = judge.rate(empty, None, market_index)
    assert nothing["Overall"] == pytest.approx(0.7 * sum(nothing[d] for d in DIMENSIONS[:-1]) / 6 + 0.3 * 2.0,
                                               abs=1e-3)
    # Preference Alignment from what the shopper said, binding from the next turn on
    said = episode([
        turn(1, action_type="Recommend", recommended_id="b", user_utterance="My budget is at most $10."),  # not yet
        turn(2, action_type="Recommend", recommended_id="b", user_utterance="Hmm."),  # over the said $10
        turn(3, action_type="Recommend", recommended_id="c", user_utterance="I don't want anything modern."),
        turn(4, action_type="Recommend", recommended_id="a", user_utterance="ok"),  # modern: said to avoid
    ])
    assert judge.rate(said, _Untouchable(), market_index)["Preference Alignment"] == 3.0  # 2 of 4 -> 1 + 4/2
    # The shopper's record (revealed) is no evidence: a budget only the record shows binds nothing
    unsaid = episode([turn(1, action_type="Recommend", recommended_id="c", revealed=["budget"]),
                      turn(2, action_type="Recommend", recommended_id="b")])
    assert judge.rate(unsaid, _task(), market_index)["Preference Alignment"] == 5.0
    # A reply about one product judges it; it states no need ("The Salmon isn't modern" sets no tag)
    about = episode([turn(1, action_type="Recommend", recommended_id="b", user_utterance="The Salmon isn't modern."),
                     turn(2, action_type="Recommend", recommended_id="c", user_utterance="ok")])
    assert judge.rate(about, None, market_index)["Preference Alignment"] == 5.0


def test_paper_protocol_reaches_the_judge_from_the_rollout_config():
    assert judge_kwargs(RolloutConfig(protocol="paper")) == {"protocol": "paper"}
    kw = judge_kwargs(RolloutConfig(protocol="paper", judge="llm", judge_model="hf:m", llm_cache="none"))
    assert kw == {"protocol": "paper", "model": "hf:m", "base_url": None, "cache": None}
    assert make_judge("rule", **judge_kwargs(RolloutConfig(protocol="paper"))).protocol == "paper"


@pytest.mark.parametrize("protocol", ["default", "paper"])
def test_a_finished_run_is_judged_under_its_protocol(tmp_path, monkeypatch, protocol):
    """The rollout's finalize gives the run's protocol to the judge, and a saved run rescored
    without one is judged under the protocol its episodes recorded."""
    import eval.judge
    from eval.rollout import finalize, run

    seen = []
    real = eval.judge.make_judge

    def spy(name="rule", protocol="default", **kw):
        seen.append(protocol)
        return real(name, protocol=protocol, **kw)

    monkeypatch.setattr(eval.judge, "make_judge", spy)
    out = tmp_path / "run"
    run(RolloutConfig(env="SituRec-Supermarket-v0", agent="heuristic", tasks="0", max_turns=3, out=str(out),
                      protocol=protocol))
    assert seen and set(seen) == {protocol}
    seen.clear()
    finalize(out)  # no judge arguments: the episodes' own protocol
    assert seen == [protocol]
