"""Learning evidence in one command: SFT warm start, GSPO per reward variant, held-out figures.

    python train/scripts/learning_evidence.py --preset cpu-smoke --out runs/evidence_smoke
    python train/scripts/learning_evidence.py --preset h200 --rewards outcome R3 full --out runs/evidence
    python train/scripts/learning_evidence.py --preset h200 --dry-run --out runs/evidence_dry

Steps (all in this process, through the library's functions):

1. the model (``gguf:smollm2`` by default) is written once as a plain model folder (OUT/base);
2. SR, mean R_total and turns on HELD-OUT profiles' tasks (``train.tasks.split_tasks``)
   with 95% confidence intervals (Wilson for SR, percentile bootstrap over episodes for
   the means): before SFT, after SFT, after GSPO with each reward;
3. SFT warm start (``train.sft.main``) on heuristic episodes of the training profiles;
4. GSPO (``train.gspo.main``) from the SFT checkpoint, once per reward: ``outcome``, the
   ladder ``R1``..``R5`` (= outcome, +instruction, +relevance, +behavior, full) or the names;
5. OUT/gspo_curves.png (SR and reward over GSPO steps, one line per reward) and
   OUT/summary.json (every figure, timings split into generation / env + reward /
   optimisation, tokens/s).

``--dry-run`` builds every configuration, renders real first prompts, plays one heuristic
episode per store to size the turns, checks batch shapes and token budgets against the
model's context and the preset's time budget, writes OUT/dry_run.json and exits 1 when a
check fails. Nothing is trained.

Observation mode (``Preset.observation_mode``): SmolLM2 reads 8,192 tokens, but the full
catalog renders to ~19.8k (supermarket). ``h200`` uses ``compact``: the retrieved-catalog view
(``catalog_view="retrieved"``, README "Compact observation"), taught by the heuristic limited
to the entries the conversation lists (``heuristic-restricted``); ``cpu-smoke`` uses
``nav_only`` (the catalog replaced by the navigation index, ~2.3k-token prompts, one-turn
episodes: proves the path, not learning).

Getting it onto the GPU machine (no package registry; at most 64 MiB carried per call;
what earlier calls left stays while the machine is warm). Here, once (runs/ is git-ignored)::

    mkdir -p runs/transfer && cd runs/transfer
    pip download --no-deps -d wheels trl==1.16.0 datasets gguf peft accelerate \
        matplotlib scipy ...                                 # those the GPU image lacks (call 1: pip list)
    tar -c wheels | split -b 60M - wheels.tar.part-          # parts of <= 60 MiB
    split -b 60M "$(python -c 'from situ_gym.llm.gguf import find_smollm2_gguf as f; print(f())')" \
        smollm2.gguf.part-                                   # 98 MB -> 2 parts

then one ``run`` call per part, each carrying only that part (e.g. carry
``["runs/transfer/smollm2.gguf.part-aa"]``) with a command that moves it aside
(``mkdir -p ~/parts && mv runs/transfer/* ~/parts/``); the last call joins, installs, runs::

    cat ~/parts/smollm2.gguf.part-* > ~/smollm2.gguf
    cat ~/parts/wheels.tar.part-* | tar -x -C ~ && pip install --no-index --no-deps ~/wheels/*.whl
    python train/scripts/learning_evidence.py --preset h200 --model gguf:$HOME/smollm2.gguf --out $OUT/ev

The GGUF (98 MB, 2 parts) is smaller than a bf16 safetensors folder (270 MB, 5 parts), so
the GGUF travels and is converted there (OUT/base). Run ``--dry-run`` here first.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

logger = logging.getLogger("learning_evidence")

from train.evidence import (  # noqa: E402
    OBSERVATION_MODES,
    TEACHERS,
    EpisodeLog,
    gspo_curve,
    gspo_timing,
    observation_mode,
    phase_figures,
    plot_curves,
)

LADDER = {"R1": "outcome", "R2": "+instruction", "R3": "+relevance", "R4": "+behavior", "R5": "full"}


# ---------------------------------------------------------------------------------------------- presets
@dataclass(frozen=True)
class Preset:
    """Every setting of one evidence run; each shrink is explained where the preset is defined."""

    name: str
    observation_mode: str = "full"  # THE prompt switch: "full", "nav_only", later the compact view
    model: str = "gguf:smollm2"
    context_tokens: int = 8192  # SmolLM2's max_position_embeddings: every episode must fit
    stores: tuple[str, ...] = ("supermarket",)
    eval_profile_fraction: float = 0.2
    train_tasks: int | None = None  # per store; None = all training tasks
    eval_tasks: int = 20  # held-out tasks per store
    eval_seeds: int = 1  # episodes per held-out task (env seeds seed..seed+n-1)
    max_turns: int = 20
    image_size: tuple[int, int] = (640, 480)
    teacher_episodes_per_task: int = 1
    success_only: bool = True
    sft_steps: int = 100
    sft_lr: float = 2e-5
    sft_batch: int = 4
    gspo_steps: int = 16
    gspo_lr: float = 1e-6
    num_generations: int = 8
    gspo_batch: int = 16  # per device; generation batch = gspo_batch x steps_per_generation
    steps_per_generation: int = 4
    max_new_tokens: int = 192
    max_completion_length: int = 4096
    gate_floor: float = 0.3
    temperature: float = 1.0  # GSPO sampling
    eval_temperature: float = 0.7
    bf16: bool = False
    rewards: tuple[str, ...] = ("outcome", "full")
    time_budget_s: float = 540.0
    # Dry-run wall-time estimate only: assumed generation and training (forward + backward)
    # tokens/s and model load seconds. H200: ~2,400 generated tokens/s for batched HF generate
    # (shared/notes/trl-gspo.md); 2 CPU cores: ~100 trained tokens/s (issue 15: 5.5 s per 512).
    est_generate_tokens_per_s: float = 2400.0
    est_train_tokens_per_s: float = 50_000.0
    est_load_s: float = 30.0

    def __post_init__(self):
        if self.observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {sorted(OBSERVATION_MODES)}, got {self.observation_mode!r}")
        if self.observation_mode == "nav_only" and self.max_turns != 1:
            # the heuristic teacher recommends from the catalog rows nav_only removes
            raise ValueError(f"observation_mode 'nav_only' is for one-turn smoke runs, got max_turns={self.max_turns}")

    def reward_variants(self) -> list[str]:
        from train.config import VARIANT_NAMES

        names = [LADDER.get(r, r) for r in self.rewards]
        bad = [r for r, n in zip(self.rewards, names, strict=True) if n not in VARIANT_NAMES]
        if bad or not names:
            raise ValueError(f"rewards must be among {list(LADDER)} or {list(VARIANT_NAMES)}, got {list(self.rewards)!r}")
        return list(dict.fromkeys(names))


PRESETS = {
    # One H200, <= 9 min with model loading: SmolLM2 in bf16, 1 store, 6 turns (a heuristic turn
    # is <= 255 tokens, an env turn <= ~650 at 640x480), 2 generation cycles of 64 episodes per
    # reward, 20 held-out episodes per evaluation. Dry-run estimate with a 3k-token compact
    # prompt: ~480 s (8 turns or 40 evaluation episodes: ~560-590 s).
    "h200": Preset(name="h200", observation_mode="compact", bf16=True, max_turns=6, eval_tasks=20, eval_seeds=1, sft_steps=60,
                   gspo_steps=8, max_new_tokens=256, max_completion_length=4096),
    # 2 CPU cores, <= 10 min: proves the path with the real model, not learning. One turn per
    # episode (a 2.3k-token prompt costs 20-35 s per forward here), one held-out task, one SFT
    # step, one GSPO step of one group (G=2) per reward, outputs cut at 24 tokens (its dry run
    # flags teacher_turn_fits_max_new_tokens: the heuristic's first turn is ~69 tokens).
    "cpu-smoke": Preset(name="cpu-smoke", observation_mode="nav_only", stores=("supermarket",), train_tasks=1,
                        eval_tasks=1, max_turns=1, image_size=(160, 120), success_only=False, sft_steps=1,
                        sft_batch=1, gspo_steps=1, num_generations=2, gspo_batch=1, steps_per_generation=2,
                        max_new_tokens=24, max_completion_length=256, gate_floor=0.5, time_budget_s=600.0,
                        est_generate_tokens_per_s=2.0, est_train_tokens_per_s=100.0, est_load_s=60.0),
    # Tests: a tiny random Qwen2 with an in-process tokenizer (train/tiny.py), a few seconds.
    "tiny": Preset(name="tiny", model="tiny", context_tokens=32768, train_tasks=2, eval_tasks=2, max_turns=2,
                   image_size=(160, 120), success_only=False, sft_steps=4, sft_lr=1e-2, sft_batch=1, gspo_steps=2,
                   gspo_lr=1e-3, num_generations=2, gspo_batch=2, steps_per_generation=2, max_new_tokens=24,
                   max_completion_length=2048, gate_floor=0.5, time_budget_s=600.0,
                   est_generate_tokens_per_s=200.0, est_train_tokens_per_s=20_000.0, est_load_s=5.0),
}


# ---------------------------------------------------------------------------------------------- evaluation
def evaluate(model_dir: str, held_out: dict[str, list[str]], p: Preset, seed: int) -> dict[str, Any]:
    """Held-out figures of one checkpoint: every held-out task x ``eval_seeds``, all stores."""
    import gymnasium as gym

    from agents.hf_policy import HFPolicyAssistant
    from recrm import RecRMReward
    from train.evaluate import evaluate_policy
    from train.tasks import ENV_OF_STORE

    agent = HFPolicyAssistant(model_dir, max_new_tokens=p.max_new_tokens, temperature=p.eval_temperature,
                              top_p=0.95, seed=seed)
    records: list[dict] = []
    gen_s = env_s = 0.0
    tokens = 0
    for store, task_ids in held_out.items():
        for k in range(p.eval_seeds):
            def factory(_store, _sink=records):
                env = gym.make(ENV_OF_STORE[_store], max_turns=p.max_turns, image_size=tuple(p.image_size))
                return EpisodeLog(RecRMReward(env), _sink)

            result = evaluate_policy(agent, store, task_ids, seed=seed + k, max_turns=p.max_turns,
                                     image_size=tuple(p.image_size), env_factory=factory)
            gen_s += result["generate_s"]
            env_s += result["env_s"]
            tokens += result["generated_tokens"]
    for rec in records:
        rec["mean_r_total"] = sum(rec["totals"]) / len(rec["totals"]) if rec["totals"] else 0.0
    figures = phase_figures(records, seed)
    terminations: dict[str, int] = {}
    for rec in records:
        terminations[str(rec["termination"])] = terminations.get(str(rec["termination"]), 0) + 1
    figures.update(terminations=terminations, generated_tokens=tokens, generate_s=gen_s, env_reward_s=env_s,
                   tokens_per_s=tokens / gen_s if gen_s > 0 else None,
                   per_episode=[{k: v for k, v in r.items() if k != "totals"} for r in records])
    del agent
    return figures


# ---------------------------------------------------------------------------------------------- configs
_CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _flags(**values: Any) -> list[str]:
    """``--name value`` pairs for TrlParser (lists as several values, None left out)."""
    argv: list[str] = []
    for name, value in values.items():
        if value is None:
            continue
        argv.append(f"--{name}")
        argv.extend(str(v) for v in value) if isinstance(value, list | tuple) else argv.append(str(value))
    return argv


def _shared(p: Preset, seed: int) -> dict[str, Any]:
    return dict(stores=list(p.stores), seed=seed, eval_profile_fraction=p.eval_profile_fraction,
                max_tasks=p.train_tasks, max_turns=p.max_turns, env_image_size=list(p.image_size), bf16=p.bf16,
                dtype="bfloat16" if p.bf16 else "float32", logging_steps=1, report_to="none",
                activation_checkpointing=False)


def sft_config(p: Preset, base: str, out: Path, seed: int):
    """(script, training, model) args of the SFT stage: train/configs/sft_supermarket.yaml + the preset."""
    from train.config import parse_args

    return parse_args("sft", ["--config", str(_CONFIGS / "sft_supermarket.yaml"), *_flags(
        model_name_or_path=base, output_dir=str(out / "sft"), teacher=TEACHERS[p.observation_mode],
        teacher_episodes_per_task=p.teacher_episodes_per_task, success_only=p.success_only, max_steps=p.sft_steps,
        learning_rate=p.sft_lr, per_device_train_batch_size=p.sft_batch, gradient_accumulation_steps=1,
        max_length=p.context_tokens, save_steps=p.sft_steps + 1,  # no mid-run checkpoint: sft.main saves final/
        **_shared(p, seed))])


def gspo_config(p: Preset, model_dir: str, out: Path, variant: str, seed: int):
    """(script, training, model) args of one GSPO run: train/configs/gspo_supermarket.yaml (GSPO's
    paper settings) + the preset."""
    from train.config import parse_args

    return parse_args("gspo", ["--config", str(_CONFIGS / "gspo_supermarket.yaml"), *_flags(
        model_name_or_path=model_dir, output_dir=str(out / f"gspo-{variant.lstrip('+')}"), reward_variant=variant,
        episodes_per_task=1, max_steps=p.gspo_steps, learning_rate=p.gspo_lr, num_generations=p.num_generations,
        per_device_train_batch_size=p.gspo_batch, steps_per_generation=p.steps_per_generation,
        max_new_tokens=p.max_new_tokens, max_completion_length=p.max_completion_length, temperature=p.temperature,
        gate_floor=p.gate_floor, gate_warmup_steps=max(1, p.gspo_steps // 2) if p.gate_floor > 0 else 0,
        save_steps=p.gspo_steps + 1, **_shared(p, seed))])  # gspo.main saves the model itself


def held_out_tasks(p: Preset, seed: int) -> dict[str, list[str]]:
    from train.tasks import split_tasks

    return {s: split_tasks(s, p.eval_profile_fraction, seed)[1][: p.eval_tasks] for s in p.stores}


def prepare_model(p: Preset, out: Path, seed: int) -> str:
    """A plain model folder for ``p.model`` (GGUF converted once; folders used as they are)."""
    from situ_gym.llm.gguf import load_causal_lm, parse_gguf_spec, save_as_model_folder

    if p.model == "tiny":
        from train.tiny import build_tiny_model, store_texts

        # whole-line tokens keep the tiny model's prompts ~1k tokens (train/tiny.py)
        texts = store_texts(p.stores, teacher_tasks=2)
        return str(build_tiny_model(out / "base", texts, seed=seed, vocab_size=8192, hidden_size=32, whole_lines=True))
    if parse_gguf_spec(p.model) is None:
        return p.model
    model, tokenizer = load_causal_lm(p.model, dtype="bfloat16" if p.bf16 else "float32")
    return str(save_as_model_folder(model, tokenizer, out / "base"))


# ---------------------------------------------------------------------------------------------- dry run
def _measure_store(store: str, p: Preset, tokenizer: Any, train_task: str, held_task: str, seed: int) -> dict:
    """Real token counts for ``store``: a held-out first prompt and one heuristic episode's turns."""
    import gymnasium as gym

    from agents.base import agent_info
    from agents.prompting import Conversation, turn_end_ids
    from agents.registry import make_agent
    from recrm import RecRMReward
    from train.tasks import ENV_OF_STORE

    env = RecRMReward(gym.make(ENV_OF_STORE[store], max_turns=p.max_turns, image_size=tuple(p.image_size)))
    obs, _ = env.reset(seed=seed, options={"task_id": held_task})
    held_prompt = len(Conversation(tokenizer, store, obs).prompt_ids)
    obs, info = env.reset(seed=seed, options={"task_id": train_task})
    agent = make_agent(TEACHERS[p.observation_mode])
    agent.reset(obs, agent_info(info), seed=seed)
    conv = Conversation(tokenizer, store, obs)
    model_turns, env_turns, env_s, done = [], [], 0.0, False
    while not done:
        text = agent.act(obs)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"] + turn_end_ids(tokenizer)
        conv.add_model_tokens(ids)
        model_turns.append(len(ids))
        t0 = time.perf_counter()
        obs, _, terminated, truncated, _ = env.step(text)
        env_s += time.perf_counter() - t0
        done = terminated or truncated
        if not done:
            env_turns.append(len(conv.add_observation(obs)))
    env.close()
    return {"first_prompt_tokens": max(held_prompt, len(conv.prompt_ids)), "teacher_turns": len(model_turns),
            "teacher_episode_tokens": len(conv.ids), "max_teacher_turn_tokens": max(model_turns),
            "max_env_turn_tokens": max(env_turns, default=0), "env_step_s": env_s / len(model_turns)}


