"""Resumable parallel rollout runner: agent x tasks x repeats -> trajectories.jsonl + report.

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic --user rule \\
        --tasks all --workers 2 --seed 0 --repeats 1 --out runs/sm_heuristic [--resume] \\
        [--save-frames] [--max-turns 20] [--reward recrm|none] [--model PATH] [--batch-size B] \\
        [--max-consecutive-errors 5] [--executor inline|process|ray] [--ray-address ADDRESS]

Episodes are played by ``eval.runner.play_batch`` in chunks of ``--batch-size`` jobs, which
an executor (``eval.executors``) runs in this process, in ``--workers`` local processes or
on Ray (a local Ray, or the cluster at ``--ray-address``); each worker builds its own envs
and assistant. The parent alone appends each finished episode as one JSON line (flush +
fsync) and, at the end, rewrites the file in (task, repeat) order. Episode (task, repeat)
uses seed ``seed + repeat`` with the env re-seeded at every reset, so trajectories.jsonl
and metrics.json do not depend on the executor or the worker count. The env and agent
are built and reset once before the first episode: a setup fault stops the command
(exit 2, one line) and leaves the run directory untouched. A crashed episode is saved with termination "error" and its
traceback; ``--max-consecutive-errors`` crashes in a row stop the run (exit 1).
``--resume`` skips (task, repeat) pairs already in the file and retries crashed ones
(their records move to errors.jsonl). At the end: metrics.json, report.md, plots and the
HTML viewer in the run directory, all in (task, repeat) order.

LLM roles (model SPEC: ``hf:gguf:smollm2`` | ``hf:PATH_OR_HUB_ID`` | ``hf:gguf:FILE`` |
``openai:NAME``, see ``situ_gym.llm.factory``): ``--user llm --user-model SPEC
[--user-base-url URL]``, ``--moderator llm [--moderator-model SPEC]`` (default: the
user's), ``--judge llm --judge-model SPEC [--judge-base-url URL]``, ``--agent openai
--model NAME --base-url URL`` or ``--agent chat --model SPEC``; ``--images`` sends
Set-of-Mark images to chat backends. Responses are cached in ``--llm-cache`` (default
``~/.cache/situ_gym/llm_responses.sqlite``; ``none`` disables), keyed by the whole request,
so a rerun replays them; tokens, seconds, cache hits/misses, re-asks and fallbacks per role
go to ``llm_usage.jsonl`` and from there into metrics.json, report.md and config.json. An
unreachable endpoint is a setup fault (exit 2 before the first episode); one that dies
mid-run stops the run (exit 1) once the episodes in flight are saved as crashed, and
``--resume`` retries them.

``--batch-size B`` plays B episodes in lock-step per worker with one ``act_batch`` per
turn (one batched ``generate`` for ``--agent hf``). Rule-based agents give the same
episodes as B = 1; sampled model outputs may depend on the batch composition. The flags
are the fields of ``RolloutConfig``, parsed by ``transformers.HfArgumentParser``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import platform
import sys
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # no flock on this platform (Windows): run directories go unguarded
    fcntl = None

from agents.base import agent_info
from eval.executors import ChunkFailed, WorkerDied, make_executor
from eval.io import (
    append_episode,
    done_keys,
    drop_truncated_tail,
    move_error_episodes,
    read_episodes,
    retried_on_resume,
    sort_episode_file,
    task_order,
)
from eval.rollout_config import (
    IDENTITY,
    ConfigError,
    EpisodeJob,
    RolloutConfig,
    executor_of,
    judge_kwargs,
    llm_roles,
    llm_settings,
    make_jobs,
    select_tasks,
)
from eval.rollout_worker import episode_record, forget_state, play_jobs, worker_state
from situ_gym import jsonl
from situ_gym.cli import setup_logging
from situ_gym.llm.errors import EPISODE_CAUSES, EpisodeError
from situ_gym.records import EpisodeRecord

__all__ = ["RolloutConfig", "EpisodeJob", "ConfigError", "RunStopped", "select_tasks", "run", "finalize",
           "run_status", "parser", "main", "EXIT_OK", "EXIT_STOPPED", "EXIT_SETUP", "EXIT_EPISODE_ERRORS",
           "EXIT_FALLBACKS"]

logger = logging.getLogger(__name__)


# Exit statuses of ``python -m eval.rollout``.
EXIT_OK = 0
EXIT_STOPPED = 1  # the run stopped early: a dead endpoint, crashes in a row, a dead worker
EXIT_SETUP = 2  # nothing ran: a bad flag, an unreachable endpoint, a prompt beyond the context
EXIT_EPISODE_ERRORS = 3  # the run finished, but some episodes ended in error (the report says why)
EXIT_FALLBACKS = 4  # the run finished, but an LLM role fell back on more than --max-fallback-rate


class RunStopped(RuntimeError):
    """The run stopped early: an endpoint died, or too many episodes crashed in a row (an
    infrastructure fault, not agent behaviour)."""


def _versions() -> dict[str, str]:
    import gymnasium
    import numpy

    import situ_gym

    return {"situ_gym": getattr(situ_gym, "__version__", "?"), "gymnasium": gymnasium.__version__,
            "numpy": numpy.__version__, "python": sys.version.split()[0], "platform": platform.platform()}


def _check_reward(config: RolloutConfig) -> None:
    if config.reward != "recrm":
        return
    try:
        from recrm import RecRMReward  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"--reward recrm needs recrm.RecRMReward, which is not importable ({exc})") from exc


def _check_config(config: RolloutConfig, out: Path) -> None:
    """Refuse a resume whose setup differs from the run directory's (reads, never writes)."""
    path = out / "config.json"
    if not (config.resume and path.exists()):
        return
    try:
        previous = jsonl.loads(path.read_text(encoding="utf-8")).get("config", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    current = dataclasses.asdict(config)
    changed = {k: (previous.get(k), current[k]) for k in IDENTITY if previous.get(k, current[k]) != current[k]}
    if changed:
        raise ConfigError(f"--resume with a different setup than {path}: {changed}")


def _write_config(config: RolloutConfig, out: Path, argv: list[str] | None) -> None:
    payload = {"config": dataclasses.asdict(config), "versions": _versions(),
               "argv": argv if argv is not None else sys.argv}
    (out / "config.json").write_text(json.dumps(payload, indent=2, sort_keys=True, default=str), encoding="utf-8")


def _check_out(out: Path) -> None:
    """The run directory can be created and written (checked before anything is written: a
    probe file is created and removed in it, or in the nearest existing folder above it, since
    permission bits do not tell, e.g. to root under /proc or /sys)."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {str(out)!r} exists and is not a directory")
    parent = out if out.exists() else out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"--out {str(out)!r} cannot be created: {str(parent)!r} is not a directory")
    try:
        probe = tempfile.mkdtemp(prefix=".situ-probe-", dir=parent)
        os.rmdir(probe)
    except OSError as exc:
        what = "is not writable" if parent == out else f"cannot be created in {str(parent)!r}"
        raise ConfigError(f"--out {str(out)!r} {what}: {exc.strerror or exc}") from None


def _check_setup(config: RolloutConfig, job: EpisodeJob, chunks: int) -> None:
    """Build the env and the agent once and reset both on the first pending task, so that a
    configuration fault stops the command before any episode is recorded."""
    try:
        (env,), agent = worker_state(config)
        obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        agent.reset(obs, agent_info(info), seed=job.seed)
        check = getattr(agent, "check_first_prompt", None)
        if check is not None:  # a prompt beyond the model's context fails every episode: say so now
            from situ_gym.llm import METER

            with METER.logging_to(None):  # the run directory stays untouched until it runs
                check(obs)
    except EpisodeError as exc:
        forget_state()
        raise ConfigError(f"{config.agent} on {config.env}: the first prompt of task {job.task_id} does not fit: "
                          f"{exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any failure here is a setup fault
        forget_state()
        detail = str(exc).strip().splitlines()
        raise ConfigError(
            f"cannot start {config.agent!r} on {config.env!r}: {type(exc).__name__}: {detail[0] if detail else ''}"
        ) from exc
    if executor_of(config, chunks) != "inline":  # workers build their own; free the parent's copy
        forget_state()


def _check_llm(config: RolloutConfig) -> None:
    """Every LLM role's endpoint answers / model file exists, before the first episode."""
    from situ_gym.llm import BackendUnavailable, check_backend, configure

    configure(llm_settings(config))  # the parent's own calls (setup checks, the judge) use the run's settings
    for role, (spec, base_url) in llm_roles(config).items():
        try:
            check_backend(spec, base_url=base_url)
        except BackendUnavailable as exc:
            raise ConfigError(f"{role} model {spec}: {exc}") from exc


def _backend_died(record: EpisodeRecord) -> str | None:
    """The endpoint's last words when a dead endpoint ended the episode."""
    if record.error_cause != "backend_unavailable":
        return None
    last = (record.error or "").strip().splitlines()
    return last[-1].split(": ", 1)[-1].strip() if last else "unavailable"


def _plan(config: RolloutConfig) -> tuple[Path, list[EpisodeJob], int, int]:
    """Everything checked before the run directory is touched: (out, pending jobs, episodes
    already saved, error episodes that will be retried). Raises ConfigError."""
    try:
        _check_reward(config)
        if config.judge != "none" and not config.no_report:
            from eval.judge import make_judge

            make_judge(config.judge, **judge_kwargs(config))  # else a bad judge fails after every episode ran
        _check_llm(config)
        out = Path(config.out)
        _check_out(out)
        traj = out / "trajectories.jsonl"
        if traj.exists() and not config.resume:
            raise ConfigError(f"{traj} exists; pass --resume to continue it or choose another --out")
        _check_config(config, out)
        jobs = make_jobs(config)
        saved = read_episodes(traj) if config.resume and traj.exists() else []
    except ConfigError:
        raise
    except (ValueError, OSError) as exc:
        raise ConfigError(str(exc).splitlines()[0]) from exc
    retried = [retried_on_resume(ep.termination, ep.error_cause, config.retry_errors) for ep in saved]
    done = done_keys(ep for ep, again in zip(saved, retried, strict=True) if not again)
    retry = sum(retried)
    pending = [j for j in jobs if (j.task_id, j.repeat) not in done]
    if config.max_episodes is not None:
        pending = pending[: config.max_episodes]
    if pending:
        _check_setup(config, pending[0], chunks=-(-len(pending) // config.batch_size))
    return out, pending, len(done), retry


def run(config: RolloutConfig, argv: list[str] | None = None) -> dict[str, Any] | None:
    """Run every pending episode, then write the report. Returns the metric groups (None
    with ``no_report``). Raises ConfigError before touching the run directory when the
    setup is wrong, and RunStopped after ``max_consecutive_errors`` crashes in a row."""
    from situ_gym.llm import METER

    # In-process workers point the process's meter at the run's usage file (``make_env``,
    # ``worker_state``): it points back where it did once the run ends, even by an error.
    with contextlib.ExitStack() as held:
        with METER.logging_to(METER.log_path):
            out, pending, n_done, n_retry = _plan(config)
            chunks = [pending[k : k + config.batch_size] for k in range(0, len(pending), config.batch_size)]
            try:
                executor = make_executor(executor_of(config, len(chunks)), config.workers, config.ray_address)
            except ValueError as exc:  # Ray missing or unreachable: nothing was run, nothing written
                raise ConfigError(str(exc).splitlines()[0]) from exc
            stopped = True  # until _play returns: a stop or an interrupt ends the workers at once
            try:
                held.enter_context(run_lock(out))  # one writer per run directory, through the report
                _play(config, argv, executor, out, chunks, len(pending), n_done, n_retry)
                stopped = False
            finally:
                executor.close(abort=stopped)
        if config.no_report:
            return None
        return finalize(out, judge=config.judge, judge_kwargs=judge_kwargs(config), prices=config.prices())


@contextlib.contextmanager
def run_lock(out: Path):
    """Hold the run directory ``out`` for this process (an advisory ``flock`` on
    ``out/.rollout.lock``, released when the process ends, however it ends; unguarded where
    the platform has no ``fcntl``). Raises ConfigError, before any episode is written, when
    another process holds it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fh = open(out / ".rollout.lock", "a+", encoding="utf-8")  # noqa: SIM115 - held until the run ends
    except OSError as exc:
        raise ConfigError(f"--out {str(out)!r}: {exc.strerror or exc}") from exc
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.seek(0)
                holder = fh.read().strip() or "?"
                raise ConfigError(f"{out} is being written by another eval.rollout (pid {holder}); wait for it "
                                  "to finish, or stop it, before --resume, or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()


def run_status(config: RolloutConfig) -> tuple[int, list[str]]:
    """How a finished run went: (exit status, lines to print). EXIT_EPISODE_ERRORS when some
    saved episodes ended in error, EXIT_FALLBACKS when an LLM role replaced more than
    ``max_fallback_rate`` of its decisions by its fallback, else EXIT_OK."""
    from situ_gym.llm import read_usage, summarize_usage

    out = Path(config.out)
    traj = out / "trajectories.jsonl"
    episodes = read_episodes(traj) if traj.exists() else []
    errors: dict[str, int] = {}
    for ep in episodes:
        if ep.termination == "error":
            errors[ep.error_cause or "crash"] = errors.get(ep.error_cause or "crash", 0) + 1
    lines, status = [], EXIT_OK
    if errors:
        why = ", ".join(f"{cause}: {n}" for cause, n in sorted(errors.items()))
        lines.append(f"{sum(errors.values())} of {len(episodes)} episodes ended in error ({why}); see report.md")
        status = EXIT_EPISODE_ERRORS
    for role, s in sorted(summarize_usage(read_usage(out / "llm_usage.jsonl")).items()):
        rate = s.get("fallback_rate")
        if rate is not None and rate > config.max_fallback_rate:
            lines.append(f"the {role} role fell back on {s['fallbacks']} of {s['decisions']} decisions "
                         f"({rate:.0%} > --max-fallback-rate {config.max_fallback_rate:.0%}): its model "
                         f"({', '.join(s['models'])}) rarely gave a usable reply")
            status = status or EXIT_FALLBACKS
    return status, lines


def _play(config: RolloutConfig, argv: list[str] | None, executor: Any, out: Path, chunks: list[list[EpisodeJob]],
          n_pending: int, n_done: int, n_retry: int) -> None:
    """Prepare the run directory, then save every chunk's episodes as they come back."""
    from tqdm import tqdm

    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_config(config, out, argv)
    except OSError as exc:  # the probe of _check_out passed, yet the directory cannot be written
        raise ConfigError(f"--out {str(out)!r}: {exc.strerror or exc}") from exc
    traj = out / "trajectories.jsonl"
    if config.resume and drop_truncated_tail(traj):
        logger.warning("%s: dropped a truncated last line left by an interrupted run", traj)
    if config.resume and n_retry:
        moved = move_error_episodes(traj, out / "errors.jsonl", retry_errors=config.retry_errors)
        logger.info("retrying %d error episode(s); their records moved to %s", moved, out / "errors.jsonl")
    logger.info("%d episodes to run (%d already saved)", n_pending, n_done)

    successes = finished = errors = consecutive = 0
    bar = tqdm(total=n_pending, desc=f"{config.agent} on {config.env}", unit="ep", file=sys.stderr)

    def _save(text: str) -> None:
        nonlocal successes, finished, errors, consecutive
        record = EpisodeRecord.model_validate_json(text)
        append_episode(traj, record)
        finished += 1
        successes += bool(record.cart)
        bar.update(1)
        errors += record.error is not None
        if record.error is None:
            consecutive = 0
        elif record.error_cause not in EPISODE_CAUSES:  # a model's context limit is the episode's, not the run's
            consecutive += 1
        bar.set_postfix(success=f"{successes}/{finished}", **({"errors": errors} if errors else {}))
        died = _backend_died(record)
        if died:  # a dead endpoint is not the assistant's failure: stop, resume retries the episode
            raise RunStopped(f"a chat model endpoint failed: {died}; {finished} episodes saved in {traj} "
                             f"({errors} ended in error; --resume reruns those the endpoint cut short)")
        if config.max_consecutive_errors and consecutive >= config.max_consecutive_errors:
            last = (record.error or "").strip().splitlines()
            raise RunStopped(
                f"stopped after {consecutive} crashed episodes in a row (last: {last[-1] if last else '?'}); "
                f"{finished} of {n_pending} episodes saved, {errors} crashed, in {traj}. "
                f"Fix the cause and rerun with --resume: crashed episodes are retried"
            )

    try:
        for k, outcome in executor.map_unordered(play_jobs, chunks):
            if isinstance(outcome, ChunkFailed):  # e.g. an unpicklable result: the chunk's episodes crashed
                outcome = [episode_record(job, [], [], "error", outcome.error) for job in chunks[k]]
            for text in outcome:
                _save(text)
    except WorkerDied as exc:
        # Which episodes the dead worker finished is unknown, so none of its chunk is
        # recorded; unsaved episodes rerun on --resume.
        raise RuntimeError(f"{exc}; {finished} episodes were saved, "
                           f"rerun with --resume to finish the remaining ones") from exc
    finally:
        bar.close()
    sort_episode_file(traj)  # (task, repeat) order, whatever order the workers finished in
    if errors:
        logger.warning("%d of %d episodes crashed (termination 'error'); rerun with --resume to retry them",
                       errors, finished)


def finalize(run_dir: str | Path, judge: str = "rule", judge_kwargs: dict[str, Any] | None = None,
             prices: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """Score trajectories.jsonl of a run and write metrics.json, report.md, plots, viewer.
    ``prices`` (dollars per million input, cached input, output tokens) adds each LLM
    role's estimated cost. The judge rates under ``judge_kwargs["protocol"]``, else under
    the protocol the episodes recorded (a saved run is judged as it was played)."""
    from eval.aggregate import judge_label, load_indexes, load_tasks, summarize_groups
    from eval.judge import make_judge, recorded_protocol
    from eval.plots import write_plots
    from eval.report import write_report
    from eval.viewer import write_viewer

    run_dir = Path(run_dir)
    episodes = task_order(read_episodes(run_dir / "trajectories.jsonl"))
    stores = {ep.store for ep in episodes}
    indexes = load_indexes(stores)
    ratings = None
    if judge != "none" and episodes:
        from situ_gym.llm import METER

        kwargs = dict(judge_kwargs or {})
        if "protocol" not in kwargs:
            kwargs["protocol"] = recorded_protocol(episodes)
        j = make_judge(judge, **kwargs)
        tasks = load_tasks(stores)
        items = [(ep, tasks.get(ep.task_id), indexes.get(ep.store)) for ep in episodes]
        with METER.logging_to(run_dir / "llm_usage.jsonl"):
            ratings = j.rate_batch(items) if hasattr(j, "rate_batch") else [j.rate(*item) for item in items]
    groups = summarize_groups(episodes, indexes=indexes, ratings=ratings)
    llm = _llm_usage(run_dir, prices)
    write_report(run_dir, groups, extra={"judge": None if ratings is None else judge_label(ratings),
                                         **({"llm": llm} if llm else {})})
    if llm:
        from situ_gym.llm import format_usage

        with open(run_dir / "report.md", "a", encoding="utf-8") as fh:
            fh.write("\n## LLM roles: tokens, latency, cache, fallbacks\n\n" + format_usage(llm) + "\n")
    if episodes:
        write_plots(run_dir, groups)
    write_viewer(run_dir, episodes, indexes, ratings)
    return groups


def _llm_usage(run_dir: Path, prices: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """LLM usage per role from llm_usage.jsonl (also recorded in config.json)."""
    from situ_gym.llm import read_usage, summarize_usage

    summary = summarize_usage(read_usage(run_dir / "llm_usage.jsonl"), prices)
    if not summary:
        return {}
    config_path = run_dir / "config.json"
    if config_path.exists():
        payload = jsonl.loads(config_path.read_text(encoding="utf-8"))
        payload["llm_usage"] = summary
        config_path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str), encoding="utf-8")
    return summary


def parser():
    """The CLI: one flag per ``RolloutConfig`` field (``--max-turns`` and ``--max_turns`` alike)."""
    from transformers import HfArgumentParser

    return HfArgumentParser(RolloutConfig, prog="python -m eval.rollout", description=__doc__.split("\n")[0])


def _saved(out: str) -> int:
    """Episodes in a run directory's trajectory file (0 when there is none or it cannot be read)."""
    try:
        return len(read_episodes(Path(out) / "trajectories.jsonl"))
    except (ValueError, OSError):
        return 0


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    verbose = any(a in ("-v", "--verbose") for a in args_in)
    if not verbose:  # set before transformers is imported (the parser), inherited by the workers
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    cli = parser()
    args = cli.parse_args(argv)
    setup_logging(args.verbose)  # WARNING by default: no matplotlib or transformers chatter
    try:
        config = RolloutConfig(**vars(args))
        groups = run(config, argv=sys.argv if argv is None else argv)
    except ValueError as exc:  # ConfigError and the config's own checks: nothing was run
        # one line, no usage block (that is for --help and for flags argparse cannot read)
        cli.exit(EXIT_SETUP, f"{cli.prog}: error: {str(exc).splitlines()[0]}\n")
    except (RunStopped, RuntimeError) as exc:
        print(f"{cli.prog}: error: {exc}", file=sys.stderr)
        return EXIT_STOPPED
    except KeyboardInterrupt:  # the workers ignore SIGINT and were ended by the executor: one message
        print(f"{cli.prog}: interrupted; {_saved(args.out)} episodes saved in {args.out}, "
              "rerun the same command with --resume to finish", file=sys.stderr)
        return 130
    if groups is not None:
        from eval.report import format_console

        print(format_console(groups))
        print(f"\nrun directory: {config.out} (report.md, metrics.json, index.html)")
    status, lines = run_status(config)
    for line in lines:
        print(f"{cli.prog}: warning: {line}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
