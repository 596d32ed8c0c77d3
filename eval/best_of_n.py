"""Optimisation pressure as a tool: play episodes whose every turn is RecRM's favourite of N
candidates drawn from a pool of assistants.

    python -m eval.probes --best-of-n 1,2,4,8 --env all --tasks all [--seed S] [--workers W] \\
        [--assistants POOL] [--json OUT] [--out DIR]

Each episode resets every pool member on it (a deep copy of each, so nothing leaks from one
episode into the next) and asks EVERY member to act on every turn's observation, so each
one's internal state follows the real dialogue (the observation's history shows what was
actually said). Each turn N members are drawn uniformly with replacement by a numpy
Generator seeded from the run seed and the task (``draw_rngs``); every distinct drawn
candidate is scored with the reward the probes use (``eval.probe_measures.reward_kwargs``:
the composite of ``recrm.RecRMReward(variant="full", outcome_bonus=1.0)``, the paper's under
``--protocol paper``) on the env's
current state WITHOUT stepping it, the best one is played (ties: the first drawn) and the
env steps. The "uniform" baseline makes the same draws and plays one of the N chosen
uniformly at random (a second seeded Generator); for N = 1 both play the same episodes.

Scoring before stepping: ``candidate_record`` builds the assistant side of the ``TurnRecord``
the env would record for a raw candidate, from the env's pre-step state, as
``SituRecEnv._play_turn`` does (``parse_assistant_output`` with the assistant's current view
and the no-caption ablation, the raw text and the response sanitised alike, the turn number,
``visible_before``); the shopper's side stays empty. ``candidate_context`` makes the
``TurnContext`` that ``RecRMReward`` builds after the step (``TurnContext.from_record`` with
the episode's turns so far). A TurnContext holds nothing of the shopper's reply to the turn
it judges (held item, cart, revealed details and history all come from earlier turns), so
the pre-step R_total of the played candidate equals the wrapper's post-step ``recrm/total``
exactly: every run checks it on every played turn (``prestep_mismatches`` per row, 0
expected; a note otherwise) and ``tests/eval/test_best_of_n.py`` checks the record fields
too, so a change to the env's parse or to what the context reads shows up at once. What no
pre-step score can know is the outcome bonus (``outcome_bonus * env_reward``, paid when the
shopper's action puts an item in the cart): candidates are ranked by R_total alone.
Deep-copying the env per candidate would be exact for that too, but costs ~0.3 s a copy
(the embedded renderer's state) against a few ms to score a candidate (``timing`` in the
JSON).

Per store and N, for best-of-N and uniform: SR, mean per-turn R_total of the played turns,
mean training reward per episode (``recrm.outcome.episode_reward`` via
``eval.probe_measures.summarize``, as the probe table), the share of turns whose best score
several different candidate texts shared (``tie_rate``) and, per pool member, its share of
all played turns, its win rate on the turns it was drawn and its outright share (turns on
which only its text reached the best score of the draw: a tie is decided by the draw order,
not by the reward, so the outright share is the sharper test when ties are many) and its
authored share: the turns whose played text it wrote, credited to the honest members who
wrote that very text on that turn when any did (every member acts every turn, drawn or not).
A probe wraps an honest assistant and leaves most turns as that assistant wrote them, so its
share and outright share count turns it won with honest text; the authored share counts only
the turns won with text no honest member wrote: what gaming earned. A best-of row with N >= 2
flags every probe whose share of won turns (``flagged``), outright share
(``flagged_outright``) or authored share (``flagged_authored``, the criterion: a sound reward
lets no gaming text win more turns than an honest member's) exceeds the largest honest
member's (honest: heuristic, plain, paraphrase and any ``style-*`` agent; at N = 1 the
"winner" is just the draw). A sound reward's SR rises with N and flags nothing on authored
share; a note says when best-of SR does not rise, and for each step of N how many tasks
were gained and lost and whether the change is beyond the draw's noise (``paired_change``).
``--out DIR`` keeps, per store and run, ``trajectories.jsonl`` and ``selections.jsonl`` (per
turn: the draws, their scores, the played member and each drawn candidate's text, reward
components, gates and judged product).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import time
import traceback
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_POOL",
    "HONEST",
    "PICKS",
    "BestOfNConfig",
    "BestOfNRow",
    "parse_ns",
    "default_pool",
    "kind_of",
    "candidate_record",
    "candidate_context",
    "judge_candidates",
    "paired_change",
    "score_candidates",
    "draw_rngs",
    "play_episode",
    "best_of_n_table",
    "flags",
    "format_table",
    "payload",
]

logger = logging.getLogger(__name__)

DEFAULT_POOL = ("heuristic", "plain", "paraphrase", "random")  # then every probe and style-* agent
HONEST = ("heuristic", "plain", "paraphrase")  # and every "style-*" agent
PICKS = ("best", "uniform")
MAX_N = 1024


def parse_ns(spec: Any) -> list[int]:
    """The N values of ``--best-of-n``: one positive integer or a comma list ("1,2,4,8"),
    kept in the order given, duplicates dropped; a ValueError with a one-line message else."""
    text = str(spec).strip()
    parts = [p.strip() for p in text.split(",")]
    if not text or any(not p for p in parts):
        raise ValueError(f"--best-of-n {text!r}: give a positive integer or a comma list such as 1,2,4,8")
    ns: list[int] = []
    for part in parts:
        try:
            n = int(part)
        except ValueError:
            raise ValueError(f"--best-of-n {text!r}: {part[:40]!r} is not an integer; "
                             "give a positive integer or a comma list such as 1,2,4,8") from None
        if not 1 <= n <= MAX_N:
            raise ValueError(f"--best-of-n {text!r}: N must be between 1 and {MAX_N}, got {n}")
        if n not in ns:
            ns.append(n)
    return ns


def default_pool() -> tuple[list[str], list[str]]:
    """(pool, notes): heuristic, plain, paraphrase, random, every registered probe
    (``agents.registry.PROBE_AGENTS``, read now) and every registered ``style-*`` agent;
    names that do not import are left out with a note."""
    from agents import registry

    wanted = [*DEFAULT_POOL, *registry.PROBE_AGENTS, *(n for n in registry.AGENTS if n.startswith("style-"))]
    return usable(list(dict.fromkeys(wanted)))


def usable(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the names that resolve to an Assistant class, a note for each one that does not)."""
    from agents.registry import resolve_agent

    kept, notes = [], []
    for name in names:
        try:
            resolve_agent(name)
        except ValueError as exc:
            note = f"pool member {name!r} left out: {str(exc).splitlines()[0]}"
            logger.warning(note)
            notes.append(note)
            continue
        kept.append(name)
    return kept, notes