def estimate_seconds(p: Preset, m: dict, n_variants: int, n_train_tasks: int, *, gen_tps: float,
                     train_tps: float, load_s: float) -> dict[str, float]:
    """Upper-bound wall time of a run from measured token counts and assumed throughputs."""
    turn = p.max_new_tokens + m["max_env_turn_tokens"]
    episode = min(m["first_prompt_tokens"] + p.max_turns * turn, m["first_prompt_tokens"] + p.max_completion_length)
    forward_tps = 3 * train_tps  # a forward costs about a third of forward + backward
    eval_eps = p.eval_tasks * len(p.stores) * p.eval_seeds
    phase = eval_eps * (p.max_turns * p.max_new_tokens / gen_tps + episode / forward_tps + p.max_turns * m["env_step_s"])
    generation_batch = p.gspo_batch * p.steps_per_generation
    cycles = math.ceil(p.gspo_steps / p.steps_per_generation)
    rollout = cycles * generation_batch * (p.max_turns * p.max_new_tokens / gen_tps + episode / forward_tps
                                           + p.max_turns * m["env_step_s"])
    optimise = p.gspo_steps * p.gspo_batch * episode * (1 / train_tps + 1 / forward_tps)  # + old log-probs
    teacher = n_train_tasks * len(p.stores) * p.teacher_episodes_per_task * m["teacher_turns"] * m["env_step_s"]
    sft = teacher + p.sft_steps * p.sft_batch * m["teacher_episode_tokens"] / train_tps
    total = load_s + (2 + n_variants) * phase + sft + n_variants * (rollout + optimise)
    return {"load_s": load_s, "eval_phase_s": phase, "sft_s": sft, "gspo_rollout_s": rollout,
            "gspo_optimise_s": optimise, "total_s": total}


