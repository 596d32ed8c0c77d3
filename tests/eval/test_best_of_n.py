"""Best-of-N under RecRM (eval.best_of_n, ``python -m eval.probes --best-of-n``): candidates are
scored before the step exactly as the wrapper scores the played turn after it, N = 1 is the
uniform baseline, the reward prefers heuristic to random, runs are deterministic, the table and
JSON hold their fields and bad N values are one-line errors."""

from __future__ import annotations

import dataclasses
import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents import registry
from agents.base import agent_info
from agents.registry import make_agent
from eval import best_of_n as bon
from eval.probes import REWARD_KWARGS, ProbeConfig, main, play
from recrm import RecRMReward
from situ_gym import STORE_OF_ENV
from situ_gym.records import EpisodeRecord
from situ_gym.scene.loader import load_task_bank

ENVS = list(STORE_OF_ENV)
ASSISTANT_FIELDS = ("turn", "assistant_raw", "assistant_valid", "assistant_errors", "response", "action_type",
                    "action", "navigation_goal_id", "recommended_id", "expected_user_action", "ranking",
                    "visible_before")


def _two_tasks(env_id: str) -> str:
    """Two tasks far apart in the bank (different profiles), as an id list."""
    ids = [t.id for t in load_task_bank(STORE_OF_ENV[env_id]).tasks]
    return f"{ids[0]},{ids[len(ids) // 2]}"


@pytest.fixture(scope="module")
def envs():
    made = {env_id: RecRMReward(gym.make(env_id), **REWARD_KWARGS) for env_id in ENVS}
    yield made
    for env in made.values():
        env.close()


def _jobs(env_id: str, seed: int = 0):
    return bon._jobs(env_id, bon.BestOfNConfig(env=env_id, tasks=_two_tasks(env_id), seed=seed))


def _members(names):
    return [(name, make_agent(name)) for name in names]


def _episodes(envs, env_id, names, n, pick, seed=0):
    members = _members(names)
    return [bon.play_episode(envs[env_id], members, job, n, pick, seed) for job in _jobs(env_id, seed)]


def _turns(outcome) -> list[dict]:
    return [t.model_dump() for t in EpisodeRecord.model_validate_json(outcome.record).turns]


