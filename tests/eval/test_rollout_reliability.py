"""The runner never loses a turn, never turns a setup fault into data, never touches a run
directory for a command that fails, and writes the same metrics.json however it ran."""

from __future__ import annotations

import json
import os

import pytest

from agents.base import Assistant
from eval.io import read_episodes
from eval.rollout import ConfigError, RolloutConfig, RunStopped, main, run

# Tiny settings so the module stays a few seconds: 3 tasks, 3 turns, 64x48 frames.
SMALL = dict(env="SituRec-Supermarket-v0", agent="random", tasks="0-2", max_turns=3,
             env_kwargs={"image_size": [64, 48]}, judge="none", no_report=True)
SMALL_ARGS = ["--env", "SituRec-Supermarket-v0", "--agent", "random", "--tasks", "0-2", "--max-turns", "3",
              "--env-kwargs", '{"image_size": [64, 48]}', "--judge", "none", "--no-report"]
REPORT_ARGS = [a for a in SMALL_ARGS if a != "--no-report"]


def _args(out, *extra):
    """SMALL_ARGS with later flags overriding earlier ones (argparse keeps the last)."""
    return [*SMALL_ARGS, "--out", str(out), *extra]


def _snapshot(folder):
    """Every file under ``folder`` with its bytes and modification time."""
    return {
        p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ------------------------------------------------------------------ agents for the tests

# The three fields that once broke serialisation: a JSON escape decoding to a lone surrogate.
SURROGATE_OUTPUT = (
    '{"response": "Hello \\ud800 there", '
    '"assistant_actions": [{"type": "Greet", "note\\udfff": "x\\ud83d"}], '
    '"expected_user_action": {"name": "idle\\udc00", "arguments": {"fixture": "\\ud800"}}, '
    '"ranking": ["sm_p001", "\\udbff"]}'
)


class SurrogateAssistant(Assistant):
    """Every turn carries lone surrogates in ranking, action and expected_user_action,
    once as JSON escapes and once as raw characters."""

    name = "surrogates"

    def reset(self, observation, info, *, seed=None):
        self.n = 0

    def act(self, observation):
        self.n += 1
        return SURROGATE_OUTPUT if self.n % 2 else SURROGATE_OUTPUT.replace("\\ud800", "\ud800")


class InfoSpy(Assistant):
    """Remembers every info it is given (episodes run in this process with workers=1)."""

    name = "info-spy"
    infos: list[dict] = []

    def reset(self, observation, info, *, seed=None):
        type(self).infos.append(dict(info))

    def act(self, observation):
        return '{"response": "Hi!", "assistant_actions": [{"type": "Greet"}], "ranking": []}'


class FlakyEngine(Assistant):
    """Crashes on every turn while SITU_TEST_ENGINE_DOWN is set: an infrastructure fault
    (the agent can be built and reset, so the setup check passes)."""

    name = "flaky"

    def reset(self, observation, info, *, seed=None):
        from agents.random_agent import RandomAssistant

        self.inner = RandomAssistant()
        self.inner.reset(observation, info, seed=seed)

    def act(self, observation):
        if os.environ.get("SITU_TEST_ENGINE_DOWN"):
            raise ConnectionError("engine at 127.0.0.1:9000 refused the connection")
        return self.inner.act(observation)


# ------------------------------------------------------------------ 1. nothing lost


@pytest.mark.parametrize("workers", [1, 2])
def test_surrogates_in_model_output_never_lose_a_turn(tmp_path, workers):
    out = tmp_path / f"w{workers}"
    run(RolloutConfig(out=str(out), workers=workers, **{**SMALL, "agent": f"{__name__}:SurrogateAssistant"}))
    episodes = read_episodes(out / "trajectories.jsonl")
    assert len(episodes) == 3
    for ep in episodes:
        assert ep.termination != "error", ep.error
        assert len(ep.turns) >= 1
        for t in ep.turns:
            text = t.model_dump_json()
            text.encode("utf-8")  # strict: a lone surrogate would raise here
            assert "\ufffd" in t.ranking[1] and t.ranking[0] == "sm_p001"
            assert t.action is not None and any("\ufffd" in k for k in t.action)
            assert t.expected_user_action is not None and "\ufffd" in t.expected_user_action.name


# ------------------------------------------------------------------ 2. setup faults stop the command


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agent", "heuristc"], "unknown agent 'heuristc'"),
        (["--agent", "hf", "--model", "/no/such/model/dir"], "cannot start 'hf'"),
        (["--seed", "-1"], "seed must be >= 0"),
        (["--env-kwargs", '{"nope": 1}'], "nope"),
        (["--env-kwargs", '{"backend": "unrealcv", "image_size": [64, 48]}'], "cannot start"),
        (["--env", "SituRec-Mall-v0"], "unknown env 'SituRec-Mall-v0'"),
        (["--tasks", "999"], "outside 0-99"),
        (["--tasks", "5-2"], "start 5 is after its end 2"),
        (["--tasks", "abc"], "unknown task ids"),
        (["--workers", "0"], "workers must be >= 1"),
        (["--executor", "dask"], "executor must be one of ['inline', 'process', 'ray']"),
        (["--env-kwargs", "[1, 2]"], "must be a JSON object"),

    ],
)
def test_setup_errors_exit_2_with_one_line_and_leave_nothing(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        main(_args(out, *extra))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m eval.rollout: error: ")
    assert message in last
    assert "usage:" not in err  # the one line alone: the usage block is for --help and unreadable flags
    assert not out.exists()  # nothing was run, so no run directory either


def test_unwritable_out_is_a_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(SystemExit) as exc:
        main(_args(blocker / "run"))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be created" in err and "a_file" in err


@pytest.mark.parametrize("out", ["/proc/situ-x", "/proc/situ-x/run", "/sys/situ-x", "/proc"])
def test_impossible_out_is_a_one_line_error_even_for_root(capsys, out):
    """Permission bits do not tell (root may "write" /proc): the probe in the folder does."""
    with pytest.raises(SystemExit) as exc:
        main(_args(out))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"python -m eval.rollout: error: --out {out!r} ")
    assert "Traceback" not in err