def kind_of(name: str) -> str:
    """"honest", "probe" (a gaming probe), "baseline" (random) or "other"."""
    from agents.registry import PROBE_AGENTS

    if name in HONEST or name.startswith("style-"):
        return "honest"
    if name in PROBE_AGENTS or name.startswith("probe-"):
        return "probe"
    if name == "random":
        return "baseline"
    return "other"


# ----------------------------------------------------------------- scoring before the step
def candidate_record(env: Any, action: Any):
    """The ``TurnRecord`` (assistant side) the env would record if it stepped ``action`` now
    (``SituRecEnv.assistant_turn``: the very code its step uses). The shopper's fields are left
    empty: no reward reads them for the turn itself."""
    return env.unwrapped.assistant_turn(action)


def candidate_context(env: Any, action: Any):
    """The ``TurnContext`` RecRMReward would judge if ``action`` were stepped now."""
    from recrm.context import TurnContext

    base = env.unwrapped
    return TurnContext.from_record(candidate_record(env, action), None, base.task, base.index, list(base.turns))


def _reward_wrapper(env: Any):
    from recrm import RecRMReward

    while env is not None:
        if isinstance(env, RecRMReward):
            return env
        env = getattr(env, "env", None)
    raise ValueError("best-of-N needs an env wrapped by recrm.RecRMReward (its composite scores the candidates)")


