"""RuleBasedJudge: each dimension reacts to the behaviour its rule names (values by hand); the LLM
judge on a saved run through ``python -m eval.metrics`` (a scripted model in place of ``hf:``)."""

from __future__ import annotations

import json
import re

import pytest

from eval.judge import DIMENSIONS, RuleBasedJudge, make_judge
from situ_gym.scene.model import AcceptancePolicy, DisclosureItem, Task
from tests.eval.builders import episode, turn
from tests.llm.scripted import ScriptedBackend

J = RuleBasedJudge()


def _task():
    return Task(
        id="t1", store="supermarket", profile_id="p1", theme="dinner", request="fish under $10",
        category="lamp", required_tags=[], avoided_tags=[], target_product_id="a",
        disclosure=[DisclosureItem(kind="budget", text="under ten dollars", value=10.0)],
        acceptance=AcceptancePolicy(inspect_before_buying=False, explanations_needed=0,
                                    accept_substitutes=True, rejection_style="reason"),
        budget_tier="strict", budget=10.0, reference_set=["a", "c"], subset=0,
    )


def test_output_has_all_dimensions_and_the_judge_name(market_index):
    r = J.rate(episode([turn(1, response="Hello there, what can I find for you today?")]), _task(), market_index)
    assert set(r) == set(DIMENSIONS) | {"judge"}
    assert r["judge"] == "rule-based"
    assert all(1.0 <= r[d] <= 5.0 for d in DIMENSIONS)
    assert make_judge("rule").name == "rule-based"
    with pytest.raises(ValueError, match="unknown judge"):
        make_judge("gpt")


def test_groundedness_checks_prices_and_visible_claims(market_index):
    ep = episode([
        turn(1, response="The Cod Fillets are $9.99 a pack."),  # correct price: ok
        turn(2, response="Try the Salmon, only $3.00!", action_type="Recommend", recommended_id="a",
             action={"type": "Recommend", "visible_now": True}, visible_before=["a"]),
        # claims: t1 price ok; t2 Recommend of a visible catalog item ok; t2 "$3.00" for Salmon (12.50) wrong
    ])
    assert J.rate(ep, None, market_index)["Groundedness"] == pytest.approx(1 + 4 * 2 / 3, abs=1e-3)
    # Claiming visibility of a product that was not in view is unsupported: 0 of 1 -> 1.0
    ep2 = episode([turn(1, response="Here it is.", action_type="Recommend", recommended_id="b",
                        action={"type": "Recommend", "visible_now": True}, visible_before=["a"])])
    assert J.rate(ep2, None, market_index)["Groundedness"] == 1.0
    # No checkable claim: the neutral 3
    assert J.rate(episode([turn(1, response="Let us look around.")]), None, market_index)["Groundedness"] == 3.0


def test_preference_alignment_uses_constraints_revealed_earlier(market_index):
    ep = episode([
        # b costs 12.50; the budget is revealed only in this turn -> not yet binding: good
        turn(1, action_type="Recommend", recommended_id="b", revealed=["budget"]),
        turn(2, action_type="Recommend", recommended_id="b"),  # over the revealed $10: violation
        turn(3, action_type="Recommend", recommended_id="c"),  # $4: good
    ])
    # 2 of 3 recommendations respect what was known -> 1 + 4 * 2/3
    assert J.rate(ep, _task(), market_index)["Preference Alignment"] == pytest.approx(1 + 8 / 3, abs=1e-3)
    # Without the task the constraints are unknown: neutral 3
    assert J.rate(ep, None, market_index)["Preference Alignment"] == 3.0


def test_non_repetition_and_naturalness_penalise_what_they_name(market_index):
    same = "Would you like to try the frozen section by the back wall?"
    rep = episode([turn(i, response=same, action_type="AskPreference") for i in (1, 2, 3)])
    # turns 2 and 3 repeat turn 1 -> 1 - 2/3 -> 1 + 4/3
    assert J.rate(rep, None, market_index)["Non-repetition"] == pytest.approx(1 + 4 / 3, abs=1e-3)
    varied = episode([
        turn(1, response="Hi! What are you shopping for?", action_type="Greet"),
        turn(2, response="The freezers on your left have fish.", action_type="Navigate"),
        turn(3, response="Cod Fillets fit your budget at $9.99.", action_type="Recommend", recommended_id="a"),
    ])
    assert J.rate(varied, None, market_index)["Non-repetition"] == 5.0
    # Jargon (an id and a handle) is one flaw of three -> per-turn 2/3 -> 1 + 8/3
    jargon = episode([turn(1, response="Go to [3] and take sm_p001 please.")])
    assert J.rate(jargon, None, market_index)["Naturalness"] == pytest.approx(1 + 8 / 3, abs=1e-3)
    assert J.rate(varied, None, market_index)["Naturalness"] == 5.0


