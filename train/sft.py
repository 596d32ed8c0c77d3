"""SFT warm start: teacher episodes -> the policy's own conversation tokens -> TRL SFTTrainer.

    python train/sft.py --config train/configs/sft_tiny.yaml --model_name_or_path runs/tiny/model
    accelerate launch train/sft.py --config train/configs/sft_supermarket.yaml \\
        --trajectories runs/heuristic/trajectories.jsonl

Configuration: ``train.config.parse_args("sft")``, i.e. ``TrlParser((TeacherDataArguments,
SFTConfig, ModelConfig))``: every SFTConfig / ModelConfig option is a YAML key or flag.

Two sources of teacher episodes:

* ``trajectories``: files written by ``eval.rollout``. They keep each turn's
  ``assistant_raw`` but not the observations, so each episode is REPLAYED in the env
  (same task, seed and assistant outputs => same observations); the replay must
  reproduce every recorded user utterance, else ``ReplayMismatchError``.
* ``teacher``: an agent (``agents.registry`` name, "heuristic" by default) plays the
  training tasks now.

Each kept episode becomes ONE sequence, exactly the ids ``agents.prompting.Conversation``
builds in training and evaluation: ``input_ids`` = turn 1's prompt + model turns + env
turns, ``completion_mask`` = 1 on the teacher's turns only (completion-only loss).
Only training tasks are used (held-out profiles, see ``train.tasks``). The final model
(LoRA merged) is saved to ``OUTPUT_DIR/final``.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from train.config import TeacherDataArguments, load_model_and_tokenizer, parse_or_exit  # noqa: E402

__all__ = ["ReplayMismatchError", "replay_episode", "teacher_episode", "keep_episode", "build_dataset", "main"]

logger = logging.getLogger(__name__)


class ReplayMismatchError(ValueError):
    """Replaying a saved episode did not reproduce what the file recorded."""


def make_env(store: str, cfg: TeacherDataArguments, *, recrm: bool = False):
    import gymnasium as gym

    import situ_gym  # noqa: F401
    from train.tasks import ENV_OF_STORE

    env = gym.make(ENV_OF_STORE[store], max_turns=cfg.max_turns, image_size=tuple(cfg.env_image_size),
                   catalog_view=cfg.catalog_view, catalog_k=cfg.catalog_k)
    if recrm:
        from recrm import RecRMReward

        env = RecRMReward(env)
    return env


def _example(conv) -> dict[str, list[int]]:
    return {"input_ids": conv.ids, "completion_mask": [0] * len(conv.prompt_ids) + conv.env_mask}


def _model_tokens(tokenizer, text: str) -> list[int]:
    from agents.prompting import turn_end_ids

    return tokenizer(text, add_special_tokens=False)["input_ids"] + turn_end_ids(tokenizer)


def replay_episode(record: Any, env: Any, tokenizer: Any) -> dict[str, list[int]]:
    """Rebuild one saved ``EpisodeRecord`` as a training sequence by stepping ``env``."""
    from agents.prompting import Conversation, turn_end_ids

    end = set(turn_end_ids(tokenizer))
    obs, info = env.reset(seed=record.seed, options={"task_id": record.task_id})
    conv = Conversation(tokenizer, record.store, obs, ablation=info.get("ablation"))
    for i, turn in enumerate(record.turns):
        conv.add_model_tokens(_model_tokens(tokenizer, turn.assistant_raw), eos_ids=end)
        obs, _, terminated, truncated, info = env.step(turn.assistant_raw)
        got = info["turn"].user_utterance
        if got != turn.user_utterance:
            raise ReplayMismatchError(
                f"episode {record.episode_id} ({record.task_id}, seed {record.seed}) turn {turn.turn}: replay "
                f"gave user utterance {got!r}, the file recorded {turn.user_utterance!r} (different env/user "
                "version or a non-deterministic run)"
            )
        last = i == len(record.turns) - 1
        if (terminated or truncated) != last:
            raise ReplayMismatchError(
                f"episode {record.episode_id} turn {turn.turn}: replay ended={terminated or truncated}, "
                f"file has {len(record.turns)} turns (does max_turns={env.unwrapped.max_turns} match the run's?)"
            )
        if not last:
            conv.add_observation(obs)
    return _example(conv)


def teacher_episode(agent: Any, env: Any, tokenizer: Any, store: str, task_id: str, seed: int) -> tuple[dict, dict]:
    """Let ``agent`` play one episode (``eval.runner.play_batch``); returns (training sequence, summary)."""
    from agents.prompting import Conversation, turn_end_ids
    from eval.runner import EpisodeSpec, play_batch

    end = set(turn_end_ids(tokenizer))
    conversations: list[Any] = []
    totals: list[float] = []

    def on_reset(_i: int, obs: dict[str, Any], info: dict[str, Any]) -> None:
        conversations.append(Conversation(tokenizer, store, obs, ablation=info.get("ablation")))

    def on_step(_i: int, text: str, obs: dict[str, Any], info: dict[str, Any], done: bool) -> None:
        conversations[0].add_model_tokens(_model_tokens(tokenizer, text), eos_ids=end)
        if "recrm" in info:
            totals.append(float(info["recrm"]["total"]))
        if not done:
            conversations[0].add_observation(obs)

    (result,) = play_batch([env], agent, [EpisodeSpec(task_id, seed)], on_reset=on_reset, on_step=on_step)
    if result.error is not None:
        raise RuntimeError(f"teacher episode {task_id} (seed {seed}) crashed: {result.error.strip().splitlines()[-1]}")
    mean = sum(totals) / len(totals) if totals else None
    return _example(conversations[0]), {"task_id": task_id, "seed": seed, "termination": result.termination,
                                        "mean_reward": mean}


def keep_episode(termination: str | None, mean_reward: float | None, cfg: TeacherDataArguments) -> bool:
    """Success (cart addition) always counts; else ``min_mean_reward`` decides (if set)."""
    if termination == "success_cart_added":
        return True
    if cfg.min_mean_reward is not None and mean_reward is not None:
        return mean_reward >= cfg.min_mean_reward
    return not cfg.success_only


def _record_mean_reward(record: Any) -> float | None:
    values = [t.reward.get("recrm/total") for t in record.turns]
    values = [v for v in values if v is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else None


def build_dataset(cfg: TeacherDataArguments, tokenizer: Any, seed: int = 0):
    """A ``datasets.Dataset`` of {input_ids, completion_mask} and a summary dict (teacher env seeds from ``seed``)."""
    from datasets import Dataset

    from train.tasks import split_tasks

    train_ids: dict[str, set[str]] = {}
    for store in cfg.stores:
        ids = split_tasks(store, cfg.eval_profile_fraction, cfg.split_seed)[0]
        train_ids[store] = set(ids[: cfg.max_tasks] if cfg.max_tasks is not None else ids)
    rows, summary = [], {"episodes": 0, "kept": 0, "held_out_skipped": 0}
    envs: dict[str, Any] = {}
    if cfg.trajectories:
        from eval.io import read_episodes

        for path in cfg.trajectories:
            for record in read_episodes(path):
                summary["episodes"] += 1
                if record.store not in train_ids or record.task_id not in train_ids[record.store]:
                    summary["held_out_skipped"] += 1
                    continue
                if not keep_episode(record.termination, _record_mean_reward(record), cfg):
                    continue
                env = envs.setdefault(record.store, make_env(record.store, cfg))
                rows.append(replay_episode(record, env, tokenizer))
    else:
        from agents.registry import make_agent

        agent = make_agent(cfg.teacher or "heuristic")
        for store in cfg.stores:
            env = envs.setdefault(store, make_env(store, cfg, recrm=cfg.min_mean_reward is not None))
            for k in range(cfg.teacher_episodes_per_task):
                for task_id in sorted(train_ids[store]):
                    example, info = teacher_episode(agent, env, tokenizer, store, task_id, seed + k)
                    summary["episodes"] += 1
                    if keep_episode(info["termination"], info["mean_reward"], cfg):
                        rows.append(example)
    for env in envs.values():
        env.close()
    summary["kept"] = len(rows)
    if not rows:
        raise ValueError(f"no teacher episode passed the filter: {summary}")
    summary["tokens"] = sum(len(r["input_ids"]) for r in rows)
    summary["trained_tokens"] = sum(sum(r["completion_mask"]) for r in rows)
    return Dataset.from_list(rows), summary


def main(script_args: TeacherDataArguments, training_args, model_args) -> Path:
    """Train; returns OUTPUT_DIR/final (merged model, tokenizer, sft_summary.json)."""
    from transformers import set_seed
    from trl import SFTTrainer, get_peft_config

    set_seed(training_args.seed)
    if training_args.run_name is None:
        training_args.run_name = f"{'+'.join(script_args.stores)}__sft__{training_args.seed}__{int(time.time())}"
    model, tokenizer = load_model_and_tokenizer(training_args, model_args)
    dataset, summary = build_dataset(script_args, tokenizer, training_args.seed)
    logger.info("SFT data: %s", summary)
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
    )
    trainer.train()
    final = Path(training_args.output_dir) / "final"
    if trainer.accelerator.is_main_process:
        model = trainer.accelerator.unwrap_model(trainer.model)
        if hasattr(model, "merge_and_unload"):
            model = model.merge_and_unload()
        model.save_pretrained(final)
        tokenizer.save_pretrained(final)
        (final / "sft_summary.json").write_text(json.dumps(summary, indent=1))
    trainer.accelerator.wait_for_everyone()
    return final


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    main(*parse_or_exit("sft"))