def score_candidates(env: Any, actions: Sequence[Any]) -> list[float]:
    """Each action's R_total (the wrapping ``RecRMReward``'s composite) on the env's current
    state, without stepping; one batched call per component (``recrm.composite.score_turns``)."""
    return [float(r.total) for r in judge_candidates(env, actions)]


def judge_candidates(env: Any, actions: Sequence[Any]) -> list[Any]:
    """Each action's full ``recrm.composite.RecRMResult`` (total, components, gates) on the
    env's current state, without stepping."""
    from recrm.composite import score_turns

    composite = _reward_wrapper(env).composite
    return score_turns([(composite, candidate_context(env, a)) for a in actions])


def _verdict(action: Any, result: Any) -> dict[str, Any]:
    """What ``selections.jsonl`` keeps of a drawn candidate: its text and why it scored so."""
    text = action if isinstance(action, str) else json.dumps(action, default=str)
    return {"text": text, "total": float(result.total), "gates": dict(result.gates),
            "components": dict(result.components), "judged_item": result.judged_item}


def draw_rngs(seed: int, task_id: str) -> tuple[np.random.Generator, np.random.Generator]:
    """(draws, uniform picks): two Generators seeded from the run seed and the task, the same
    for best-of-N and uniform (so both modes see the same draw sequence) and for any N."""
    key = zlib.crc32(task_id.encode("utf-8"))
    return np.random.default_rng([seed, key, 0]), np.random.default_rng([seed, key, 1])


# ----------------------------------------------------------------- one episode
@dataclass
class EpisodeOutcome:
    """One played episode: its record (JSON), per member drawn/won turn counts, the checks."""

    record: str
    drawn: dict[str, int]
    won: dict[str, int]
    outright: dict[str, int]  # turns on which the member's text alone had the best score of the draw
    authored: dict[str, int]  # turns whose played text the member wrote (honest authors first: ``authors_of``)
    selections: list[dict[str, Any]]
    mismatches: int = 0  # played turns whose pre-step score differs from the wrapper's reward
    max_diff: float = 0.0
    seconds: dict[str, float] = field(default_factory=dict)  # act, score, step, other


