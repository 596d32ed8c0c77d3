"""Stand-ins for vLLM behind TRL's own ``VLLMGeneration`` (no vllm, no GPU), and a scripted env.

TRL's ``VLLMGeneration`` runs unchanged: in server mode it gathers every rank's prompts,
the main process asks ``VLLMClient`` and broadcasts the answer, each rank takes its slice;
in colocate mode it calls ``vllm.LLM.generate``. Only the engine under it is replaced:
``StandInEngine`` is a copy of the policy that samples and returns the sampled tokens'
log-probabilities after temperature scaling (vLLM's ``processed_logprobs``), and receives
the trainer's weight syncs. ``install(monkeypatch_or_none, engine)`` patches it in.

``python -m torch.distributed.run --standalone --nproc_per_node 2 THIS_FILE OUT [HANG_S]`` runs
``main``: one GSPO step on two CPU ranks (gloo) whose episodes end at different turns; each
rank writes OUT/rank<r>.json, and a rank still running after HANG_S seconds dumps its stacks
and exits (see test_vllm_rollout.py).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ENGINE: StandInEngine | None = None  # the engine the patched client / LLM talk to


class StandInEngine:
    """A copy of the policy that samples like vLLM: token ids + processed log-probabilities."""

    def __init__(self, model, eos_id: int, pad_id: int):
        self.model = copy.deepcopy(model).float().eval()
        self.eos_id, self.pad_id = eos_id, pad_id
        self.batches: list[int] = []  # prompts per generate call
        self.syncs = 0
        self.given: list[tuple[list[int], list[int], list[float]]] = []  # (prompt, ids, logprobs)

    def load_weights(self, named) -> None:
        state = {name: param.detach().clone() for name, param in named}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected:
            raise KeyError(f"weight sync sent unknown tensors {unexpected[:3]}")
        self.syncs += 1

    def sample(self, prompts: list[list[int]], n: int, max_tokens: int, temperature: float):
        """(completion ids, per-token logprobs) for each prompt, ``n`` each, prompt-major."""
        import torch

        self.batches.append(len(prompts))
        out = []
        for prompt in prompts:
            for _ in range(n):
                with torch.no_grad():
                    res = self.model.generate(
                        torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                        do_sample=True, temperature=temperature, top_k=0, top_p=1.0, max_new_tokens=max_tokens,
                        eos_token_id=self.eos_id, pad_token_id=self.pad_id, return_dict_in_generate=True,
                        output_logits=True,
                    )
                ids = res.sequences[0, len(prompt):].tolist()
                logps = [torch.log_softmax(step[0].float() / temperature, -1)[t].item()
                         for step, t in zip(res.logits, ids, strict=True)]
                self.given.append((list(prompt), ids, logps))
                out.append((ids, logps))
        return out


class StandInClient:
    """``trl.generation.vllm_client.VLLMClient`` against ``ENGINE`` (what ``trl vllm-serve`` answers)."""

    def __init__(self, base_url=None, group_port=None, connection_timeout=None, **_):
        self.base_url = base_url

    def init_communicator(self, device=None):
        pass

    def get_server_info(self):
        return {"model_config": {"logprobs_mode": "processed_logprobs"}}

    def update_named_params(self, metadata, named):
        ENGINE.load_weights(named)

    def reset_prefix_cache(self):
        pass

    def generate(self, prompts, features=None, n=1, temperature=1.0, max_tokens=16, logprobs=0, **_):
        if features is not None or logprobs != 0:
            raise ValueError(f"stand-in serves token prompts with logprobs=0, got {features!r}, {logprobs!r}")
        out = ENGINE.sample(prompts, n, max_tokens, temperature)
        return {"prompt_ids": [list(p) for p in prompts], "completion_ids": [ids for ids, _ in out],
                "logprobs": [[[lp] for lp in lps] for _, lps in out],
                "logprob_token_ids": [[[t] for t in ids] for ids, _ in out]}


class StandInSamplingParams:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class StandInLLM:
    """``vllm.LLM`` in colocate mode against ``ENGINE``: RequestOutput-shaped results, load_weights."""

    def __init__(self, model=None, **_):
        runner = SimpleNamespace(model=SimpleNamespace(load_weights=ENGINE.load_weights))
        self.llm_engine = SimpleNamespace(model_executor=SimpleNamespace(driver_worker=SimpleNamespace(model_runner=runner)))

    def generate(self, prompts, sampling_params=None, use_tqdm=False):
        p = sampling_params
        token_prompts = [row["prompt_token_ids"] for row in prompts]
        out = ENGINE.sample(token_prompts, p.n, p.max_tokens, p.temperature)
        return [SimpleNamespace(prompt_token_ids=prompt, outputs=[SimpleNamespace(
            token_ids=ids, logprobs=[{t: SimpleNamespace(logprob=lp, rank=1)} for t, lp in zip(ids, lps, strict=True)])])
            for prompt, (ids, lps) in zip(token_prompts, out, strict=True)]

    def reset_prefix_cache(self):
        pass


def install(engine: StandInEngine, monkeypatch=None) -> None:
    """Point TRL's VLLMGeneration at ``engine`` (through ``monkeypatch`` when given, so it is undone)."""
    import trl.generation.vllm_generation as vg

    global ENGINE
    ENGINE = engine
    patches = {"is_vllm_available": lambda: True, "VLLMClient": StandInClient, "LLM": StandInLLM,
               "SamplingParams": StandInSamplingParams}
    for name, value in patches.items():
        if monkeypatch is not None:
            monkeypatch.setattr(vg, name, value, raising=False)
        else:
            setattr(vg, name, value)


