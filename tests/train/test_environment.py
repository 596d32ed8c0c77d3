"""TRL's environment_factory path: the assist tool steps the real env; GRPOTrainer trains through it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agents.base import agent_info
from train.config import SituRecArguments
from train.environment import TOOL_INSTRUCTIONS, SituRecToolEnv, tool_dataset
from train.rollout import episode_outcome_credit, episode_reward, make_recrm_env
from train.tasks import split_tasks

CONFIGS = Path(__file__).resolve().parents[2] / "train" / "configs"
ARGS = SituRecArguments(max_turns=3, env_image_size=[160, 120], max_tasks=1, episodes_per_task=2)
TASK = split_tasks("supermarket", 0.2, 0)[0][0]


def replay(actions: list[dict], seed: int) -> tuple[float, list[str]]:
    """RecRM's trajectory reward and the shopper's replies for ``actions`` on a fresh env (the reference)."""
    env = make_recrm_env(ARGS, "supermarket")
    env.reset(seed=seed, options={"task_id": TASK})
    totals, replies, termination = [], [], None
    for action in actions:
        _, _, terminated, truncated, info = env.step(json.dumps(action, ensure_ascii=False))
        totals.append(float(info["recrm"]["total"]))
        replies.append(info["turn"].user_utterance)
        if terminated or truncated:
            termination = info.get("termination")
            break
    success = termination == "success_cart_added"
    reward = episode_reward(totals, success, ARGS.outcome_bonus, episode_outcome_credit(env) if success else 1.0)
    env.close()
    return reward, replies


def test_assist_steps_the_env_with_the_structured_action_and_rewards_like_recrm():
    from agents.heuristic import HeuristicAssistant

    tool_env = SituRecToolEnv(ARGS)
    first = tool_env.reset(store="supermarket", task_id=TASK, seed=4, prompt=[])
    assert first.startswith("New events:") and "Current view:" in first
    teacher, shadow = HeuristicAssistant(), make_recrm_env(ARGS, "supermarket")
    obs, info = shadow.reset(seed=4, options={"task_id": TASK})
    teacher.reset(obs, agent_info(info), seed=4)
    actions, results = [], []
    while tool_env.termination is None:
        action = json.loads(teacher.act(obs))
        actions.append(action)
        results.append(tool_env.assist(**action))
        obs, *_ = shadow.step(json.dumps(action, ensure_ascii=False))
    assert tool_env.actions == actions and len(actions) >= 2
    reward, replies = replay(actions, seed=4)
    # The env received exactly these actions: the shopper answered each as on the reference env,
    # and the tool result carries that answer back to the model.
    for reply, result in zip(replies, results, strict=True):
        assert f"User: {reply}" in result
    assert results[-1].endswith(f"The episode has ended ({tool_env.termination}).")
    assert tool_env.get_reward() == pytest.approx(reward) and reward > 0
    with pytest.raises(ValueError, match="episode has ended"):
        tool_env.assist(**actions[0])


def test_assist_is_the_only_tool_trl_sees():
    import inspect

    public = [name for name, _ in inspect.getmembers(SituRecToolEnv, inspect.isfunction) if not name.startswith("_")]
    assert sorted(public) == ["assist", "get_reward", "reset"]  # TRL: reset and get_reward are not tools


def test_tool_dataset_rows_carry_the_reset_keys_and_the_tool_instructions():
    dataset, held_out = tool_dataset(ARGS, seed=7)
    assert [(r["task_id"], r["seed"]) for r in dataset] == [(TASK, 7), (TASK, 8)]
    system = dataset[0]["prompt"][0]["content"]
    assert system.endswith(TOOL_INSTRUCTIONS) and "Catalog" in system
    assert TASK not in held_out["supermarket"]


def _tool_calling_tiny_model(action: dict, conversations: list[list[dict]], steps: int = 60):
    """A tiny random Qwen2 with Qwen2.5's tool-calling template, taught to answer with one assist call."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    from train.tiny import build_tiny_tokenizer, corpus, store_texts

    # One line: Qwen's parser trims the whitespace around the JSON.
    call = "<tool_call>" + json.dumps({"name": "assist", "arguments": action}) + "</tool_call>"
    texts = store_texts(("supermarket",)) + [call]
    draft = build_tiny_tokenizer(corpus(texts), vocab_size=4096, whole_lines=True)
    draft.chat_template = qwen2_5_chat_template
    tools = [SituRecToolEnv(ARGS).assist]
    prompts = [draft.apply_chat_template(c, tools=tools, add_generation_prompt=True, tokenize=False)
               for c in conversations]
    # whole_lines: every line of the prompts (rules, catalog, tool schema) becomes a token or two.
    lines = [line for p in prompts for line in p.splitlines()]
    tokenizer = build_tiny_tokenizer(corpus(texts + lines), vocab_size=8192, whole_lines=True)
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.add_tokens([call])  # the whole call is one (ordinary, decoded) token: two tokens to learn
    target = tokenizer(call + "<|im_end|>", add_special_tokens=False)["input_ids"]
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=8192, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None, tie_word_embeddings=False,
    ))
    prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        optimizer.zero_grad()
        for ids in prompt_ids:
            labels = torch.tensor([[-100] * len(ids) + target])
            model(input_ids=torch.tensor([ids + target]), labels=labels).loss.backward()
        optimizer.step()
    for ids in prompt_ids:  # precondition of the trainer test
        greedy = model.generate(torch.tensor([ids]), max_new_tokens=len(target) + 2, do_sample=False,
                                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
        assert greedy[0, len(ids):].tolist()[: len(target)] == target
    return model, tokenizer


@pytest.mark.slow
@pytest.mark.parametrize("reward_parts", [False, True])
def test_gspo_script_trains_through_the_environment_and_logs_recrm_reward(tmp_path, monkeypatch, reward_parts):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    from agents.heuristic import HeuristicAssistant
    from train import gspo
    from train.config import parse_args

    dataset, _ = tool_dataset(ARGS, seed=0)
    shadow = make_recrm_env(ARGS, "supermarket")
    obs, info = shadow.reset(seed=0, options={"task_id": TASK})
    teacher = HeuristicAssistant()
    teacher.reset(obs, agent_info(info), seed=0)
    action = json.loads(teacher.act(obs))
    probe = SituRecToolEnv(ARGS)
    conversations = [[row["prompt"][0], {"role": "user", "content": probe.reset(**row)}] for row in dataset]
    model, tokenizer = _tool_calling_tiny_model(action, conversations)
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")

    envs: list[SituRecToolEnv] = []
    factory = SituRecToolEnv.factory.__func__

    def recording_factory(cls, args, env_factory=None):
        make_one = factory(cls, args, env_factory)  # the class the config picks (reward_parts: ...ByParts)

        def make():
            envs.append(make_one())
            return envs[-1]

        return make

    # A classmethod, like the real one: TRL exposes every public plain function of the class as a tool.
    monkeypatch.setattr(SituRecToolEnv, "factory", classmethod(recording_factory))
    configs = parse_args("gspo", [
        "--config", str(CONFIGS / "gspo_tiny.yaml"), "--model_name_or_path", str(tmp_path / "model"),
        "--output_dir", str(tmp_path / "gspo"), "--interface", "environment_factory", "--gate_floor", "0",
        "--max_turns", str(ARGS.max_turns), "--num_generations", "2", "--per_device_train_batch_size", "2",
        "--max_steps", "1", "--max_completion_length", "512",
        "--max_tool_calling_iterations", "1",  # one assist call per rollout: each env sees exactly one action
        "--reward_parts", str(reward_parts).lower(),
    ])
    out = gspo.main(*configs)
    history = json.loads((out / "log_history.json").read_text())
    logged = next(h for h in history if "reward" in h)
    used = [e for e in envs if e.env is not None]
    # Four rollouts (two seeds x G=2), each a tool call the trainer parsed into exactly the taught action.
    assert len(used) == 4 and all(e.actions == [action] for e in used)
    assert sorted(e.seed for e in used) == [0, 0, 1, 1]
    references = [replay(e.actions, seed=e.seed)[0] for e in used]
    if reward_parts:  # one reward per part (TRL's own log of each), summing to the trajectory reward
        from train.rewards import PARTS

        assert "rewards/SituRecToolEnvByParts/mean" not in logged
        assert sum(logged[f"rewards/recrm_{n}/mean"] for n in PARTS) == pytest.approx(
            sum(references) / len(references), abs=1e-6)
        assert sum(logged[f"recrm/part_{n}/advantage_share"] for n in PARTS) in (0.0, pytest.approx(1.0))
    else:
        assert logged["rewards/SituRecToolEnv/mean"] == pytest.approx(sum(references) / len(references), abs=1e-6)
    assert logged["reward"] == pytest.approx(sum(references) / len(references), abs=1e-6)


def test_an_ablated_protocol_config_reaches_the_env_and_every_prompt():
    """env_protocol / env_ablation make the training env, and the tool env's turns follow D.4 (no view)."""
    args = SituRecArguments(max_turns=3, env_image_size=[160, 120], max_tasks=1, episodes_per_task=1,
                            env_protocol="paper", env_ablation="no_ego_view_no_caption")
    env = make_recrm_env(args, "supermarket")
    assert env.unwrapped.protocol == "paper" and env.unwrapped.ablation == "no_ego_view_no_caption"
    assert "som_rgb" not in env.observation_space.spaces
    tool_env = SituRecToolEnv(args)
    first = tool_env.reset(store="supermarket", task_id=TASK, seed=0, prompt=[])
    assert "No view of the store" in first and "Current view:" not in first
    rows, _ = tool_dataset(args, seed=0)
    assert "Navigation targets" in rows[0]["prompt"][0]["content"]
    with pytest.raises(ValueError, match="env_ablation"):
        SituRecArguments(env_ablation="no_map")


# A turn that fails RecRM's instruction gate (no such dialogue action): a purchase after it earns
# only part of the outcome bonus (recrm.outcome.outcome_credit).
GATE_FAILING_TURN = {"response": "Hello! What do you need today?", "assistant_actions": [{"type": "Dance"}],
                     "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}


def play_heuristic(tool_env: SituRecToolEnv, seed: int, store: str = "supermarket", task_id: str = TASK,
                   opening: tuple[dict, ...] = ()) -> None:
    """``opening``'s turns, then the heuristic's, through ``tool_env``'s tools (it reads a shadow
    env's observations)."""
    from agents.heuristic import HeuristicAssistant

    tool_env.reset(store=store, task_id=task_id, seed=seed, prompt=[])
    shadow = make_recrm_env(tool_env.args, store)
    obs, info = shadow.reset(seed=seed, options={"task_id": task_id})
    teacher = HeuristicAssistant()
    teacher.reset(obs, agent_info(info), seed=seed)
    for action in opening:
        tool_env.assist(**action)
        obs, *_ = shadow.step(json.dumps(action, ensure_ascii=False))
    while tool_env.termination is None:
        action = json.loads(teacher.act(obs))
        tool_env.assist(**action)
        obs, *_ = shadow.step(json.dumps(action, ensure_ascii=False))
    shadow.close()


WHOLE = SituRecArguments(max_turns=20, env_image_size=[160, 120], env_text_only=True, outcome_bonus=2.0)


def test_by_parts_trl_reads_the_reward_part_by_part_from_the_environments():
    """reward_parts on the environment_factory path: the environment has no get_reward (TRL would
    add it as one more reward), and one reward function per part reads it from the environments:
    the parts sum to the trajectory reward, outcome credit included, and the logs hold them."""
    import inspect

    from train.environment import SituRecCatalogToolEnvByParts, SituRecToolEnvByParts
    from train.rewards import PARTS, part_reward_functions

    by_parts = dataclasses.replace(WHOLE, reward_parts=True)
    assert SituRecToolEnv.factory(by_parts).func is SituRecToolEnvByParts
    tools = dataclasses.replace(by_parts, catalog_view="tools", interface="environment_factory")
    assert SituRecToolEnv.factory(tools).func is SituRecCatalogToolEnvByParts
    for cls in (SituRecToolEnvByParts, SituRecCatalogToolEnvByParts):  # what TRL lists (grpo_trainer)
        assert "get_reward" not in dict(inspect.getmembers(cls, inspect.isfunction))
    whole, parted = SituRecToolEnv(WHOLE), SituRecToolEnv.factory(by_parts)()
    for env in (whole, parted):
        play_heuristic(env, seed=0, opening=(GATE_FAILING_TURN,))
    assert parted.actions == whole.actions and parted.termination == "success_cart_added"
    assert 0.0 < parted.tally.last["outcome_credit"] < 1.0  # RecRMReward's, on the last step
    logged: dict[str, float] = {}
    functions = part_reward_functions()
    values = {f.__name__: f(["p"], ["c"], environments=[parted], store=["supermarket"], task_id=[TASK], seed=[0],
                            log_metric=logged.__setitem__)[0] for f in functions}
    assert sum(values.values()) == pytest.approx(whole.get_reward())
    assert values["recrm_outcome"] == pytest.approx(2.0 * parted.tally.last["outcome_credit"])
    assert logged["siturec/success_rate"] == 1.0 and logged["siturec/pass^1"] == 1.0
    for name in PARTS:
        assert logged[f"recrm/part_{name}/mean"] == pytest.approx(values[f"recrm_{name}"])
    assert logged["recrm/total/mean"] == pytest.approx(sum(whole.totals) / len(whole.totals))