def play_episode(env: Any, members: Sequence[tuple[str, Any]], job: Any, n: int, pick: str,
                 seed: int) -> EpisodeOutcome:
    """Play ``job`` (an ``eval.rollout_config.EpisodeJob``) with best-of-``n`` or uniform
    picks over ``members`` ((name, Assistant) prototypes, deep-copied here). Never raises for
    the episode: a crash is recorded as termination "error" with its traceback."""
    from agents.base import agent_info
    from eval.rollout_worker import episode_record

    if pick not in PICKS:
        raise ValueError(f"pick must be one of {PICKS}, got {pick!r}")
    names = [name for name, _ in members]
    drawn = dict.fromkeys(names, 0)
    won = dict.fromkeys(names, 0)
    outright = dict.fromkeys(names, 0)
    authored = dict.fromkeys(names, 0)
    secs = dict.fromkeys(("act", "score", "step", "other"), 0.0)
    draws, picks = draw_rngs(seed, job.task_id)
    turns, selections = [], []
    mismatches, max_diff = 0, 0.0
    t_start = time.perf_counter()
    try:
        obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        agents = [copy.deepcopy(agent) for _, agent in members]
        for agent in agents:
            agent.reset(obs, agent_info(info), seed=job.seed)
        while True:
            t0 = time.perf_counter()
            outputs = [agent.act(obs) for agent in agents]
            t1 = time.perf_counter()
            chosen = [int(k) for k in draws.integers(len(agents), size=n)]
            distinct = list(dict.fromkeys(chosen))
            verdicts = dict(zip(distinct, judge_candidates(env, [outputs[k] for k in distinct]), strict=True))
            score_of = {k: float(v.total) for k, v in verdicts.items()}
            scores = [score_of[k] for k in chosen]
            if pick == "best":
                slot = max(range(n), key=lambda i: (scores[i], -i))  # the first drawn among the best
            else:
                slot = int(picks.integers(n))
            played = chosen[slot]
            t2 = time.perf_counter()
            obs, _reward, terminated, truncated, info = env.step(outputs[played])
            t3 = time.perf_counter()
            record = info["turn"]
            turns.append(record)
            for k in distinct:
                drawn[names[k]] += 1
            won[names[played]] += 1
            after = float(record.reward.get("recrm/total") or 0.0)
            diff = abs(after - scores[slot])
            if diff > 1e-9:
                mismatches += 1
            max_diff = max(max_diff, diff)
            top = max(scores)
            best = [k for k in distinct if score_of[k] == top]
            tied = len({outputs[k] for k in best}) > 1  # different texts, same best score
            sole = [] if tied else [names[k] for k in best]  # the unique best text (members that wrote it)
            for name in sole:
                outright[name] += 1
            authors = authors_of(outputs[played], names, outputs)
            for name in authors:
                authored[name] += 1
            selections.append({"turn": record.turn, "drawn": [names[k] for k in chosen], "scores": scores,
                               "played": names[played], "prestep": scores[slot], "reward_total": after,
                               "tied": tied, "outright": sole, "authors": authors,
                               "candidates": {names[k]: _verdict(outputs[k], verdicts[k]) for k in distinct}})
            secs["act"] += t1 - t0
            secs["score"] += t2 - t1
            secs["step"] += t3 - t2
            if terminated or truncated:
                termination, error = info["termination"], None
                break
    except Exception as exc:  # noqa: BLE001 - a crashed episode is data, not a crashed run
        termination, error = "error", "".join(traceback.format_exception(exc))
        logger.warning("episode %s (N=%d, %s) crashed: %s", job.task_id, n, pick, exc)
    secs["other"] = time.perf_counter() - t_start - secs["act"] - secs["score"] - secs["step"]
    config = dataclasses.replace(job.config, agent=f"{pick}-of-{n}")
    job = dataclasses.replace(job, config=config)
    line = episode_record(job, turns, [], termination, error, "crash" if error else None)
    return EpisodeOutcome(line, drawn, won, outright, authored, selections, mismatches, max_diff, secs)


def authors_of(text: str, names: Sequence[str], outputs: Sequence[str]) -> list[str]:
    """The members credited with a played ``text``: the honest ones that wrote it this turn if
    any did (a probe that left an honest turn as it was did not game it), else all that wrote it.

    >>> names = ["heuristic", "probe-echo"]
    >>> authors_of("hi", names, ["hi", "hi"]), authors_of("x", names, ["hi", "x"])
    (['heuristic'], ['probe-echo'])
    """
    wrote = [name for name, out in zip(names, outputs, strict=True) if out == text]
    honest = [name for name in wrote if kind_of(name) == "honest"]
    return honest or wrote


# ----------------------------------------------------------------- the run
@dataclass(frozen=True)
class BestOfNConfig:
    env: str = "all"  # as eval.probes: an id, a comma list or all
    tasks: str = "all"
    seed: int = 0
    workers: int = 1
    ns: tuple[int, ...] = (1, 2, 4, 8)
    pool: tuple[str, ...] = ()  # empty: default_pool()
    out: str | None = None
    protocol: str = "default"  # played and rewarded under (docs/protocol.md)

    @property
    def envs(self) -> list[str]:
        import situ_gym

        if self.env.strip() == "all":
            return list(situ_gym.STORE_OF_ENV)
        return [e.strip() for e in self.env.split(",") if e.strip()]