# ---------------------------------------------------------------------- a scripted env
class ScriptedEnv:
    """Ends after ``ends`` turns (purchase); R_total depends on the text, so group rewards differ."""

    def __init__(self, ends: int, max_turns: int):
        self.ends, self.max_turns = ends, max_turns

    def reset(self, *, seed=None, options=None):
        self.task_id, self.turn, self.history = options["task_id"], 0, []
        return self._obs(), {"task_id": self.task_id}

    def _obs(self):
        return {"history": "\n".join(self.history),
                "catalog": "Catalog (id | name | category | price | location):\nsm_p001 | Cod | fish | $9.99 | Freezer 2",
                "visible": "Visible products:\n[a] Cod (2.0 m)\nHolding: nothing\nCart: empty",
                "pose": np.array([float(self.turn), 0.0, 0.0], np.float32)}

    def step(self, text):
        self.turn += 1
        self.history += [f"Assistant: {text[:12]}", f"User: reply {self.turn}"]
        bought = self.turn >= self.ends
        truncated = not bought and self.turn >= self.max_turns
        total = (len(text) % 17) / 16
        recrm = {"total": total, "gates": {"instruction": 1.0, "consistency": 1.0}, "ungated": total,
                 "components": {"relevance": total}}
        info = {"recrm": recrm, "termination": "success_cart_added" if bought else None}
        return self._obs(), 0.0, bought, truncated, info

    def close(self):
        pass


def tiny_policy(out_dir: Path):
    """(model dir, tokenizer): a random tiny Qwen2 (hidden 32) with a 500-token BPE; nothing downloaded."""
    from train.tiny import build_tiny_model

    path = build_tiny_model(out_dir, vocab_size=500, hidden_size=32)
    from agents.hf_policy import load_tokenizer

    return path, load_tokenizer(str(path))


