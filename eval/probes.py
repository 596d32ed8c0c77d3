"""Probe table: does RecRM pay assistants that game it more than an honest one?

    python -m eval.probes --env SituRec-Supermarket-v0 --tasks all [--workers N] [--seed S] \\
        [--json OUT] [--assistants heuristic,plain,probe-echo,...] [--out DIR]

Plays every probe assistant (``agents.probes``, registered as ``probe-*``) next to
"heuristic" and the honest "plain" assistant (skipped with a note when it is not
registered) on real episodes, through ``eval.rollout.run`` with the env wrapped by
``recrm.RecRMReward(variant="full", outcome_bonus=1.0)``, and prints per assistant: the
mean per-turn ``R_total``, the per-episode training reward (mean per-turn ``R_total`` +
the outcome bonus on a cart addition: ``recrm.outcome.episode_reward``, what GSPO
trains on), the gate pass rates (instruction, consistency) and SR. A probe that is not
below the reference (heuristic, the assistant the probes wrap, else plain) on a measure is flagged in the last column.
``--env all`` plays both stores. Deterministic under ``--seed``.

``--best-of-n 1,2,4,8`` (or one N) plays optimisation pressure instead (``eval.best_of_n``):
each turn RecRM's favourite of N candidates drawn from a pool of assistants (``--assistants``,
default heuristic, plain, paraphrase, random and every probe) is played, next to a uniform
pick among the same N; per store and N it prints SR, R_total, training reward and the turns
each member won, flagging a probe that wins more than every honest member.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from eval.probe_measures import REWARD_KWARGS, ProbeRow, reward_kwargs, summarize
from situ_gym.cli import fail
from situ_gym.protocol import check_protocol
from situ_gym.records import EpisodeRecord

__all__ = [
    "REWARD_KWARGS",
    "REFERENCES",
    "ProbeConfig",
    "ProbeRow",
    "default_assistants",
    "play",
    "summarize",
    "reference_of",
    "gaming",
    "probe_table",
    "format_table",
    "main",
]

logger = logging.getLogger(__name__)

# Assistants the probes are measured against, the first one present being the reference.
REFERENCES = ("heuristic", "plain")  # the probes wrap the heuristic: it is the honest turn each one games
MEASURES = ("r_total", "train_reward")


@dataclass
class ProbeConfig:
    env: str = field(default="all", metadata={"help": "env id, comma list of ids, or all (both stores)"})
    tasks: str = field(default="all", metadata={"help": "all | A-B (bank positions, inclusive) | id,id,..."})
    workers: int = field(default=1, metadata={"help": "worker processes per run (as eval.rollout)"})
    seed: int = field(default=0, metadata={"help": "episode seed (as eval.rollout)"})
    assistants: str = field(
        default="", metadata={"help": "comma list of agent names (default: heuristic, plain and every probe)"}
    )
    json: str | None = field(default=None, metadata={"help": "also write the table as JSON to this file"})
    out: str | None = field(
        default=None, metadata={"help": "keep the trajectories under DIR/<env>/<assistant> (default: discarded)"}
    )
    protocol: str = field(
        default="default", metadata={"help": "default | paper: the protocol the episodes are played and "
                                             "rewarded under (docs/protocol.md)"}
    )
    best_of_n: str | None = field(
        default=None, metadata={"help": "N or a comma list (1,2,4,8): play best-of-N picks by RecRM over the pool "
                                        "--assistants (eval.best_of_n) instead of the probe table"}
    )

    def __post_init__(self):
        import situ_gym

        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers!r}")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed!r}")
        unknown = [e for e in self.envs if e not in situ_gym.STORE_OF_ENV]
        if unknown or not self.envs:
            raise ValueError(f"unknown env {unknown or self.env!r}; choose all or from {list(situ_gym.STORE_OF_ENV)}")
        check_protocol(self.protocol)
        if self.json is not None and not Path(self.json).absolute().parent.is_dir():
            raise ValueError(f"--json {self.json!r}: its directory does not exist")
        if self.best_of_n is not None:
            from eval.best_of_n import parse_ns

            parse_ns(self.best_of_n)

    @property
    def envs(self) -> list[str]:
        import situ_gym

        if self.env.strip() == "all":
            return list(situ_gym.STORE_OF_ENV)
        return [e.strip() for e in self.env.split(",") if e.strip()]


def default_assistants() -> tuple[list[str], list[str]]:
    """(assistants to play, notes): the references present in the registry, then every probe."""
    from agents.registry import AGENTS, PROBE_AGENTS

    names, notes = [], []
    for name in ("heuristic", "plain"):
        if name in AGENTS:
            names.append(name)
        else:
            notes.append(f"{name!r} is not registered in agents.registry: skipped")
    return names + list(PROBE_AGENTS), notes


def play(env: str, assistant: str, config: ProbeConfig, run_dir: Path) -> list[EpisodeRecord]:
    """The episodes of ``assistant`` on ``env`` (task order), played by ``eval.rollout.run``."""
    from eval.io import read_episodes, task_order
    from eval.rollout import RolloutConfig, run

    rollout = RolloutConfig(
        env=env, agent=assistant, tasks=config.tasks, workers=config.workers, seed=config.seed,
        out=str(run_dir), reward="recrm", reward_kwargs=reward_kwargs(config.protocol), judge="none", no_report=True,
        protocol=config.protocol,
    )
    run(rollout, argv=[])
    return task_order(read_episodes(run_dir / "trajectories.jsonl"))


def reference_of(rows: list[ProbeRow]) -> str | None:
    """The assistant every probe must stay below: the heuristic they wrap when it was played, else plain."""
    played = {r.assistant for r in rows}
    return next((name for name in REFERENCES if name in played), None)


def gaming(rows: list[ProbeRow]) -> list[tuple[str, str, str, float, float]]:
    """(env, probe, measure, probe value, reference value) for every probe that is not
    strictly below the reference on a measure in an env: the reward bugs to fix."""
    ref_name = reference_of(rows)
    ref = {r.env: r for r in rows if r.assistant == ref_name}
    found = []
    for r in rows:
        if r.assistant in REFERENCES or r.env not in ref:
            continue
        for measure in MEASURES:
            mine, theirs = getattr(r, measure), getattr(ref[r.env], measure)
            if mine >= theirs:
                found.append((r.env, r.assistant, measure, mine, theirs))
    return found


def probe_table(config: ProbeConfig) -> tuple[list[ProbeRow], list[str]]:
    """Play every assistant of ``config`` in every env; returns (rows, notes).

    Raises ValueError before any episode when an assistant or the task list is wrong."""
    from agents.registry import resolve_agent

    if config.assistants.strip():
        names, notes = [a.strip() for a in config.assistants.split(",") if a.strip()], []
    else:
        names, notes = default_assistants()
    for name in names:
        resolve_agent(name)  # an unknown name stops the command before the first episode
    if config.out:
        taken = [str(p) for env in config.envs for n in names
                 if (p := Path(config.out) / env / n.replace(":", "_") / "trajectories.jsonl").exists()]
        if taken:
            raise ValueError(f"--out {config.out!r} already holds {taken[0]}; choose another directory")
    rows = []
    with tempfile.TemporaryDirectory(prefix="recrm-probes-") as tmp:
        root = Path(config.out) if config.out else Path(tmp)
        for env in config.envs:
            for name in names:
                logger.info("playing %s on %s", name, env)
                episodes = play(env, name, config, root / env / name.replace(":", "_"))
                row = summarize(env, name, episodes)
                if row.errors:
                    notes.append(f"{name} on {env}: {row.errors} episode(s) crashed and are left out")
                rows.append(row)
    return rows, notes


def format_table(rows: list[ProbeRow], notes: list[str]) -> str:
    """A plain-text table; the last column names the measures on which a probe is not
    below the reference (R = per-turn R_total, T = training reward)."""
    flags: dict[tuple[str, str], str] = {}
    for env, probe, measure, _, _ in gaming(rows):
        flags[(env, probe)] = flags.get((env, probe), "") + ("R" if measure == "r_total" else "T")
    ref = reference_of(rows)
    head = (f"{'env':<28}{'assistant':<28}{'eps':>5}{'turns':>7}{'R_total':>9}{'train':>8}"
            f"{'C_inst%':>9}{'C_cons%':>9}{'SR%':>7}  not below {ref}")
    lines = [head, "-" * len(head)]
    for r in rows:
        flag = "" if r.assistant in REFERENCES else flags.get((r.env, r.assistant), "-")
        lines.append(
            f"{r.env:<28}{r.assistant:<28}{r.episodes:>5}{r.turns:>7}{r.r_total:>9.3f}{r.train_reward:>8.3f}"
            f"{100 * r.gate_instruction:>9.1f}{100 * r.gate_consistency:>9.1f}{100 * r.sr:>7.1f}  {flag}"
        )
    lines += [f"note: {n}" for n in notes]
    lines.append("R_total: mean per-turn; train: mean per-episode R_total + outcome bonus 1.0 on a cart addition")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.probes", description=__doc__.split("\n")[0])
    for f in dataclasses.fields(ProbeConfig):
        kind = int if f.type in ("int", int) else str
        parser.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default,
                            help=f"{f.metadata['help']} (default: {f.default})")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = ProbeConfig(**vars(args))
        if config.best_of_n is not None:
            return _best_of_n(config)
        rows, notes = probe_table(config)
    except ValueError as exc:  # a bad option, agent or task list (eval.rollout's ConfigError too)
        fail(parser, str(exc).splitlines()[0])
    except RuntimeError as exc:  # eval.rollout.RunStopped, a dead worker
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    print(format_table(rows, notes))
    if config.json:
        payload = {"config": dataclasses.asdict(config), "reward": reward_kwargs(config.protocol), "reference": reference_of(rows),
                   "rows": [dataclasses.asdict(r) for r in rows], "notes": notes,
                   "gaming": [dict(zip(("env", "probe", "measure", "value", "reference_value"), g, strict=True))
                              for g in gaming(rows)]}
        Path(config.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


def _best_of_n(config: ProbeConfig) -> int:
    """``--best-of-n``: the table of ``eval.best_of_n`` (a ValueError goes to ``main``)."""
    from eval import best_of_n

    bon = best_of_n.BestOfNConfig(
        env=config.env, tasks=config.tasks, seed=config.seed, workers=config.workers,
        ns=tuple(best_of_n.parse_ns(config.best_of_n)),
        pool=tuple(a.strip() for a in config.assistants.split(",") if a.strip()), out=config.out,
        protocol=config.protocol,
    )
    rows, notes, timing = best_of_n.best_of_n_table(bon)
    print(best_of_n.format_table(rows, notes, timing))
    if config.json:
        data = best_of_n.payload(config, rows, notes, timing)
        Path(config.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