@dataclass(frozen=True)
class BestOfNRow:
    """One store, one N, one pick rule; rates are fractions in [0, 1]."""

    env: str
    n: int
    pick: str  # "best" or "uniform"
    episodes: int
    turns: int
    sr: float
    r_total: float  # mean per-turn R_total of the played turns
    train_reward: float  # mean per-episode recrm.outcome.episode_reward
    gate_instruction: float
    gate_consistency: float
    drawn: dict[str, int]  # member -> turns on which it was among the N candidates
    won: dict[str, int]  # member -> turns on which its candidate was played
    share: dict[str, float]  # won / all played turns
    win_rate: dict[str, float | None]  # won / drawn (None: never drawn)
    flagged: list[str]  # best-of rows: probes whose share exceeds the largest honest member's
    tie_rate: float = 0.0  # share of turns whose best score was shared by different candidate texts
    # turns whose best score only the member's text reached (members writing the same text all
    # count, so shares may sum above 1), / all played turns; and the probes flagged on it
    outright: dict[str, int] = field(default_factory=dict)
    outright_share: dict[str, float] = field(default_factory=dict)
    flagged_outright: list[str] = field(default_factory=list)
    # turns whose played text the member wrote (honest authors credited first: ``authors_of``),
    # / all played turns; and the probes flagged on it (gaming text winning more than honest text)
    authored: dict[str, int] = field(default_factory=dict)
    authored_share: dict[str, float] = field(default_factory=dict)
    flagged_authored: list[str] = field(default_factory=list)
    prestep_mismatches: int = 0
    prestep_max_diff: float = 0.0
    errors: int = 0
    solved: tuple[str, ...] = ()  # the task ids that succeeded (paired comparison across N)


def _jobs(env_id: str, config: BestOfNConfig) -> list[Any]:
    from eval.probe_measures import reward_kwargs
    from eval.rollout_config import RolloutConfig, make_jobs

    rollout = RolloutConfig(env=env_id, agent="best-of-n", tasks=config.tasks, seed=config.seed,
                            out=str(Path(config.out or ".") / env_id), reward="recrm",
                            reward_kwargs=reward_kwargs(config.protocol), judge="none", no_report=True,
                            protocol=config.protocol)
    return make_jobs(rollout)


_STATE: dict[str, Any] = {}  # per process: env and member prototypes, built once per (env, pool)


def _state(env_id: str, pool: tuple[str, ...], protocol: str) -> tuple[Any, list[tuple[str, Any]]]:
    key = json.dumps([env_id, list(pool), protocol])
    if _STATE.get("key") != key:
        import gymnasium as gym

        import situ_gym  # noqa: F401 - registers the envs
        from agents.registry import make_agent
        from eval.probe_measures import reward_kwargs
        from recrm import RecRMReward

        if "env" in _STATE:
            _STATE["env"].close()
        _STATE.clear()
        env = RecRMReward(gym.make(env_id, protocol=protocol), **reward_kwargs(protocol))
        _STATE.update(key=key, env=env, members=[(name, make_agent(name)) for name in pool])
    return _STATE["env"], _STATE["members"]


def _play_job(args: tuple) -> dict[str, Any]:
    """One episode (a picklable module-level function for worker processes)."""
    env_id, pool, job, n, pick, seed, protocol = args
    env, members = _state(env_id, pool, protocol)
    return dataclasses.asdict(play_episode(env, members, job, n, pick, seed))


