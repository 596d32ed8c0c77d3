"""End to end on the real stores: teacher data, SFT and GSPO through accelerate, eval of the checkpoint.

Everything runs on CPU with a tiny random Qwen2 (hidden 32, 2 layers) whose tokenizer is
trained in-process on the supermarket observation text and heuristic outputs; settings are
shrunk for speed (2-3 turns, G=4, two groups per generation cycle) and each shrink is
commented in the YAML configs (train/configs/*_tiny.yaml).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "train" / "configs"
ACCELERATE = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1",
              "--mixed_precision", "no", "--dynamo_backend", "no"]
DISTRIBUTED_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")

pytestmark = pytest.mark.slow


def _env():
    env = dict(os.environ, TRL_EXPERIMENTAL_SILENCE="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    for name in DISTRIBUTED_ENV:  # a launcher's child is no rank of this test process
        env.pop(name, None)
    return env


def _run(cmd: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-6000:]}"
    return proc


def _weights(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def _changed(a: dict, b: dict) -> int:
    import torch

    return sum(not torch.equal(a[k], b[k]) for k in a if k in b)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from train.tiny import build_tiny_model, store_texts

    # whole_lines: catalog rows and the heuristic's outputs become single tokens, so prompts
    # stay ~1k tokens on CPU and a few SFT steps make valid outputs (gates can pass, rewards vary).
    texts = store_texts(("supermarket",), teacher_tasks=2)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", texts, vocab_size=8192, hidden_size=32,
                            whole_lines=True)


@pytest.fixture(scope="module")
def heuristic_run(tmp_path_factory):
    """Teacher trajectories written by eval.rollout (2 training tasks + 1 held-out task, 2 turns)."""
    from train.tasks import split_tasks

    train, held = split_tasks("supermarket", 0.2, 0)
    out = tmp_path_factory.mktemp("runs") / "heuristic"
    _run([sys.executable, "-m", "eval.rollout", "--env", "SituRec-Supermarket-v0", "--agent", "heuristic",
          "--tasks", ",".join(train[:2] + held[:1]), "--max-turns", "2", "--out", str(out), "--no-report", "--env-kwargs",
          '{"image_size": [160, 120]}'])
    return out / "trajectories.jsonl"


def test_replay_rebuilds_teacher_episodes_and_catches_a_mismatch(tiny, heuristic_run, tmp_path):
    from agents.hf_policy import load_tokenizer
    from eval.io import read_episodes
    from train.config import TeacherDataArguments
    from train.sft import ReplayMismatchError, build_dataset, make_env, replay_episode

    tok = load_tokenizer(str(tiny))
    cfg = TeacherDataArguments(trajectories=[str(heuristic_run)], success_only=False, max_turns=2,
                               env_image_size=[160, 120], eval_profile_fraction=0.2)
    records = read_episodes(heuristic_run)
    dataset, summary = build_dataset(cfg, tok)
    # The held-out profile's episode never becomes training data.
    assert (summary["episodes"], summary["held_out_skipped"], summary["kept"]) == (3, 1, 2)
    from train.tasks import split_tasks

    train_ids = set(split_tasks("supermarket", 0.2, 0)[0])
    for row, record in zip(dataset, [r for r in records if r.task_id in train_ids], strict=True):
        taught = tok.decode([t for t, m in zip(row["input_ids"], row["completion_mask"], strict=True) if m])
        # Exactly the teacher's outputs (each closed by the end-of-turn token) carry the loss.
        assert taught == "".join(t.assistant_raw + "<|im_end|>" for t in record.turns)
    tampered = records[0].model_copy(deep=True)
    tampered.turns[0].user_utterance = "I never said this."
    with pytest.raises(ReplayMismatchError, match="I never said this"):
        replay_episode(tampered, make_env("supermarket", cfg), tok)


def test_rollout_on_the_real_env_masks_env_tokens_and_groups_share_a_task(tiny):
    from transformers import AutoModelForCausalLM

    from agents.hf_policy import eos_token_ids, generate_batch, load_tokenizer
    from train.config import SituRecArguments
    from train.rollout import SituRecRollout
    from train.tasks import prompt_key, split_tasks

    tok = load_tokenizer(str(tiny))
    model = AutoModelForCausalLM.from_pretrained(tiny)
    eos = eos_token_ids(model, tok)
    cfg = SituRecArguments(max_turns=2, max_new_tokens=12, env_image_size=[160, 120])
    task = split_tasks("supermarket", 0.2, 0)[0][0]
    calls, given = [], []

    def generate(contexts, max_new):
        calls.append(len(contexts))
        outs = generate_batch(model, contexts, pad_id=tok.pad_token_id, eos_ids=eos, max_new_tokens=max_new)
        given.append(outs)
        return outs

    out = SituRecRollout(cfg, 4096).play([prompt_key("supermarket", task, 3)] * 2, tok, generate, eos_ids=eos)
    assert out["task_id"] == [task, task] and out["prompt_ids"][0] == out["prompt_ids"][1]
    assert calls[0] == 2  # both episodes of the group in one generate call
    for row in range(2):
        ids, mask = out["completion_ids"][row], out["env_mask"][row]
        model_ids = [t for t, m in zip(ids, mask, strict=True) if m]
        assert model_ids == [t for turn in given for t in (turn[row] if row < len(turn) else [])]
        env_text = tok.decode([t for t, m in zip(ids, mask, strict=True) if not m])
        if out["num_turns"][row] == 2:
            assert "User:" in env_text and "Current view:" in env_text
    # The rewards are RecRM's: every turn was scored and the instruction gate is a rate.
    assert all(0.0 <= g <= 1.0 for g in out["gate_instruction"])
    assert all(r == r for r in out["recrm_total"])


def test_sft_then_gspo_through_accelerate_and_eval_of_the_checkpoint(tiny, tmp_path):
    sft_out, gspo_out = tmp_path / "sft", tmp_path / "gspo"
    _run(ACCELERATE + [str(ROOT / "train" / "sft.py"), "--config", str(CONFIGS / "sft_tiny.yaml"),
                       "--model_name_or_path", str(tiny), "--output_dir", str(sft_out)])
    final = sft_out / "final"
    assert _changed(_weights(tiny), _weights(final)) > 0  # the SFT step moved the weights
    summary = json.loads((final / "sft_summary.json").read_text())
    assert summary["kept"] >= 1 and summary["trained_tokens"] > 0

    _run(ACCELERATE + [str(ROOT / "train" / "gspo.py"), "--config", str(CONFIGS / "gspo_tiny.yaml"),
                       "--model_name_or_path", str(final), "--output_dir", str(gspo_out)])
    history = json.loads((gspo_out / "log_history.json").read_text())
    first = history[0]
    # The rewards came from the env through the RecRM wrapper: the reward function logged them.
    for key in ("recrm/total/mean", "recrm/instruction/mean", "recrm/gate_instruction/pass_rate",
                "siturec/success_rate", "timing/generate_s", "rewards/trajectory_reward/mean"):
        assert key in first, sorted(first)
    assert _changed(_weights(final), _weights(gspo_out)) > 0  # GSPO moved the weights
    held = json.loads((gspo_out / "held_out_tasks.json").read_text())["supermarket"]
    assert held

    run = tmp_path / "eval"
    _run([sys.executable, "-m", "eval.rollout", "--env", "SituRec-Supermarket-v0", "--agent", "hf", "--model",
          str(gspo_out), "--tasks", held[0], "--max-turns", "2", "--out", str(run), "--no-report",
          "--env-kwargs", '{"image_size": [160, 120]}'])
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    assert len(lines) == 1 and record["agent"] == "hf" and record["error"] is None
    assert 1 <= len(record["turns"]) <= 2