def dry_run(p: Preset, out: Path, seed: int) -> dict[str, Any]:
    """Configurations, batch shapes and token budgets of ``p``, checked without training."""
    import torch

    from situ_gym.llm.gguf import load_tokenizer
    from train.tasks import split_tasks

    variants = p.reward_variants()
    model = prepare_model(p, out, seed) if p.model == "tiny" else p.model
    built = p if torch.cuda.is_available() else replace(p, bf16=False)  # TRL refuses bf16 without a GPU
    _, sft_args, _ = sft_config(built, model, out, seed)  # each config's own checks run here
    gspo_args = {v: gspo_config(built, model, out, v, seed)[1] for v in variants}
    grpo = next(iter(gspo_args.values()))
    tokenizer = load_tokenizer(model)
    held = held_out_tasks(p, seed)
    splits = {s: split_tasks(s, p.eval_profile_fraction, seed)[0] for s in p.stores}
    n_train = min(len(ids) for ids in splits.values()) if p.train_tasks is None else p.train_tasks
    with observation_mode(p.observation_mode):
        stores = {s: _measure_store(s, p, tokenizer, splits[s][0], held[s][0], seed) for s in p.stores}
    worst = {k: max(m[k] for m in stores.values()) for k in next(iter(stores.values()))}
    generation_batch = p.gspo_batch * p.steps_per_generation
    estimate = estimate_seconds(p, worst, len(variants), n_train, gen_tps=p.est_generate_tokens_per_s,
                                train_tps=p.est_train_tokens_per_s, load_s=p.est_load_s)
    checks = {
        "first_prompt_fits_context": worst["first_prompt_tokens"] <= p.context_tokens,
        "gspo_episode_fits_context": worst["first_prompt_tokens"] + p.max_completion_length <= p.context_tokens,
        "teacher_episode_fits_context": worst["teacher_episode_tokens"] <= p.context_tokens,
        "teacher_turn_fits_max_new_tokens": worst["max_teacher_turn_tokens"] <= p.max_new_tokens,
        "generation_batch_holds_whole_groups": generation_batch % p.num_generations == 0,
        "estimate_within_time_budget": estimate["total_s"] <= p.time_budget_s,
    }
    report = {
        "preset": asdict(p), "reward_variants": variants, "held_out_tasks": held,
        "train_tasks_per_store": {s: len(ids) if p.train_tasks is None else p.train_tasks for s, ids in splits.items()},
        "batch": {"generation_batch": generation_batch, "groups_per_generation": generation_batch // p.num_generations,
                  "generation_cycles": math.ceil(p.gspo_steps / p.steps_per_generation),
                  "eval_episodes_per_phase": sum(len(t) for t in held.values()) * p.eval_seeds,
                  "sft_sequences": p.sft_steps * p.sft_batch},
        "tokens": {"per_store": stores, "context": p.context_tokens, "max_completion_length": p.max_completion_length,
                   "worst_gspo_sequence": worst["first_prompt_tokens"] + p.max_completion_length,
                   "gspo_tokens_per_generation_cycle": generation_batch * (worst["first_prompt_tokens"]
                                                                          + p.max_completion_length)},
        "grpo_config": {k: getattr(grpo, k) for k in
                        ("importance_sampling_level", "loss_type", "epsilon", "epsilon_high", "beta",
                         "num_generations", "steps_per_generation", "generation_batch_size")},
        "sft_max_length": sft_args.max_length,
        "estimate_s": estimate,
        "estimate_assumes_tokens_per_s": {"generation": p.est_generate_tokens_per_s,
                                          "training": p.est_train_tokens_per_s},
        "checks": checks,
        "ok": all(checks.values()),
    }
    return report