def test_proactiveness_informativeness_and_overall(market_index):
    stall = episode([turn(i, response=f"Tell me more, option {i}?", action_type="AskPreference") for i in range(1, 7)])
    # AskPreference counts only within the first three turns: 3/6 -> 3.0
    r = J.rate(stall, None, market_index)
    assert r["Proactiveness"] == 3.0
    ask = episode([
        turn(1, response="Hello!", user_utterance="How much is the cod?", action_type="Greet"),
        turn(2, response="The Cod Fillets are $9.99.", action_type="AnswerQuestion", user_utterance="ok"),
    ], cart=["a"], reference_set=["a"])
    r2 = J.rate(ask, _task(), market_index)
    assert r2["Informativeness"] == 5.0  # the one answer to a question names a product and a price
    assert r2["Proactiveness"] == 5.0  # 2/2 progressing (+0.5 capped)
    six = [r2[d] for d in DIMENSIONS[:-1]]
    assert r2["Overall"] == pytest.approx(0.7 * sum(six) / 6 + 0.3 * 5.0, abs=1e-3)
    assert r2["Overall"] > r["Overall"]
    assert J.rate(episode([]), None, None)["Overall"] == 1.0


# ------------------------------------------------------------ the LLM judge on a saved run


class _JudgeModel(ScriptedBackend):
    """Stands for ``hf:...`` (no model is loaded): Overall = the transcript's assistant
    messages (1-5), the rest 3; a transcript holding "GARBLE" gets a reply that is no JSON."""

    built: list[_JudgeModel] = []

    def __init__(self, spec, **kwargs):
        super().__init__(self._reply, model=spec)
        _JudgeModel.built.append(self)

    @staticmethod
    def _reply(request, _i):
        text = request.messages[1]["content"]
        if "GARBLE" in text:
            return "I would rate it quite well."
        n = len(re.findall(r"^Assistant: ", text, flags=re.M))
        return json.dumps({d: (min(5, n) if d == "Overall" else 3) for d in DIMENSIONS})


@pytest.fixture
def judge_model(monkeypatch):
    import situ_gym.llm.hf_backend as hf_backend

    _JudgeModel.built.clear()
    monkeypatch.setattr(hf_backend, "HFChatBackend", _JudgeModel)
    return _JudgeModel.built


def _run_file(tmp_path, protocols=("default", "default"), garble=False):
    from eval.io import append_episode

    path = tmp_path / "run" / "trajectories.jsonl"
    path.parent.mkdir()
    for k, protocol in enumerate(protocols):
        first = "GARBLE" if garble else "Hello! What are you looking for?"
        turns = [turn(1, response=first, action_type="Greet")] + [turn(i, response=f"Look left, shelf {i}.")
                                                                  for i in range(2, k + 3)]
        append_episode(path, episode(turns, task_id=f"t{k}").model_copy(update={"protocol": protocol}))
    return path.parent


def _metrics_json(argv, capsys):
    from eval.metrics.__main__ import main

    assert main([*argv, "--json", "--no-scene"]) == 0
    captured = capsys.readouterr()
    (group,) = json.loads(captured.out).values()
    return group["dialogue"], captured.err


def test_metrics_rates_a_saved_run_with_the_llm_judge_in_one_batch(tmp_path, capsys, judge_model):
    from eval.llm_judge import JUDGE_PROMPT

    run = _run_file(tmp_path)
    dialogue, err = _metrics_json([str(run), "--judge", "llm", "--judge-model", "hf:judge"], capsys)
    (backend,) = judge_model
    assert [len(b) for b in backend.batches] == [2]  # both episodes in one batch, no re-ask
    assert {r.messages[0]["content"] for r in backend.batches[0]} == {JUDGE_PROMPT}  # the default protocol
    assert dialogue["judge"] == "llm:judge"
    assert dialogue["ratings"]["Overall"]["cohort"] == pytest.approx((2 + 3) / 2)  # 2 and 3 assistant messages
    assert dialogue["ratings"]["Naturalness"]["cohort"] == 3.0
    assert "2 episodes, 0 re-asked, 0 fell back to the rule judge (0%)" in err


def test_metrics_llm_judge_takes_the_protocol_the_episodes_recorded(tmp_path, capsys, judge_model):
    from eval.llm_judge import JUDGE_PROMPT, PAPER_JUDGE_PROMPT

    run = _run_file(tmp_path, protocols=("paper", "paper"))
    _metrics_json([str(run), "--judge", "llm", "--judge-model", "hf:judge"], capsys)
    _metrics_json([str(run), "--judge", "llm", "--judge-model", "hf:judge", "--protocol", "default"], capsys)
    prompts = [{r.messages[0]["content"] for r in b} for backend in judge_model for b in backend.batches]
    assert prompts == [{PAPER_JUDGE_PROMPT}, {JUDGE_PROMPT}]  # recorded, then overridden


def test_metrics_llm_judge_falls_back_per_episode_and_says_how_often(tmp_path, capsys, judge_model):
    run = _run_file(tmp_path, garble=True)
    dialogue, err = _metrics_json([str(run), "--judge", "llm", "--judge-model", "hf:judge"], capsys)
    (backend,) = judge_model
    assert [len(b) for b in backend.batches] == [2, 2]  # one batch, then one batch of re-asks
    assert dialogue["judge"] == "rule fallback"
    assert "2 episodes, 2 re-asked, 2 fell back to the rule judge (100%)" in err


def test_metrics_refuses_episodes_of_both_protocols_without_protocol(tmp_path, capsys):
    from eval.metrics.__main__ import main

    run = _run_file(tmp_path, protocols=("default", "paper"))
    with pytest.raises(SystemExit) as exc:
        main([str(run)])
    assert exc.value.code == 2
    assert "choose one with --protocol" in capsys.readouterr().err.strip().splitlines()[-1]
    assert main([str(run), "--protocol", "paper", "--no-scene"]) == 0
