"""How much of each LLM request's prompt repeats the previous request of the same role and
episode as a prefix: the part a server's prefix cache (vLLM automatic prefix caching,
hosted prompt caching) can reuse. One figure per role, store and catalog view.

    python benchmarks/prompt_prefix.py [--tasks 3] [--max-turns 20]

The roles are played with their real prompt code and a scripted backend: the assistant
(``agents.chat_agent.ChatAssistant``) answers with the heuristic's output for the same
observation, so the episode is the heuristic's; the LLM moderator always answers "go on"
and, in a second pass, the LLM shopper answers a valid idle turn (its prompt grows as in
a real episode, though the episode itself differs). The
share is measured in characters of the serialised messages (``situ_gym.llm.usage``), the
same figure a run's report gives per role.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import situ_gym  # noqa: E402,F401
from agents.base import agent_info  # noqa: E402
from agents.chat_agent import ChatAssistant  # noqa: E402
from agents.heuristic import HeuristicAssistant  # noqa: E402
from situ_gym.llm import ChatBackend, ChatResult  # noqa: E402
from situ_gym.llm.usage import UsageMeter, read_usage, summarize_usage  # noqa: E402
from situ_gym.scene.loader import load_task_bank  # noqa: E402


class Replay(ChatBackend):
    """Answers every request with ``self.next`` (set by the caller before each turn)."""

    model = "replay"

    def __init__(self):
        self.next = ""

    def chat_batch(self, requests):
        return [ChatResult(text=self.next, prompt_tokens=0, completion_tokens=0) for _ in requests]


GO_ON = json.dumps({"end": False, "reason": "the shopper is still shopping"})
IDLE = json.dumps({"utterance": "Okay, go on.", "tool_call": {"name": "idle", "arguments": {}},
                   "revealed": None, "give_up": False})


def measure(env_id: str, view: str, tasks: int, max_turns: int, log: Path, shopper: bool) -> dict[str, float | None]:
    from situ_gym.llm import CachedBackend
    from situ_gym.user import make_moderator, make_user

    meter = UsageMeter(log)
    assistant_backend, moderator_backend, user_backend = Replay(), Replay(), Replay()
    moderator_backend.next, user_backend.next = GO_ON, IDLE
    chat = ChatAssistant(CachedBackend(assistant_backend, None, meter))
    roles = {"moderator": make_moderator("llm", model=CachedBackend(moderator_backend, None, meter))}
    if shopper:
        roles["user"] = make_user("llm", model=CachedBackend(user_backend, None, meter))
    env = gym.make(env_id, max_turns=max_turns, image_size=(64, 48), catalog_view=view, **roles)
    bank = load_task_bank(situ_gym.STORE_OF_ENV[env_id])
    for task in bank.tasks[:tasks]:
        heuristic = HeuristicAssistant()
        obs, info = env.reset(seed=0, options={"task_id": task.id})
        heuristic.reset(obs, agent_info(info), seed=0)
        chat.reset(obs, agent_info(info), seed=0)
        done = False
        while not done:
            assistant_backend.next = heuristic.act(obs)
            obs, _r, terminated, truncated, _info = env.step(chat.act(obs))
            done = terminated or truncated
    env.close()
    summary = summarize_usage(read_usage(log))
    return {role: summary[role]["prefix_share"] for role in ("assistant", "moderator", "user") if role in summary}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="episodes per store and view")
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--out", default="runs/prompt_prefix", help="folder for the usage logs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print("| Store | Catalog view | Assistant | Moderator | Shopper (idle pass) |")
    print("|---|---|---|---|---|")
    for env_id in ("SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"):
        for view in ("full", "retrieved"):
            shares = {}
            for shopper in (False, True):
                log = out / f"{env_id}-{view}-{'llm' if shopper else 'rule'}-shopper.jsonl"
                log.unlink(missing_ok=True)
                measured = measure(env_id, view, args.tasks, args.max_turns, log, shopper)
                shares.update(measured if not shopper else {"user": measured.get("user")})
            cells = [f"{shares[r]:.1%}" if shares.get(r) is not None else "-" for r in ("assistant", "moderator", "user")]
            print(f"| {env_id} | {view} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