# ---------------------------------------------------------------------------------------------- the run
def run(p: Preset, out: Path, seed: int) -> dict[str, Any]:
    """The whole evidence run; writes OUT/summary.json and OUT/gspo_curves.png."""
    import torch
    from transformers import set_seed

    from train import gspo, sft

    variants = p.reward_variants()
    set_seed(seed)
    started = time.perf_counter()
    summary: dict[str, Any] = {
        "preset": asdict(p), "seed": seed, "reward_variants": variants,
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "phases": {}, "timings": {}, "gspo": {},
    }
    with observation_mode(p.observation_mode):
        t0 = time.perf_counter()
        base = prepare_model(p, out, seed)
        summary["timings"]["prepare_model_s"] = time.perf_counter() - t0
        held = held_out_tasks(p, seed)
        summary["held_out_tasks"] = held
        summary["phases"]["before_sft"] = evaluate(base, held, p, seed)
        _print_phase("before SFT", summary["phases"]["before_sft"])

        t0 = time.perf_counter()
        sft_dir = sft.main(*sft_config(p, base, out, seed))
        summary["timings"]["sft_s"] = time.perf_counter() - t0
        data = sft_dir / "sft_summary.json"
        summary["sft_data"] = json.loads(data.read_text()) if data.is_file() else None
        summary["phases"]["after_sft"] = evaluate(str(sft_dir), held, p, seed)
        _print_phase("after SFT", summary["phases"]["after_sft"])

        curves = {}
        for variant in variants:
            t0 = time.perf_counter()
            gspo_dir = gspo.main(*gspo_config(p, str(sft_dir), out, variant, seed))
            wall = time.perf_counter() - t0
            history = json.loads((gspo_dir / "log_history.json").read_text())
            curves[variant] = gspo_curve(history)
            summary["gspo"][variant] = {"curve": curves[variant],
                                        "timing": gspo_timing(history, wall, p.gspo_batch * p.steps_per_generation)}
            summary["phases"][f"after_gspo[{variant}]"] = evaluate(str(gspo_dir), held, p, seed)
            _print_phase(f"after GSPO [{variant}]", summary["phases"][f"after_gspo[{variant}]"])
    summary["plot"] = str(plot_curves(curves, out / "gspo_curves.png"))
    evals = summary["phases"].values()
    summary["timings"].update(
        eval_generation_s=sum(e["generate_s"] for e in evals), eval_env_reward_s=sum(e["env_reward_s"] for e in evals),
        gspo_generation_s=sum(g["timing"]["generation_s"] for g in summary["gspo"].values()),
        gspo_env_reward_s=sum(g["timing"]["env_reward_s"] for g in summary["gspo"].values()),
        gspo_optimisation_s=sum(g["timing"]["optimisation_s"] for g in summary["gspo"].values()),
        total_s=time.perf_counter() - started,
    )
    tokens = sum(e["generated_tokens"] for e in evals)
    summary["eval_tokens_per_s"] = tokens / summary["timings"]["eval_generation_s"] if tokens else None
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary


