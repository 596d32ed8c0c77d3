import json

import pytest

import recrm.score as score_mod
from recrm.score import score_episodes
from situ_gym.records import read_episodes
from tests.recrm.turns import honest_recommend, opening_history, reward_episode
from tests.world import reward_market, reward_task


def episode(agent, last, cart):
    turns = opening_history() + [last.model_copy(update={"cart": cart})]
    return reward_episode(
        episode_id=f"sm_t001#{agent}",
        agent=agent,
        turns=turns,
        cart=cart,
        termination="success_cart_added" if cart else "turn_limit",
    )


@pytest.fixture()
def episodes():
    honest = honest_recommend()
    liar = honest.model_copy(update={"response": honest.response.replace("$4.99", "$2.99")})
    return [episode("honest", honest, ["sm_p004"]), episode("liar", liar, [])]


@pytest.fixture()
def world():
    return {"tasks": {"sm_t001": reward_task()}, "indexes": {"supermarket": reward_market()}}


def test_score_episodes_per_agent(episodes, world):
    out = score_episodes(episodes, **world)
    honest, liar = out["agents"]["honest"], out["agents"]["liar"]
    assert honest["turns"] == 3 and honest["episodes"] == 1
    assert honest["mean_return"] == pytest.approx(0.2 + 0.2 + 1.0)  # two open questions, one honest recommendation
    assert honest["mean_total"] == pytest.approx(1.4 / 3)
    assert liar["mean_return"] == pytest.approx(0.4)  # its questions are paid, its lie is not
    assert liar["gate_pass"]["consistency"] == pytest.approx(2 / 3)
    assert liar["failures"] == {"consistency/price": 1}
    assert honest["components"]["relevance"] == {"mean": 1.0, "applicable": pytest.approx(1 / 3)}
    assert out["overall"]["turns"] == 6 and out["skipped"] == []


def test_outcome_variant_and_bonus(episodes, world):
    r1 = score_episodes(episodes, variant="outcome", **world)
    assert r1["agents"]["honest"]["mean_return"] == 1.0
    assert r1["agents"]["liar"]["mean_return"] == 0.0
    bonus = score_episodes(episodes, outcome_bonus=1.0, **world)
    assert bonus["agents"]["honest"]["mean_return"] == pytest.approx(2.4)


def test_unknown_task_is_skipped(episodes, world, monkeypatch):
    monkeypatch.setattr(score_mod, "load_world", lambda store: ({}, reward_market()))
    ep = episodes[0].model_copy(update={"task_id": "sm_t999", "episode_id": "x"})
    out = score_episodes([ep], **world)
    assert out["skipped"] == ["x"] and out["overall"]["turns"] == 0


def test_cli_reads_file_and_prints_json(episodes, tmp_path, monkeypatch, capsys):
    path = tmp_path / "trajectories.jsonl"
    path.write_text("".join(ep.model_dump_json() + "\n" for ep in episodes) + '{"truncated": ')
    assert len(read_episodes(path)) == 2  # a broken last line is dropped
    monkeypatch.setattr(
        score_mod, "load_world", lambda store: ({"sm_t001": reward_task()}, reward_market())
    )
    assert score_mod.main([str(path), "--json", "--variant", "R4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "+behavior"
    assert out["agents"]["liar"]["mean_return"] == pytest.approx(1.4)  # no consistency gate in R4
    assert score_mod.main([str(path)]) == 0
    table = capsys.readouterr().out
    assert "honest" in table and "liar" in table and "consistency/price x1" in table


def test_cli_rejects_unknown_variant(tmp_path):
    with pytest.raises(SystemExit):
        score_mod.main([str(tmp_path / "x.jsonl"), "--variant", "R7"])


def test_episode_from_other_assets_keeps_its_ground_truth(episodes, world):
    # the bank's task now targets sm_p008 only; the saved episode still says sm_p004
    world["tasks"]["sm_t001"] = reward_task(target_product_id="sm_p008", reference_set=["sm_p008"])
    out = score_episodes(episodes[:1], **world)
    assert out["stale"] == [episodes[0].episode_id]
    # NDCG against the saved {sm_p004, sm_p008}: 1.0 (against the bank's {sm_p008} it would be 0.63)
    assert out["agents"]["honest"]["components"]["ranking"]["mean"] == pytest.approx(1.0)


def test_cli_scores_the_paper_variant(episodes, tmp_path, monkeypatch, capsys):
    """``--variant paper``: questions earn nothing, the honest recommendation its unnormalised 2x."""
    path = tmp_path / "trajectories.jsonl"
    path.write_text("".join(ep.model_dump_json() + "\n" for ep in episodes))
    monkeypatch.setattr(
        score_mod, "load_world", lambda store: ({"sm_t001": reward_task()}, reward_market())
    )
    assert score_mod.main([str(path), "--json", "--variant", "paper"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "paper" and out["params"]["normalize"] is False
    assert out["agents"]["honest"]["mean_return"] == pytest.approx(2.0)  # 0 + 0 + (1 + 0.5 (1 + 1))
    assert out["agents"]["liar"]["mean_return"] == 0.0


def test_cli_variant_follows_the_episodes_protocol(episodes, tmp_path, monkeypatch, capsys):
    """Without --variant the file is scored with its protocol's reward; a mixed file must choose."""
    monkeypatch.setattr(
        score_mod, "load_world", lambda store: ({"sm_t001": reward_task()}, reward_market())
    )
    paper = [ep.model_copy(update={"protocol": "paper"}) for ep in episodes]
    for eps, expected in ((episodes, "full"), (paper, "paper")):
        path = tmp_path / f"{expected}.jsonl"
        path.write_text("".join(ep.model_dump_json() + "\n" for ep in eps))
        assert score_mod.main([str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["variant"] == expected
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(ep.model_dump_json() + "\n" for ep in [episodes[0], paper[1]]))
    with pytest.raises(SystemExit) as exc:
        score_mod.main([str(mixed)])
    assert exc.value.code == 2 and "mixes protocols" in capsys.readouterr().err