def test_consecutive_infrastructure_errors_stop_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SITU_TEST_ENGINE_DOWN", "1")
    out = tmp_path / "down"
    code = main(_args(out, "--agent", f"{__name__}:FlakyEngine", "--max-consecutive-errors", "2"))
    assert code == 1
    err = capsys.readouterr().err
    assert "stopped after 2 crashed episodes in a row" in err and "refused the connection" in err
    assert "--resume" in err and "Traceback" not in err
    assert len(read_episodes(out / "trajectories.jsonl")) == 2  # the third task never started
    with pytest.raises(RunStopped):
        run(RolloutConfig(out=str(tmp_path / "down2"), max_consecutive_errors=1,
                          **{**SMALL, "agent": f"{__name__}:FlakyEngine"}))


# ------------------------------------------------------------------ 3. resume retries crashed episodes


def test_resume_retries_error_episodes_and_keeps_them_in_an_errors_file(tmp_path, monkeypatch):
    flaky = {**SMALL, "agent": f"{__name__}:FlakyEngine"}
    clean = tmp_path / "clean"
    run(RolloutConfig(out=str(clean), **flaky))
    out = tmp_path / "retry"
    monkeypatch.setenv("SITU_TEST_ENGINE_DOWN", "1")
    run(RolloutConfig(out=str(out), max_consecutive_errors=0, **flaky))
    assert [ep.termination for ep in read_episodes(out / "trajectories.jsonl")] == ["error"] * 3
    monkeypatch.delenv("SITU_TEST_ENGINE_DOWN")  # the engine is back
    run(RolloutConfig(out=str(out), resume=True, **flaky))
    retried = read_episodes(out / "trajectories.jsonl")
    assert [ep.model_dump_json() for ep in retried] == [
        ep.model_dump_json() for ep in read_episodes(clean / "trajectories.jsonl")
    ]
    failed = read_episodes(out / "errors.jsonl")
    assert len(failed) == 3 and all("refused the connection" in ep.error for ep in failed)
    run(RolloutConfig(out=str(out), resume=True, **flaky))  # nothing left to retry
    assert len(read_episodes(out / "trajectories.jsonl")) == 3 and len(read_episodes(out / "errors.jsonl")) == 3


