"""SituRec as a TRL ``environment_factory`` environment: the assistant's turn is one ``assist`` tool call.

TRL 1.16's ``GRPOTrainer(environment_factory=...)`` makes one instance per rollout and,
for each dataset row, calls ``reset(**row)`` (its text is appended to the row's last user
message); the public methods are tools the model calls in its chat template's
tool-calling format, and ``get_reward()`` scores the finished rollout::

    from train.environment import SituRecToolEnv, tool_dataset
    trainer = GRPOTrainer(model, args=gspo_config, train_dataset=tool_dataset(env_args, seed=0),
                          environment_factory=SituRecToolEnv.factory(env_args), processing_class=tok)

Here the ``assist`` tool carries the structured action (response, assistant_actions,
expected_user_action, ranking), which the SituRec env receives as its JSON action; the
tool result is the shopper's reply and the new view. ``get_reward`` is the trajectory
reward of ``train.rollout`` (mean per-turn RecRM R_total of the ``recrm.RecRMReward``
wrapper + the outcome bonus times the outcome credit), without the soft-gate warm-up (the
environment does not see the training step). The model needs a chat template with tool
calling (e.g. Qwen2.5-Instruct's); TRL renders tool results as tool messages.

With ``catalog_view: tools`` (``SituRecArguments``) the env lists no catalog and
``SituRecToolEnv.factory`` builds ``SituRecCatalogToolEnv``, which adds the catalog/map tools
of ``situ_gym.assistant_tools`` (``search_catalog``, ``get_product``, ``locate``) as public
methods: TRL offers them beside ``assist``, the model may call them any number of times before
its ``assist`` call, and the env answers them from its catalog and map and records them in the
turn that ``assist`` then plays (``TurnRecord.tool_calls``).

With ``reward_parts: true`` the factory builds the ``...ByParts`` form of the class, which has
no ``get_reward``: ``train.rewards.part_reward_functions`` read each rollout's
``reward_fields`` instead (one TRL reward per part, for ``multi_objective_aggregation``). The
outcome credit comes from the last step's ``info["recrm"]``, so an ``env_factory`` that returns
a ``situ_gym.serve.RemoteEnv`` earns the same reward as in-process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from agents.prompting import system_prompt, turn_text
from train.config import SituRecArguments
from train.rewards import EpisodeTally
from train.rollout import episode_outcome_credit, make_recrm_env

__all__ = ["TOOL_INSTRUCTIONS", "CATALOG_TOOL_INSTRUCTIONS", "SituRecToolEnv", "SituRecCatalogToolEnv",
           "SituRecToolEnvByParts", "SituRecCatalogToolEnvByParts", "tool_dataset"]

logger = logging.getLogger(__name__)

TOOL_INSTRUCTIONS = (
    "In this session you do not write the JSON object as text: every turn, call the `assist` tool ONCE with "
    "its four fields (response, assistant_actions, expected_user_action, ranking) as the arguments. The tool "
    "returns what the shopper said and did and the new view. Stop when the tool says the episode has ended."
)
CATALOG_TOOL_INSTRUCTIONS = (
    "The catalog is not listed: before your `assist` call, look products up with the tools search_catalog, "
    "get_product and locate as often as you need; their results are the store's catalog and map."
)


class SituRecToolEnv:
    """One SituRec episode per rollout, driven by ``assist`` tool calls and scored by RecRM.

    ``env_factory(store)`` defaults to ``train.rollout.make_recrm_env`` (the configured store
    env wrapped by ``recrm.RecRMReward``); one env per store is kept and reset per episode.
    """

    def __init__(self, args: SituRecArguments, env_factory: Callable[[str], Any] | None = None):
        self.args = args
        self._env_factory = env_factory or partial(make_recrm_env, args)
        self._envs: dict[str, Any] = {}
        self.env: Any = None
        self.store: str | None = None
        self.task_id: str | None = None
        self.seed: int | None = None
        self.actions: list[dict[str, Any]] = []  # what the env received, one per turn
        self.tally = EpisodeTally()  # RecRM turn by turn (train.rewards)
        self.termination: str | None = None
        self._seen_history = ""

    @classmethod
    def factory(cls, args: SituRecArguments, env_factory: Callable[[str], Any] | None = None):
        """The zero-argument callable ``GRPOTrainer(environment_factory=...)`` expects: under
        ``catalog_view: tools`` one that builds ``SituRecCatalogToolEnv`` (TRL lists the tools of
        the class, so the catalog tools are a subclass's methods, absent otherwise), and under
        ``reward_parts: true`` the class's ``...ByParts`` form (no ``get_reward``)."""
        if cls is SituRecToolEnv:
            tools, by_parts = args.catalog_view == "tools", args.reward_parts
            cls = {(False, False): SituRecToolEnv, (True, False): SituRecCatalogToolEnv,
                   (False, True): SituRecToolEnvByParts, (True, True): SituRecCatalogToolEnvByParts}[tools, by_parts]
        return partial(cls, args, env_factory)

    def reset(self, store: str, task_id: str, seed: int, **row: Any) -> str:
        """Start the row's episode; returns the first turn's text (dialogue so far, pose, view)."""
        if store not in self._envs:
            self._envs[store] = self._env_factory(store)
        self.env = self._envs[store]
        obs, info = self.env.reset(seed=int(seed), options={"task_id": task_id})
        if info.get("task_id", task_id) != task_id:
            raise RuntimeError(f"env reset to task {info.get('task_id')!r}, asked for {task_id!r}")
        self.store, self.task_id, self.seed = store, task_id, int(seed)
        self.actions, self.tally, self.termination = [], EpisodeTally(), None
        self._seen_history = str(obs.get("history", ""))
        self.ablation = info.get("ablation")  # App. D.4: every turn's text follows it
        return turn_text(obs, ablation=self.ablation)

    def assist(
        self, response: str, assistant_actions: list[dict], expected_user_action: dict, ranking: list[str]
    ) -> str:
        """Take your turn: say something to the shopper, annotated with your dialogue action.

        Args:
            response: What you say to the shopper (natural language, no handles or ids).
            assistant_actions: Exactly one dialogue action, e.g. {"type": "Navigate", "navigation_goal": "3", "reason": "..."}.
            expected_user_action: The physical action you expect next, e.g. {"name": "move_to_fixture", "arguments": {"fixture": "3"}}.
            ranking: Up to 10 catalog product ids, best first.

        Returns:
            The shopper's reply and action, their pose and the new view; or that the episode has ended.
        """
        if self.env is None:
            raise RuntimeError("assist called before reset")
        if self.termination is not None:
            raise ValueError(f"the episode has ended ({self.termination}); do not call assist again")
        action = {"response": response, "assistant_actions": assistant_actions,
                  "expected_user_action": expected_user_action, "ranking": ranking}
        obs, _reward, terminated, truncated, info = self.env.step(json.dumps(action, ensure_ascii=False))
        self.actions.append(action)
        recrm = info.get("recrm")
        if recrm is None:
            raise RuntimeError("the env step returned no info['recrm']: wrap the env with recrm.RecRMReward")
        self.tally.add(recrm, floor=0.0)
        text = turn_text(obs, self._seen_history, ablation=self.ablation)
        self._seen_history = str(obs.get("history", ""))
        if terminated or truncated:
            self.termination = info.get("termination") or ("turn_limit" if truncated else "ended")
            return f"{text}\n\nThe episode has ended ({self.termination})."
        return text

    @property
    def totals(self) -> list[float]:
        """Each turn's RecRM R_total so far."""
        return self.tally.totals

    @property
    def reward_fields(self) -> dict[str, Any]:
        """The rollout's reward fields, as ``SituRecRollout`` gives them (``train.rewards``):
        ``traj_reward``, its parts ``part_<name>``, component means, gate pass rates, ``success``,
        ``num_turns``, ``termination``. The outcome credit comes from the last step's
        ``info["recrm"]``, so a remote env (``situ_gym.serve.RemoteEnv``) earns it too.
        (A property: TRL offers a class's public functions as tools, never its properties.)"""
        success = self.termination == "success_cart_added"
        credit = episode_outcome_credit(self.env, self.tally.last) if success else 1.0
        return {**self.tally.fields(success, self.args.outcome_bonus, credit), "success": float(success),
                "num_turns": len(self.actions), "termination": self.termination or "unfinished"}

    def get_reward(self) -> float:
        """Trajectory reward: mean per-turn RecRM R_total + outcome bonus x outcome credit on a purchase."""
        return self.reward_fields["traj_reward"]


class SituRecCatalogToolEnv(SituRecToolEnv):
    """``SituRecToolEnv`` whose model also has the catalog/map tools (``catalog_view: tools``).

    Each tool is answered by the episode's env (``SituRecEnv.call_tool``) and recorded in the
    turn the next ``assist`` plays; a bad call's result is an ``"Error: ..."`` text.
    """

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.env is None:
            raise RuntimeError(f"{name} called before reset")
        if self.termination is not None:
            raise ValueError(f"the episode has ended ({self.termination}); do not call {name}")
        return self.env.unwrapped.call_tool(name, arguments)

    def search_catalog(self, query: str, max_results: int = 5) -> str:
        """Search the store's catalog for products.

        Args:
            query: What to look for: a product type, brand, use or labels, e.g. 'gluten-free pasta'.
            max_results: How many entries to return, 1 to 20.

        Returns:
            The best-matching catalog entries, best first, one per line: id | name | category | price | location | attributes.
        """
        return self._call("search_catalog", {"query": query, "max_results": max_results})

    def get_product(self, product_id: str) -> str:
        """Get one product's catalog facts.

        Args:
            product_id: A catalog product id, e.g. from search_catalog.

        Returns:
            The product's name, brand, category, price, location with its navigation handles, and labels (JSON).
        """
        return self._call("get_product", {"product_id": product_id})

    def locate(self, target: str) -> str:
        """Locate a product or a place in the store.

        Args:
            target: A product id or name, a navigation handle (e.g. '3' or '2a'), or a place name.

        Returns:
            The fixture, store or area holding it with its handle, its map position, and its distance and direction from the shopper (JSON).
        """
        return self._call("locate", {"target": target})


class _RewardByParts:
    """Under ``reward_parts: true`` TRL scores the rollouts with one reward function per part
    (``train.rewards.part_reward_functions``, reading ``reward_fields``); TRL also adds a class's
    ``get_reward`` as one more reward source, so these classes have none."""

    get_reward = None


class SituRecToolEnvByParts(_RewardByParts, SituRecToolEnv):
    """``SituRecToolEnv`` whose reward TRL reads part by part (``reward_parts: true``)."""


class SituRecCatalogToolEnvByParts(_RewardByParts, SituRecCatalogToolEnv):
    """``SituRecCatalogToolEnv`` whose reward TRL reads part by part (``reward_parts: true``)."""


def tool_dataset(args: SituRecArguments, seed: int, env_factory: Callable[[str], Any] | None = None):
    """(``datasets.Dataset`` of training rows, {store: held-out task ids}) for the environment path.

    Each row: ``prompt`` = [system: the store's rules + catalog + ``TOOL_INSTRUCTIONS``, user: ""]
    (``reset`` appends the first turn), and ``store``, ``task_id``, ``seed`` for ``reset``.
    """
    from datasets import Dataset

    from train.tasks import training_rows

    rows, held_out = training_rows(args, seed)
    make_env = env_factory or partial(make_recrm_env, args)
    systems: dict[str, str] = {}
    for row in rows:
        if row["store"] not in systems:  # the catalog is the store's, not the task's
            env = make_env(row["store"])
            obs, info = env.reset(seed=seed, options={"task_id": row["task_id"]})
            env.close()
            rules = system_prompt(row["store"], str(obs["catalog"]), ablation=info.get("ablation"))
            extra = f"\n{CATALOG_TOOL_INSTRUCTIONS}" if args.catalog_view == "tools" else ""
            systems[row["store"]] = f"{rules}\n\n{TOOL_INSTRUCTIONS}{extra}"
        row["prompt"] = [{"role": "system", "content": systems[row["store"]]}, {"role": "user", "content": ""}]
    return Dataset.from_list(rows), held_out