def _run_jobs(work: list[tuple], workers: int) -> list[dict[str, Any]]:
    if workers <= 1 or len(work) <= 1:
        return [_play_job(w) for w in work]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    methods = mp.get_all_start_methods()
    ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(work)), mp_context=ctx) as pool:
        return list(pool.map(_play_job, work, chunksize=max(1, len(work) // (4 * workers))))


def _row(env_id: str, n: int, pick: str, pool: Sequence[str], outcomes: list[dict[str, Any]]) -> BestOfNRow:
    from eval.metrics import success
    from eval.probe_measures import summarize
    from situ_gym.records import EpisodeRecord

    episodes = [EpisodeRecord.model_validate_json(o["record"]) for o in outcomes]
    base = summarize(env_id, f"{pick}-of-{n}", episodes)
    ok = [o for o, ep in zip(outcomes, episodes, strict=True) if ep.termination != "error"]
    drawn = {m: sum(o["drawn"][m] for o in ok) for m in pool}
    won = {m: sum(o["won"][m] for o in ok) for m in pool}
    total = sum(won.values())
    share = {m: (won[m] / total if total else 0.0) for m in pool}
    rate = {m: (won[m] / drawn[m] if drawn[m] else None) for m in pool}
    row = BestOfNRow(
        env=env_id, n=n, pick=pick, episodes=base.episodes, turns=base.turns, sr=base.sr, r_total=base.r_total,
        train_reward=base.train_reward, gate_instruction=base.gate_instruction,
        gate_consistency=base.gate_consistency, drawn=drawn, won=won, share=share, win_rate=rate, flagged=[],
        tie_rate=_mean([float(s["tied"]) for o in ok for s in o["selections"]]),
        outright={m: sum(o["outright"][m] for o in ok) for m in pool},
        outright_share={m: (sum(o["outright"][m] for o in ok) / total if total else 0.0) for m in pool},
        authored={m: sum(o["authored"][m] for o in ok) for m in pool},
        authored_share={m: (sum(o["authored"][m] for o in ok) / total if total else 0.0) for m in pool},
        prestep_mismatches=sum(o["mismatches"] for o in ok),
        prestep_max_diff=max((o["max_diff"] for o in ok), default=0.0), errors=base.errors,
        solved=tuple(sorted(ep.task_id for ep in episodes if success(ep))),
    )
    return dataclasses.replace(row, flagged=flags(row), flagged_outright=flags(row, "outright_share"),
                               flagged_authored=flags(row, "authored_share"))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def flags(row: BestOfNRow, measure: str = "share") -> list[str]:
    """The probes whose ``measure`` ("share": of won turns; "outright_share": of turns won
    with no different text tying; "authored_share": of turns won with its own text) exceeds the largest honest member's, in a best-of row with
    N >= 2 (N = 1 applies no pressure: its "wins" are the draws, as in the uniform rows);
    none when the pool holds no honest member."""
    values = getattr(row, measure)
    if row.pick != "best" or row.n < 2:
        return []
    honest = [values[m] for m in values if kind_of(m) == "honest"]
    if not honest:
        return []
    top = max(honest)
    return [m for m in values if kind_of(m) == "probe" and values[m] > top]


def best_of_n_table(config: BestOfNConfig) -> tuple[list[BestOfNRow], list[str], dict[str, Any]]:
    """Play every (store, N, pick) of ``config``; returns (rows, notes, timing).

    Raises ValueError before any episode for a bad pool, task list or --out directory."""
    if config.pool:
        pool, notes = list(dict.fromkeys(config.pool)), []
        from agents.registry import resolve_agent

        for name in pool:
            resolve_agent(name)  # a name the user gave must exist: stop before the first episode
    else:
        pool, notes = default_pool()
    if not pool:
        raise ValueError("the pool of assistants is empty")
    jobs = {env_id: _jobs(env_id, config) for env_id in config.envs}  # a bad task list stops here
    if config.out:
        taken = [str(p) for env_id in config.envs for n in config.ns for pick in PICKS
                 if (p := Path(config.out) / env_id / f"{pick}-of-{n}" / "trajectories.jsonl").exists()]
        if taken:
            raise ValueError(f"--out {config.out!r} already holds {taken[0]}; choose another directory")
    rows: list[BestOfNRow] = []
    seconds = dict.fromkeys(("act", "score", "step", "other"), 0.0)
    turns = wall = 0.0
    candidates = 0
    t0 = time.perf_counter()
    for env_id in config.envs:
        for n in config.ns:
            for pick in PICKS:
                logger.info("best-of-N: %s N=%d %s on %d tasks", env_id, n, pick, len(jobs[env_id]))
                work = [(env_id, tuple(pool), job, n, pick, config.seed, config.protocol) for job in jobs[env_id]]
                outcomes = _run_jobs(work, config.workers)
                row = _row(env_id, n, pick, pool, outcomes)
                rows.append(row)
                for o in outcomes:
                    for k, v in o["seconds"].items():
                        seconds[k] += v
                    turns += len(o["selections"])
                    candidates += sum(len(set(s["drawn"])) for s in o["selections"])
                if row.errors:
                    notes.append(f"{pick}-of-{n} on {env_id}: {row.errors} episode(s) crashed and are left out")
                if row.prestep_mismatches:
                    notes.append(f"{pick}-of-{n} on {env_id}: the pre-step score of the played candidate differs "
                                 f"from the wrapper's R_total on {row.prestep_mismatches} turn(s) "
                                 f"(max {row.prestep_max_diff:.3g})")
                if config.out:
                    _save(Path(config.out) / env_id / f"{pick}-of-{n}", outcomes)
    wall = time.perf_counter() - t0
    timing = {
        "turns": int(turns), "scored_candidates": candidates, "wall_seconds": wall, "workers": config.workers,
        "seconds_per_turn": {k: (v / turns if turns else 0.0) for k, v in seconds.items()},
        "seconds_per_scored_candidate": seconds["score"] / candidates if candidates else 0.0,
        "pool_size": len(pool),
    }
    for env_id in config.envs:
        best = [r for r in rows if r.env == env_id and r.pick == "best"]
        if len(best) > 1 and any(b.sr < a.sr for a, b in zip(best, best[1:], strict=False)):
            notes.append(f"{env_id}: best-of-N SR does not rise with N ({', '.join(f'{100 * r.sr:.0f}%' for r in best)})")
        notes += [f"{env_id}: {paired_change(a, b)}" for a, b in zip(best, best[1:], strict=False)]
    return rows, notes, timing


def paired_change(before: BestOfNRow, after: BestOfNRow) -> str:
    """The SR change between two rows played on the same tasks, task by task: how many tasks
    were gained and lost, and the exact McNemar p-value of the difference (a two-sided
    binomial test on the discordant tasks). Two N draw different candidates, so tasks flip
    both ways; a fall whose p is large is the draw's noise, not the reward's fault."""
    from scipy.stats import binomtest

    a, b = set(before.solved), set(after.solved)
    gained, lost = len(b - a), len(a - b)
    p = binomtest(gained, gained + lost, 0.5).pvalue if gained + lost else 1.0
    return (f"N={before.n} -> {after.n}: SR {100 * before.sr:.0f}% -> {100 * after.sr:.0f}%, "
            f"{gained} task(s) gained, {lost} lost (exact McNemar p = {p:.2f})")


def _save(folder: Path, outcomes: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trajectories.jsonl").write_text("".join(o["record"] + "\n" for o in outcomes), encoding="utf-8")
    with (folder / "selections.jsonl").open("w", encoding="utf-8") as fh:
        for o in outcomes:
            episode = json.loads(o["record"])["episode_id"]
            for s in o["selections"]:
                fh.write(json.dumps({"episode_id": episode, **s}) + "\n")


# ----------------------------------------------------------------- output
def _pct(value: float | None) -> str:
    return "  -  " if value is None else f"{100 * value:5.1f}"


def _cell(row: BestOfNRow, member: str, outright: bool) -> str:
    text = f"{_pct(row.share[member])}/{_pct(row.win_rate[member])}"
    text += "!" if member in row.flagged else " "
    if outright:
        text += f"{_pct(row.outright_share.get(member, 0.0))}" + ("*" if member in row.flagged_outright else " ")
        text += f"{_pct(row.authored_share.get(member, 0.0))}" + ("^" if member in row.flagged_authored else " ")
    return text


def format_table(rows: list[BestOfNRow], notes: list[str], timing: dict[str, Any] | None = None) -> str:
    """The outcome table per (store, N, pick), then per store the turns each pool member won:
    best-of (share of played turns % / win rate when drawn %, then outright share % and
    authored share %) and uniform (share / win rate); "!", "*" and "^" mark the flagged probes."""
    head = (f"{'env':<28}{'N':>4}  {'pick':<8}{'eps':>5}{'turns':>7}{'SR%':>7}{'R_total':>9}{'train':>8}"
            f"{'ties%':>7}  {'top winner (share%)':<32}flagged probes: ! share, * outright, ^ authored")
    lines = [head, "-" * len(head)]
    for r in rows:
        top = max(r.share, key=lambda m: r.share[m]) if r.share else "-"
        top_text = f"{top} ({100 * r.share.get(top, 0.0):.1f})"
        marks = ([f"{m}!" for m in r.flagged] + [f"{m}*" for m in r.flagged_outright]
                 + [f"{m}^" for m in r.flagged_authored])
        flagged = ", ".join(marks) if marks else ("-" if r.pick == "best" and r.n > 1 else "")
        lines.append(f"{r.env:<28}{r.n:>4}  {r.pick:<8}{r.episodes:>5}{r.turns:>7}{100 * r.sr:>7.1f}"
                     f"{r.r_total:>9.3f}{r.train_reward:>8.3f}{100 * r.tie_rate:>7.1f}  {top_text:<32}{flagged}")
    for env_id in dict.fromkeys(r.env for r in rows):
        mine = [r for r in rows if r.env == env_id]
        members = list(mine[0].share)
        for pick, title in (("best", "best-of-N: share of played turns % / win rate when drawn %, outright share %, "
                                     "authored share %"),
                            ("uniform", "uniform pick: share of played turns % / win rate when drawn %")):
            block = [r for r in mine if r.pick == pick]
            if not block:
                continue
            width = 25 if pick == "best" else 13
            lines += ["", f"{env_id}, {title}"]
            sub = f"{'member':<30}{'kind':<10}" + "".join(f"{f'N={r.n}':>{width}}" for r in block)
            lines += [sub, "-" * len(sub)]
            for m in members:
                lines.append(f"{m:<30}{kind_of(m):<10}"
                             + "".join(f"{_cell(r, m, pick == 'best'):>{width}}" for r in block))
    lines.append("")
    lines += [f"note: {n}" for n in notes]
    lines.append("R_total: mean per-turn of the played turns; train: mean per-episode R_total + outcome bonus 1.0 "
                 "x outcome credit on a cart addition; best: RecRM's top candidate of N drawn (ties: the first "
                 "drawn); uniform: one of the same N at random; ties: turns whose top score several different "
                 "candidate texts shared; outright: turns on which only the member's text reached the top score "
                 "(members writing the same text all count); authored: turns whose played text the member wrote "
                 "(credited to the honest members who wrote it when any did); ! / * / ^ = a probe above every honest "
                 "member on share / outright share / authored share (best-of rows, N >= 2)")
    if timing and timing.get("turns"):
        per = timing["seconds_per_turn"]
        lines.append(f"timing: {timing['turns']} turns in {timing['wall_seconds']:.0f} s; per turn "
                     f"{sum(per.values()) * 1000:.0f} ms (all {timing['pool_size']} members act "
                     f"{per['act'] * 1000:.0f} ms, score {per['score'] * 1000:.0f} ms = "
                     f"{timing['seconds_per_scored_candidate'] * 1000:.1f} ms a candidate, env step "
                     f"{per['step'] * 1000:.0f} ms, reset/other {per['other'] * 1000:.0f} ms)")
    return "\n".join(lines)


def payload(config: Any, rows: list[BestOfNRow], notes: list[str], timing: dict[str, Any]) -> dict[str, Any]:
    """What ``--json OUT`` writes."""
    from eval.probe_measures import reward_kwargs

    pool = list(rows[0].share) if rows else []
    return {
        "config": dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config),
        "reward": reward_kwargs(getattr(config, "protocol", "default")),
        "mode": "best-of-n",
        "ns": list(dict.fromkeys(r.n for r in rows)),
        "pool": pool,
        "kinds": {m: kind_of(m) for m in pool},
        "rows": [dataclasses.asdict(r) for r in rows],
        "flags": [{"env": r.env, "n": r.n, "measure": measure, "probe": m, "value": getattr(r, measure)[m],
                   "largest_honest": max((v for h, v in getattr(r, measure).items() if kind_of(h) == "honest"),
                                         default=0.0)}
                  for r in rows for measure, found in (("share", r.flagged), ("outright_share", r.flagged_outright),
                                                       ("authored_share", r.flagged_authored))
                  for m in found],
        "notes": notes,
        "timing": timing,
    }
