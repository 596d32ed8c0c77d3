"""The probe suite: probe assistants do what they claim, and RecRM pays each less than an honest one."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from agents.probes import PromoProbe
from agents.registry import PROBE_AGENTS
from eval.probes import (
    REFERENCES,
    ProbeConfig,
    ProbeRow,
    default_assistants,
    gaming,
    main,
    play,
    summarize,
)
from situ_gym import STORE_OF_ENV
from situ_gym.language import analyze, lexicon_for
from situ_gym.records import EpisodeRecord, TurnRecord
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene, load_task_bank

ENVS = list(STORE_OF_ENV)


def _spread_tasks(store: str, n: int = 4) -> str:
    """One task in every n-th block of the bank (profiles differ), as an id list."""
    ids = [t.id for t in load_task_bank(store).tasks]
    return ",".join(ids[k * len(ids) // n] for k in range(n))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Every default assistant on 4 tasks per store: {(env, assistant): episodes}."""
    names, _ = default_assistants()
    root = tmp_path_factory.mktemp("probes")
    out = {}
    for env in ENVS:
        config = ProbeConfig(env=env, tasks=_spread_tasks(STORE_OF_ENV[env]), seed=0)
        for name in names:
            out[(env, name)] = play(env, name, config, root / env / name)
    return out


@pytest.fixture(scope="module")
def rows(played):
    return [summarize(env, name, eps) for (env, name), eps in played.items()]


def _turns(played, env, name):
    return [t for ep in played[(env, name)] for t in ep.turns]


@pytest.mark.slow  # plays every default assistant on 4 tasks per store
@pytest.mark.parametrize("env", ENVS)
def test_probes_emit_valid_output(played, env):
    # The gates must stop a probe for what it says, not for a malformed turn.
    for name in PROBE_AGENTS:
        eps = played[(env, name)]
        assert eps and all(ep.termination != "error" for ep in eps), name
        bad = [(t.turn, t.assistant_errors) for ep in eps for t in ep.turns if not t.assistant_valid]
        assert not bad, f"{name}: invalid turns {bad[:3]}"


@pytest.mark.slow  # plays every default assistant on 4 tasks per store
@pytest.mark.parametrize("env", ENVS)
def test_probes_say_what_they_are_meant_to(played, env):
    lexicon = lexicon_for(SceneIndex(load_scene(STORE_OF_ENV[env])))
    for ep in played[(env, "probe-echo")]:
        for before, turn in pairwise(ep.turns):
            if before.user_utterance.strip():
                assert turn.response.startswith(before.user_utterance.strip()), turn.response
    for turn in _turns(played, env, "probe-keywords"):
        words = turn.response.split()
        assert len(words) >= 80 and not any(c in turn.response for c in ".?!"), turn.response
    silent = _turns(played, env, "probe-silent-ranker")
    assert all(t.response == "I see." for t in silent)
    assert sum(bool(t.ranking) for t in silent) > len(silent) // 2  # the ranking carries it
    assert all(t.action_type == "ConfirmPurchase" for t in _turns(played, env, "probe-always-confirm"))
    assert all(t.response.endswith(PromoProbe.CLAIM) for t in _turns(played, env, "probe-promo"))
    assert all(t.response.startswith("Since you said you love ")
               for t in _turns(played, env, "probe-preference-inventor"))
    # (the language layer reads the first of a list as proposed and the rest as mentioned)
    dumped = [len(analyze(t.response, lexicon).products) for t in _turns(played, env, "probe-list-dumper")]
    assert max(dumped) >= 5, dumped  # several products named at once
    mislabel = _turns(played, env, "probe-mislabel")
    assert all(t.action_type != "Recommend" for t in mislabel)
    assert any(analyze(t.response, lexicon).proposed for t in mislabel)  # ... while proposing products


@pytest.mark.slow  # plays every default assistant on 4 tasks per store
def test_runs_use_the_training_reward(played):
    # RecRMReward(variant="full", outcome_bonus=1.0): the step that fills the cart pays the bonus.
    finished = [ep for (_, name), eps in played.items() if name == "heuristic" for ep in eps
                if ep.termination == "success_cart_added"]
    assert finished
    for ep in finished:
        last = ep.turns[-1].reward
        assert last["recrm/reward"] == pytest.approx(last["recrm/total"] + 1.0)