def gspo_args(out_dir: Path, **overrides):
    """GSPOConfig of a one-step CPU run with vLLM generation and TRL's importance-sampling correction on."""
    from train.config import GSPOConfig

    kwargs = dict(
        output_dir=str(out_dir), use_cpu=True, bf16=False, report_to="none", seed=0,
        importance_sampling_level="sequence", loss_type="grpo", beta=0.0, epsilon=3e-4, epsilon_high=4e-4,
        num_generations=2, per_device_train_batch_size=2,  # one group of two per rank: the smallest GSPO batch
        steps_per_generation=2, gradient_accumulation_steps=1,  # GSPOConfig asks for an off-policy step
        max_steps=1, logging_steps=1, save_strategy="no", learning_rate=1e-2,  # large: one step moves the weights
        max_completion_length=512, temperature=1.0, remove_unused_columns=False, activation_checkpointing=False,
        use_vllm=True, vllm_mode="server", vllm_importance_sampling_correction=True,
    )
    kwargs.update(overrides)
    return GSPOConfig(**kwargs)


def build_trainer(model_dir: Path, tokenizer, args, ends_of_rank, max_turns: int = 3, monkeypatch=None):
    """GRPOTrainer on ``SituRecRollout`` over ``ScriptedEnv``s; episodes end after ``ends_of_rank(rank)`` turns."""
    from accelerate import PartialState
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer

    from train.config import SituRecArguments
    from train.rollout import SituRecRollout, trajectory_reward
    from train.tasks import prompt_key

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    install(StandInEngine(model, tokenizer.eos_token_id, tokenizer.pad_token_id), monkeypatch)
    cfg = SituRecArguments(max_turns=max_turns, max_new_tokens=8)
    rank = PartialState().process_index
    rollout = SituRecRollout(cfg, args.max_completion_length,
                             env_factory=lambda store: ScriptedEnv(ends_of_rank(rank), max_turns))
    rows = [{"prompt": prompt_key("supermarket", f"t{i}", i)} for i in range(8)]
    return GRPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                       reward_funcs=[trajectory_reward], rollout_func=rollout)


def main(out: str) -> None:
    """One GSPO step on two ranks whose episodes end at different turns (rank r: after 1 + 2r turns)."""
    import torch
    import trl.generation.vllm_generation as vg
    from accelerate import PartialState

    state = PartialState()
    out_dir = Path(out)
    model_dir = out_dir / "model"
    if not (model_dir / "tokenizer_config.json").exists():  # the test builds it before launching: ranks only read
        if state.is_main_process:
            tiny_policy(model_dir)
        state.wait_for_everyone()
    from agents.hf_policy import load_tokenizer

    tokenizer = load_tokenizer(str(model_dir))
    args = gspo_args(out_dir / "run")  # 4 prompts (two groups) per rank and generation
    calls: list[int] = []
    generate = vg.VLLMGeneration.generate

    def counted(self, prompts, *a, **kw):
        calls.append(len(prompts))
        return generate(self, prompts, *a, **kw)

    vg.VLLMGeneration.generate = counted
    trainer = build_trainer(model_dir, tokenizer, args, ends_of_rank=lambda rank: 1 + 2 * rank)
    turns: list[int] = []
    rollout = trainer.rollout_func

    def recorded(prompts, trainer_):
        out = rollout(prompts, trainer_)
        turns.extend(out["num_turns"])
        return out

    trainer.rollout_func = recorded
    before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
    trainer.train()
    changed = sum(not torch.equal(before[k], v) for k, v in trainer.model.named_parameters())
    result = {"rank": state.process_index, "world": state.num_processes, "generate_calls": calls, "num_turns": turns,
              "engine_batches": ENGINE.batches, "changed": changed,
              "log": [h for h in trainer.state.log_history if "loss" in h]}
    (out_dir / f"rank{state.process_index}.json").write_text(json.dumps(result, default=str))
    state.wait_for_everyone()  # no rank leaves while the other is still in a collective


if __name__ == "__main__":
    import faulthandler

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    faulthandler.dump_traceback_later(float(sys.argv[2]) if len(sys.argv) > 2 else 180, exit=True)  # a hang: stacks
    main(sys.argv[1])
    # Both ranks wrote their results and met: end without tearing down the trainer, DDP and the
    # gloo group. Under load that teardown now and then aborted a rank ("terminate called without
    # an active exception") or hung it (destroy_process_group), failing a run that had passed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