# ------------------------------------------------------------------ 4. a failed command changes nothing


@pytest.mark.parametrize(
    "extra",
    [["--tasks", "abc"], ["--seed", "4"], ["--agent", "heuristc"], ["--tasks", "5-2"]],
)
def test_failed_resume_leaves_the_run_directory_untouched(tmp_path, capsys, extra):
    out = tmp_path / "run"
    assert main(_args(out, "--tasks", "0")) == 0
    before = _snapshot(out)
    with pytest.raises(SystemExit) as exc:
        main(_args(out, "--resume", *extra))
    assert exc.value.code == 2
    assert "Traceback" not in capsys.readouterr().err
    assert _snapshot(out) == before


def test_a_second_writer_is_refused_while_a_run_holds_its_directory(tmp_path, capsys):
    # an orphaned or parallel `--resume` once double-wrote a run: the directory is held by the
    # process writing it (an flock, released when that process ends however it ends)
    import fcntl
    import subprocess
    import sys

    out = tmp_path / "run"
    assert main(_args(out, "--tasks", "0")) == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; fh = open(sys.argv[1], 'a+'); "
         "fcntl.flock(fh, fcntl.LOCK_EX); fh.seek(0); fh.truncate(); fh.write('4242'); fh.flush(); "
         "print('held', flush=True); time.sleep(60)", str(out / ".rollout.lock")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _snapshot(out)
        with pytest.raises(SystemExit) as exc:
            main(_args(out, "--resume", "--tasks", "0-1"))
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "another eval.rollout (pid 4242)" in err and "Traceback" not in err
        assert _snapshot(out) == before
    finally:
        holder.kill()
        holder.wait()
    # once the holder is gone the same command finishes the run
    assert main(_args(out, "--resume", "--tasks", "0-1")) == 0
    assert len(read_episodes(out / "trajectories.jsonl")) == 2
    with open(out / ".rollout.lock") as fh:  # and holds the directory no more
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


# ------------------------------------------------------------------ 6. metrics.json does not depend on how it ran


@pytest.mark.slow  # six small runs and four reports: ~10 s on an idle core
def test_metrics_json_is_byte_identical_for_workers_batches_and_resume(tmp_path):
    report = {**SMALL, "no_report": False, "judge": "rule", "repeats": 2}
    dirs = {}
    for name, extra in (("w1", {}), ("w2", {"workers": 2}), ("b2", {"batch_size": 2})):
        dirs[name] = tmp_path / name
        run(RolloutConfig(out=str(dirs[name]), **{**report, **extra}))
    resumed = tmp_path / "resumed"  # killed twice, then finished
    run(RolloutConfig(out=str(resumed), **{**report, "max_episodes": 2, "tasks": "1-2"}))
    run(RolloutConfig(out=str(resumed), **{**report, "max_episodes": 3, "resume": True, "tasks": "0-2"}))
    run(RolloutConfig(out=str(resumed), **{**report, "resume": True}))
    reference = (dirs["w1"] / "metrics.json").read_bytes()
    for path in [*dirs.values(), resumed]:
        assert (path / "metrics.json").read_bytes() == reference, path.name
    per_episode = json.loads(reference)["groups"]["SituRec-Supermarket-v0 / random"]["per_episode"]
    assert [m["episode_id"] for m in per_episode] == [
        f"{t}#r{r}" for t in ("sm_u01_t1", "sm_u01_t2", "sm_u01_t3") for r in (0, 1)
    ]


# ------------------------------------------------------------------ 11. agents cannot look the answer up