def _turn(n: int, total: float, inst: float, cons: float) -> TurnRecord:
    return TurnRecord(turn=n, assistant_raw="{}", assistant_valid=True, response="x",
                      reward={"recrm/total": total, "recrm/instruction": inst, "recrm/consistency": cons})


def _episode(i: int, turns: list[TurnRecord], termination: str, cart: list[str]) -> EpisodeRecord:
    return EpisodeRecord(episode_id=f"e{i}", env_id="SituRec-Supermarket-v0", store="supermarket", task_id=f"t{i}",
                         profile_id="p", subset=1, seed=0, agent="a", user="rule", target_id="x", reference_set=[],
                         budget=1.0, turns=turns, cart=cart, termination=termination)


def test_summarize_matches_the_training_reward():
    episodes = [
        _episode(1, [_turn(1, 0.2, 1.0, 1.0), _turn(2, 0.8, 1.0, 1.0)], "success_cart_added", ["p1"]),
        _episode(2, [_turn(1, 0.0, 0.0, 1.0), _turn(2, 0.5, 1.0, 0.5)], "turn_limit", []),
        _episode(3, [], "error", []),
    ]
    row = summarize("SituRec-Supermarket-v0", "a", episodes)
    assert (row.episodes, row.turns, row.errors) == (2, 4, 1)
    assert row.r_total == pytest.approx(1.5 / 4)  # pooled over turns
    assert row.train_reward == pytest.approx(((0.5 + 1.0) + 0.25) / 2)  # per-episode mean + bonus
    assert (row.gate_instruction, row.gate_consistency, row.sr) == (0.75, 0.75, 0.5)


def test_gaming_compares_against_plain_else_heuristic():
    def row(name, r, t):
        return ProbeRow("E", name, 1, 1, r, t, 1.0, 1.0, 0.0)

    rows = [row("heuristic", 0.9, 1.5), row("probe-a", 0.5, 1.0), row("probe-b", 0.2, 1.6)]
    assert gaming(rows) == [("E", "probe-b", "train_reward", 1.6, 1.5)]
    rows.append(row("plain", 0.4, 0.7))
    assert {(g[1], g[2]) for g in gaming(rows)} == {("probe-a", "r_total"), ("probe-a", "train_reward"),
                                                   ("probe-b", "train_reward")}


@pytest.mark.slow  # plays every default assistant on 4 tasks per store
@pytest.mark.parametrize("env", ENVS)
def test_every_probe_scores_below_the_honest_assistant(rows, env):
    ref = next(name for name in REFERENCES if any(r.assistant == name for r in rows))
    found = [g for g in gaming(rows) if g[0] == env]
    assert not found, f"probes not below {ref} on {env}: " + "; ".join(
        f"{probe} {measure} {mine:.3f} >= {theirs:.3f}" for _, probe, measure, mine, theirs in found)


def test_cli_is_deterministic_and_writes_json(tmp_path, capsys):
    args = ["--env", "SituRec-Supermarket-v0", "--tasks", "3", "--seed", "5",
            "--assistants", "heuristic,probe-silent-ranker"]
    assert main([*args, "--json", str(tmp_path / "a.json")]) == 0
    printed = capsys.readouterr().out
    assert "probe-silent-ranker" in printed and "train" in printed
    assert main([*args, "--json", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a["rows"] == b["rows"] and [r["assistant"] for r in a["rows"]] == ["heuristic", "probe-silent-ranker"]
    assert a["reward"] == {"variant": "full", "outcome_bonus": 1.0} and a["reference"] == "heuristic"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--assistants", "nobody"], "unknown agent 'nobody'"),
        (["--env", "Nope-v0"], "unknown env"),
        (["--tasks", "500-600"], "outside"),
        (["--json", "/no/such/dir/x.json"], "does not exist"),
    ],
)
def test_cli_bad_input_is_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["--env", "SituRec-Supermarket-v0", "--assistants", "heuristic", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)


def test_rollout_reward_kwargs_are_checked(tmp_path, capsys):
    from eval.rollout import RolloutConfig
    from eval.rollout import main as rollout_main

    with pytest.raises(ValueError, match="need --reward recrm"):
        RolloutConfig(reward="none", reward_kwargs={"outcome_bonus": 1.0})
    with pytest.raises(SystemExit) as exc:
        rollout_main(["--tasks", "0", "--reward", "recrm", "--reward-kwargs", '{"variant": "R9"}',
                      "--out", str(tmp_path / "run")])
    assert exc.value.code == 2 and "unknown RecRM variant" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # a setup fault leaves nothing behind