def _ci(values) -> str:
    return "n/a" if values is None else f"[{values[0]:.3f}, {values[1]:.3f}]"


def _print_phase(name: str, f: dict) -> None:
    print(f"{name:28s} SR {f['success_rate']:.3f} {_ci(f['success_rate_ci95'])}  "
          f"R_total {f['mean_r_total']:.3f} {_ci(f['mean_r_total_ci95'])}  turns {f['mean_turns']:.2f}  "
          f"({f['episodes']} episodes, {f['tokens_per_s'] or 0:.1f} tokens/s)", flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", required=True, choices=sorted(PRESETS))
    parser.add_argument("--out", required=True, help="output folder (created)")
    parser.add_argument("--rewards", nargs="+", help="reward variants: outcome, R1..R5, +instruction, ..., full")
    parser.add_argument("--model", help="model spec overriding the preset's (gguf:PATH, folder, hub id)")
    parser.add_argument("--observation-mode", choices=sorted(OBSERVATION_MODES), help="override the preset's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dry-run", action="store_true", help="build and check everything, train nothing")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    preset = PRESETS[args.preset]
    overrides = {"rewards": tuple(args.rewards) if args.rewards else None, "model": args.model,
                 "observation_mode": args.observation_mode}
    try:
        preset = replace(preset, **{k: v for k, v in overrides.items() if v is not None})
        preset.reward_variants()
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        if args.dry_run:
            report = dry_run(preset, out, args.seed)
            (out / "dry_run.json").write_text(json.dumps(report, indent=1, default=str))
            for name, ok in report["checks"].items():
                print(f"{'ok  ' if ok else 'FAIL'} {name}")
            print(f"estimated {report['estimate_s']['total_s']:.0f} s (budget {preset.time_budget_s:.0f} s); "
                  f"report: {out / 'dry_run.json'}")
            return 0 if report["ok"] else 1
        summary = run(preset, out, args.seed)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"learning_evidence: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"total {summary['timings']['total_s']:.0f} s; summary: {out / 'summary.json'}; plot: {summary['plot']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