def test_agents_get_no_task_id_but_the_trajectory_keeps_it(tmp_path):
    from situ_gym.scene.loader import load_task_bank

    InfoSpy.infos.clear()
    out = tmp_path / "spy"
    run(RolloutConfig(out=str(out), **{**SMALL, "agent": f"{__name__}:InfoSpy"}))
    bank = load_task_bank("supermarket")
    task_ids = {t.id for t in bank.tasks}
    profile_ids = {p.id for p in bank.profiles}
    assert len(InfoSpy.infos) >= 3
    for info in InfoSpy.infos:
        assert "task_id" not in info and "task" not in info and "profile_id" not in info
        assert not ({str(v) for v in info.values()} & (task_ids | profile_ids))
        assert info["store"] == "supermarket"
    assert [ep.task_id for ep in read_episodes(out / "trajectories.jsonl")] == ["sm_u01_t1", "sm_u01_t2", "sm_u01_t3"]


def test_config_error_is_a_value_error_naming_the_fault():
    with pytest.raises(ConfigError, match="unknown task ids"):
        run(RolloutConfig(out="/nonexistent-dir-for-test/x", **{**SMALL, "tasks": "nope"}))


class BatchSpy:
    """The batch interface train.evaluate drives (like HFPolicyAssistant), remembering infos."""

    generated_tokens = 0
    generate_seconds = 0.0

    def reset_batch(self, observations, infos, *, seeds=None):
        self.infos = [dict(i) for i in infos]

    def act_batch(self, observations, *, episodes=None):
        return ['{"response": "Hi!", "assistant_actions": [{"type": "Greet"}], "ranking": []}'] * len(observations)


def test_training_evaluation_gives_agents_no_task_id():
    from train.evaluate import evaluate_policy

    spy = BatchSpy()
    result = evaluate_policy(spy, "supermarket", ["sm_u01_t1", "sm_u03_t2"], max_turns=1, image_size=(64, 48))
    assert result["episodes"] == 2
    # the store and the input condition only: no task id, no hidden task
    assert spy.infos == [{"store": "supermarket", "ablation": None, "protocol": "default"}] * 2


class CtrlC(Assistant):
    """The user presses Ctrl-C during the second episode."""

    name = "ctrl-c"
    episodes = 0

    def reset(self, observation, info, *, seed=None):
        type(self).episodes += 1

    def act(self, observation):
        if type(self).episodes >= 3:  # the setup check and the first episode pass
            raise KeyboardInterrupt
        return '{"response": "Hi!", "assistant_actions": [{"type": "Greet"}], "ranking": []}'


def test_ctrl_c_says_what_was_saved_and_how_to_go_on(tmp_path, capsys):
    CtrlC.episodes = 0
    out = tmp_path / "int"
    assert main(_args(out, "--agent", f"{__name__}:CtrlC")) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "--resume" in err and "Traceback" not in err
    assert len(read_episodes(out / "trajectories.jsonl")) == 1


def test_a_record_with_text_no_parser_cleaned_still_serialises():
    from eval.rollout import EpisodeJob
    from eval.rollout_worker import episode_record
    from situ_gym.records import EpisodeRecord, ToolCall
    from tests.eval.builders import turn

    job = EpisodeJob(RolloutConfig(**SMALL), "sm_u01_t1", 0, "sm_u01", 3, "sm_p210", ("sm_p210",), 6.0)
    odd = turn(1, actual=ToolCall(name="idle", arguments={"note": "from a plug-in shopper \ud800"}),
               user_utterance="hi \udfff")
    record = EpisodeRecord.model_validate_json(episode_record(job, [odd], [], "turn_limit", None))
    assert record.turns[0].user_action.arguments == {"note": "from a plug-in shopper \ufffd"}
    assert record.turns[0].user_utterance == "hi \ufffd" and record.task_id == "sm_u01_t1"


def test_unknown_judge_stops_before_the_first_episode(tmp_path, capsys):
    out = tmp_path / "judge"
    with pytest.raises(SystemExit) as exc:
        main([*REPORT_ARGS, "--out", str(out), "--judge", "gpt-judge"])
    assert exc.value.code == 2
    assert "unknown judge 'gpt-judge'" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not out.exists()