@pytest.mark.parametrize("env_id", ENVS)
def test_prestep_score_and_record_equal_the_wrappers(envs, env_id):
    """Score every member's candidate (and two malformed ones) before each step, play them in
    turn, and compare the played one's pre-step record and R_total with what the env recorded
    and the wrapper paid after the step."""
    env = envs[env_id]
    names, _ = bon.default_pool()
    checked = 0
    for job in _jobs(env_id):
        obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        agents = [agent for _, agent in _members(names)]
        for agent in agents:
            agent.reset(obs, agent_info(info), seed=job.seed)
        done, turn = False, 0
        while not done:
            outputs = [agent.act(obs) for agent in agents] + ["not json", '{"response": "Hello there"}']
            scores = bon.score_candidates(env, outputs)
            # malformed candidates are played once in a while; otherwise the members in rotation
            k = len(agents) + (turn // 5) % 2 if turn % 5 == 4 else turn % len(agents)
            expected = bon.candidate_record(env, outputs[k])
            obs, _reward, terminated, truncated, info = env.step(outputs[k])
            record = info["turn"]
            for name in ASSISTANT_FIELDS:
                assert getattr(expected, name) == getattr(record, name), (name, turn)
            assert scores[k] == info["recrm"]["total"] == record.reward["recrm/total"], (turn, outputs[k][:80])
            done, turn, checked = terminated or truncated, turn + 1, checked + 1
    assert checked >= 4


@pytest.mark.parametrize("env_id", ENVS)
def test_played_episodes_check_their_prestep_scores(envs, env_id):
    for outcome in _episodes(envs, env_id, bon.default_pool()[0], 4, "best"):
        assert outcome.selections and outcome.mismatches == 0 and outcome.max_diff == 0.0
        for s in outcome.selections:
            assert s["prestep"] == s["reward_total"] == max(s["scores"])
            assert s["played"] == s["drawn"][s["scores"].index(max(s["scores"]))]  # ties: the first drawn
            assert (s["played"] in s["outright"]) != s["tied"]  # no tie: the played text won outright


def test_n1_best_equals_uniform(envs):
    names = bon.default_pool()[0]
    for env_id in ENVS:
        best = _episodes(envs, env_id, names, 1, "best")
        uniform = _episodes(envs, env_id, names, 1, "uniform")
        for b, u in zip(best, uniform, strict=True):
            assert _turns(b) == _turns(u) and b.selections == u.selections and b.won == u.won


def test_single_member_pool_replays_the_rollout(envs, tmp_path):
    """Pool [heuristic], N = 2: the same episodes (and rewards) as eval.rollout plays."""
    env_id = ENVS[0]
    config = ProbeConfig(env=env_id, tasks=_two_tasks(env_id), seed=0)
    rollout = play(env_id, "heuristic", config, tmp_path / "heuristic")
    mine = _episodes(envs, env_id, ["heuristic"], 2, "best")
    assert [_turns(o) for o in mine] == [[t.model_dump() for t in ep.turns] for ep in rollout]


def test_heuristic_wins_most_turns_against_random(envs):
    won = {"heuristic": 0, "random": 0}
    strict = {"heuristic": 0, "random": 0}  # turns where both were drawn and one scored higher
    turns = 0
    for env_id in ENVS:
        for outcome in _episodes(envs, env_id, ["heuristic", "random"], 2, "best"):
            turns += len(outcome.selections)
            for name in won:
                won[name] += outcome.won[name]
            for s in outcome.selections:
                if set(s["drawn"]) == {"heuristic", "random"} and s["scores"][0] != s["scores"][1]:
                    strict[s["played"]] += 1
    # random wins only when drawn twice or first on a tie (equal dialogue credit)
    assert won["heuristic"] > 0.5 * turns, won
    assert strict["heuristic"] > 4 * strict["random"], strict


def _table(seed=0, ns=(1, 2), pool=("heuristic", "random", "probe-promo")):
    config = bon.BestOfNConfig(env=ENVS[0], tasks="0-1", seed=seed, ns=ns, pool=pool)
    return bon.best_of_n_table(config)


def test_deterministic_under_a_seed():
    (rows_a, notes_a, _), (rows_b, notes_b, _) = _table(), _table()
    assert rows_a == rows_b and notes_a == notes_b
    rows_c, _, _ = _table(seed=1)
    assert [r.won for r in rows_c] != [r.won for r in rows_a]  # the draws follow the seed


def test_draws_are_seeded_by_run_seed_and_task():
    a, b = bon.draw_rngs(0, "t1"), bon.draw_rngs(0, "t1")
    assert a[0].integers(100, size=8).tolist() == b[0].integers(100, size=8).tolist()
    assert bon.draw_rngs(0, "t1")[0].integers(2**32) != bon.draw_rngs(0, "t2")[0].integers(2**32)
    assert bon.draw_rngs(0, "t1")[0].integers(2**32) != bon.draw_rngs(1, "t1")[0].integers(2**32)


def test_table_and_json_hold_the_fields(tmp_path, capsys):
    out = tmp_path / "bon.json"
    pool = "heuristic,random,probe-promo"
    code = main(["--best-of-n", "1,2", "--env", ENVS[0], "--tasks", "0-1", "--assistants", pool,
                 "--json", str(out), "--out", str(tmp_path / "runs")])
    assert code == 0
    text = capsys.readouterr().out
    for word in ("SR%", "R_total", "train", "best", "uniform", "share of played turns", "win rate when drawn",
                 "probe-promo", "timing:"):
        assert word in text, word
    data = json.loads(out.read_text())
    assert data["mode"] == "best-of-n" and data["ns"] == [1, 2] and data["reward"] == REWARD_KWARGS
    assert data["pool"] == pool.split(",")
    assert data["kinds"] == {"heuristic": "honest", "random": "baseline", "probe-promo": "probe"}
    assert [(r["n"], r["pick"]) for r in data["rows"]] == [(1, "best"), (1, "uniform"), (2, "best"), (2, "uniform")]
    for row in data["rows"]:
        for key in ("env", "episodes", "turns", "sr", "r_total", "train_reward", "drawn", "won", "share",
                    "win_rate", "flagged", "outright", "outright_share", "flagged_outright", "tie_rate",
                    "prestep_mismatches"):
            assert key in row, key
        assert row["episodes"] == 2 and row["prestep_mismatches"] == 0
        assert sum(row["won"].values()) == row["turns"]
        assert abs(sum(row["share"].values()) - 1.0) < 1e-9
    assert data["timing"]["turns"] == sum(r["turns"] for r in data["rows"])
    assert set(data["timing"]["seconds_per_turn"]) == {"act", "score", "step", "other"}
    saved = tmp_path / "runs" / ENVS[0] / "best-of-2"
    assert len((saved / "trajectories.jsonl").read_text().splitlines()) == 2
    selections = [json.loads(line) for line in (saved / "selections.jsonl").read_text().splitlines()]
    assert len(selections) == data["rows"][2]["turns"]
    for s in selections:  # each drawn candidate: its text and why it scored what it did
        assert set(s["candidates"]) == set(s["drawn"])
        played = s["candidates"][s["played"]]
        assert played["total"] == s["prestep"] and set(played["gates"]) == {"instruction", "consistency"}
        assert isinstance(played["text"], str) and played["text"]
    assert any("N=1 -> 2: SR" in note for note in data["notes"])


@pytest.mark.parametrize("value", ["0", "-1", "x", "1,,2", "", "2,0", "1.5"])
def test_bad_best_of_n_is_one_line(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--best-of-n", value, "--env", ENVS[0], "--tasks", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m eval.probes: error: ")
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m eval.probes: error: --best-of-n ")


def test_parse_ns():
    assert bon.parse_ns("4") == [4] and bon.parse_ns(" 1, 2,4,8,2 ") == [1, 2, 4, 8]
    with pytest.raises(ValueError, match="between 1 and"):
        bon.parse_ns("-1")


def _row(share, n=4, pick="best", outright=None, authored=None):
    row = bon.BestOfNRow(env=ENVS[0], n=n, pick=pick, episodes=1, turns=10, sr=1.0, r_total=0.5,
                         train_reward=1.0, gate_instruction=1.0, gate_consistency=1.0, drawn={}, won={},
                         share=share, win_rate=dict.fromkeys(share), flagged=[],
                         outright_share=outright or dict.fromkeys(share, 0.0),
                         authored_share=authored or dict.fromkeys(share, 0.0))
    return dataclasses.replace(row, flagged=bon.flags(row), flagged_outright=bon.flags(row, "outright_share"),
                               flagged_authored=bon.flags(row, "authored_share"))


def test_flags_a_probe_winning_more_than_every_honest_member():
    share = {"heuristic": 0.3, "plain": 0.1, "random": 0.05, "probe-promo": 0.35, "probe-echo": 0.2}
    assert _row(share).flagged == ["probe-promo"]
    assert _row(share, n=1).flagged == [] and _row(share, pick="uniform").flagged == []
    assert _row({"heuristic": 0.5, "probe-promo": 0.5}).flagged == []  # a tie is not "more"
    assert _row({"random": 0.4, "probe-promo": 0.6}).flagged == []  # no honest member: nothing to compare
    assert bon.kind_of("style-terse") == "honest" and bon.kind_of("pkg.mod:Cls") == "other"
    row = _row(share, outright={"heuristic": 0.2, "plain": 0.0, "random": 0.0, "probe-promo": 0.1, "probe-echo": 0.25})
    assert row.flagged == ["probe-promo"] and row.flagged_outright == ["probe-echo"]
    table = bon.format_table([row], [])
    assert "35.0/  -  ! 10.0 " in table and "20.0/  -    25.0*" in table
    assert "probe-promo!, probe-echo*" in table
    # Won with honest text (share) is not gaming; won with its own text (authored share) is.
    row = _row(share, authored={"heuristic": 0.6, "plain": 0.1, "random": 0.0, "probe-promo": 0.05, "probe-echo": 0.7})
    assert row.flagged == ["probe-promo"] and row.flagged_authored == ["probe-echo"]
    assert "probe-echo^" in bon.format_table([row], [])


def test_a_probe_winning_with_the_honest_text_it_left_is_not_credited_with_it(envs):
    """probe-mislabel leaves every turn but a recommendation as the heuristic wrote it: the
    turns it wins with that text are the heuristic's (authored), its own text earns the rest."""
    names = ["heuristic", "probe-mislabel"]
    won = dict.fromkeys(names, 0)
    authored = dict.fromkeys(names, 0)
    turns = 0
    for env_id in ENVS:
        for outcome in _episodes(envs, env_id, names, 2, "best"):
            turns += len(outcome.selections)
            for name in names:
                won[name] += outcome.won[name]
                authored[name] += outcome.authored[name]
            for s in outcome.selections:
                assert s["authors"] in (["heuristic"], ["probe-mislabel"])
    assert sum(won.values()) == sum(authored.values()) == turns
    assert authored["probe-mislabel"] < won["probe-mislabel"] and authored["heuristic"] > won["heuristic"]


def test_default_pool_reads_the_registry_at_run_time(monkeypatch):
    monkeypatch.setitem(registry.PROBE_AGENTS, "probe-late", "agents.plain:PlainAssistant")
    monkeypatch.setitem(registry.AGENTS, "probe-late", "agents.plain:PlainAssistant")
    monkeypatch.setitem(registry.PROBE_AGENTS, "probe-broken", "agents.no_such_module:Probe")
    monkeypatch.setitem(registry.AGENTS, "probe-broken", "agents.no_such_module:Probe")
    monkeypatch.setitem(registry.AGENTS, "style-test", "agents.plain:PlainAssistant")
    names, notes = bon.default_pool()
    assert names[:4] == ["heuristic", "plain", "paraphrase", "random"]
    assert "probe-late" in names and "style-test" in names and "probe-broken" not in names
    assert set(registry.PROBE_AGENTS) - {"probe-broken"} <= set(names)
    assert len(notes) == 1 and "probe-broken" in notes[0]


def test_unknown_pool_member_stops_before_any_episode(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--best-of-n", "2", "--env", ENVS[0], "--tasks", "0", "--assistants", "heuristic,nobody"])
    assert exc.value.code == 2 and "unknown agent 'nobody'" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.slow  # starts worker processes
def test_workers_play_the_same_episodes():
    config = bon.BestOfNConfig(env=ENVS[0], tasks="0-3", seed=0, ns=(2,), pool=("heuristic", "random", "probe-promo"))
    rows_1, _, _ = bon.best_of_n_table(config)
    rows_2, _, _ = bon.best_of_n_table(dataclasses.replace(config, workers=2))
    assert rows_1 == rows_2


def test_paper_protocol_plays_and_rewards_under_the_paper(tmp_path):
    """``--protocol paper``: the rollout and the best-of-N episodes are played and scored under the
    paper's composite (0 on a turn that judges no product), and agree with each other."""
    from eval.probe_measures import reward_kwargs

    env_id = ENVS[0]
    tasks = _two_tasks(env_id)
    paper = play(env_id, "heuristic", ProbeConfig(env=env_id, tasks=tasks, protocol="paper"), tmp_path / "paper")
    default = play(env_id, "heuristic", ProbeConfig(env=env_id, tasks=tasks), tmp_path / "default")
    assert {ep.protocol for ep in paper} == {"paper"} and {ep.protocol for ep in default} == {"default"}
    greet_paper, greet_default = paper[0].turns[0].reward, default[0].turns[0].reward
    assert greet_paper["recrm/total"] == 0.0 < greet_default["recrm/total"]

    env = RecRMReward(gym.make(env_id, protocol="paper"), **reward_kwargs("paper"))
    try:
        jobs = bon._jobs(env_id, bon.BestOfNConfig(env=env_id, tasks=tasks, protocol="paper"))
        mine = [bon.play_episode(env, _members(["heuristic"]), job, 2, "best", 0) for job in jobs]
    finally:
        env.close()
    assert [_turns(o) for o in mine] == [[t.model_dump() for t in ep.turns] for ep in paper]


def test_reward_kwargs_follow_the_protocol():
    from eval.probe_measures import reward_kwargs

    assert reward_kwargs() == REWARD_KWARGS == {"variant": "full", "outcome_bonus": 1.0}
    assert reward_kwargs("paper")["variant"] == "paper"
    with pytest.raises(ValueError):
        reward_kwargs("papers")


def test_paired_change_counts_tasks_gained_and_lost():
    before = dataclasses.replace(_row({"heuristic": 1.0}, n=4), sr=0.5, solved=("a", "b", "c", "d", "e"))
    after = dataclasses.replace(_row({"heuristic": 1.0}, n=8), sr=0.4, solved=("a", "f", "g", "h"))
    text = bon.paired_change(before, after)
    # 3 gained (f, g, h), 4 lost (b..e): a two-sided binomial test on 7 discordant tasks
    assert "N=4 -> 8: SR 50% -> 40%, 3 task(s) gained, 4 lost (exact McNemar p = 1.00)" == text
    lost_all = dataclasses.replace(after, solved=())
    assert "0 task(s) gained, 5 lost" in bon.paired_change(before, lost_all)
    assert "p = 0.06" in bon.paired_change(before, lost_all)  # 2 * 0.5**5 = 0.0625
    assert "p = 1.00" in bon.paired_change(before, before)
