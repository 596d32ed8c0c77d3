import json
import math

import pytest
import torch

from recrm.components import QueryItemRelevance
from recrm.composite import RecRMComposite
from recrm.context import TurnContext
from recrm.data import read_records
from recrm.data.prompts import SYSTEM_PROMPTS
from recrm.evaluate import evaluate
from recrm.scorers import SCORER_FILE, build_components, resolve_scorer
from recrm.train import RMTrainConfig, train
from recrm.train.ranker import listwise_loss


@pytest.fixture(scope="module")
def tiny_base(data_dir, tmp_path_factory):
    from train.tiny import build_tiny_model

    texts = list(SYSTEM_PROMPTS.values())
    for r in read_records(data_dir / "relevance.jsonl"):
        texts += [r.query, r.item, r.reason]
    for r in read_records(data_dir / "ranking.jsonl"):
        texts += [r.profile, *r.candidates]
    for r in read_records(data_dir / "consistency.jsonl"):
        texts += [r.facts, r.response, r.reason]
    # hidden 32, one layer: a few CPU seconds per training run; the tokenizer learns our
    # record text so prompts stay a few hundred tokens
    return str(build_tiny_model(tmp_path_factory.mktemp("rm_base"), texts, hidden_size=32, num_layers=1))


def _train(task, data_dir, base, out, **kw):
    # 3 steps of 4 records: enough to move every weight, cheap on CPU
    kw = {"max_length": 1024, **kw}
    cfg = RMTrainConfig(task=task, data=str(data_dir), model=base, out=str(out), max_steps=3, batch_size=4,
                        limit=12, learning_rate=1e-3, **kw)
    return train(cfg)


def _changed(base, trained, cls):
    a = dict(cls.from_pretrained(base).named_parameters())
    b = dict(cls.from_pretrained(trained).named_parameters())
    shared = [k for k in a if k in b and a[k].shape == b[k].shape]
    return sum(not torch.equal(a[k], b[k]) for k in shared), len(shared)


@pytest.fixture(scope="module")
def relevance_judge(data_dir, tiny_base, tmp_path_factory):
    return _train("relevance", data_dir, tiny_base, tmp_path_factory.mktemp("rm") / "relevance")


@pytest.mark.slow
def test_judge_sft_updates_weights_and_saves_a_scorer(relevance_judge, tiny_base):
    from transformers import AutoModelForCausalLM

    assert (relevance_judge / SCORER_FILE).is_file()
    changed, total = _changed(tiny_base, relevance_judge, AutoModelForCausalLM)
    assert changed == total


@pytest.mark.slow
def test_lora_judge_is_merged_on_save(data_dir, tiny_base, tmp_path):
    from transformers import AutoModelForCausalLM

    out = _train("consistency", data_dir, tiny_base, tmp_path / "cons", lora=True, lora_r=4)
    changed, total = _changed(tiny_base, out, AutoModelForCausalLM)
    assert 0 < changed < total  # adapters on the linear layers only, merged into them


def test_listwise_loss_by_hand():
    logits = torch.tensor([[2.0, 0.0, -1.0]])
    labels = torch.tensor([[1, 0, 0]])
    mask = torch.ones(1, 3, dtype=torch.long)
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    bce = -(math.log(sig(2.0)) + math.log(1 - sig(0.0)) + math.log(1 - sig(-1.0))) / 3
    ce = -math.log(math.exp(2) / (math.exp(2) + 1 + math.exp(-1)))
    assert listwise_loss(logits, labels, mask, 0.5).item() == pytest.approx(bce + 0.5 * ce, rel=1e-5)
    # a padded slot changes nothing, whatever its logit
    padded = listwise_loss(torch.tensor([[2.0, 0.0, -1.0, 9.0]]), torch.tensor([[1, 0, 0, 0]]),
                           torch.tensor([[1, 1, 1, 0]]), 0.5)
    assert padded.item() == pytest.approx(bce + 0.5 * ce, rel=1e-5)


@pytest.mark.slow
def test_ranker_and_behavior_train_and_evaluate(data_dir, tiny_base, tmp_path):
    from transformers import AutoModelForSequenceClassification

    rank = _train("ranking", data_dir, tiny_base, tmp_path / "rank", listwise_lambda=1.0)
    beh = _train("behavior", data_dir, tiny_base, tmp_path / "beh")
    for out in (rank, beh):
        changed, total = _changed(tiny_base, out, AutoModelForSequenceClassification)
        assert changed >= total - 1  # every weight but, at most, a head that loads fresh on both sides
    res = evaluate(str(data_dir), {"ranking": f"model:{rank}", "behavior": f"model:{beh}"}, limit=6)
    assert 0.0 <= res["ranking"]["hr_mean"] <= 1.0 and res["ranking"]["n"] == min(6, res["ranking"]["n"])
    assert set(res["behavior"]) >= {"acc", "auc"}


def test_registry_resolves_and_rejects():
    assert isinstance(resolve_scorer("relevance", "rule"), QueryItemRelevance)
    with pytest.raises(ValueError, match="unknown reward dimension"):
        resolve_scorer("novelty", "rule")
    with pytest.raises(ValueError, match="'rule' or 'model:PATH'"):
        resolve_scorer("relevance", "llm")
    with pytest.raises(ValueError, match="recrm_scorer.json is missing"):
        resolve_scorer("relevance", "model:/nonexistent/dir")
    with pytest.raises(ValueError, match="unknown reward dimensions"):
        build_components({"fun": "rule"})


@pytest.mark.slow
def test_model_scorer_in_the_composite_batches_like_single_turns(relevance_judge, episodes, worlds):
    world = worlds["supermarket"]
    ctxs = []
    for ep in episodes[:6]:
        task = world.tasks[ep.task_id]
        ctxs += [TurnContext.from_record(t, ep, task, world.index, ep.turns[:k]) for k, t in enumerate(ep.turns)]
    ctxs = [c for c in ctxs if c.judged_item][:5] + [c for c in ctxs if not c.judged_item][:2]
    comp = RecRMComposite(scorers={"relevance": f"model:{relevance_judge}"})
    batch = comp.score_batch(ctxs)
    single = [comp.score(c) for c in ctxs]
    assert [r.as_dict() for r in batch] == [r.as_dict() for r in single]
    for c, r in zip(ctxs, batch, strict=True):
        if c.judged_item:
            assert r.components["relevance"] in (0.0, 0.5, 1.0)
            assert r.details["relevance"]["scorer"].endswith("relevance")
        else:
            assert r.components["relevance"] is None  # no item, no judge call
    # all-rule scorers reproduce the default composite
    rule = RecRMComposite(scorers={n: "rule" for n in ("instruction", "consistency", "relevance")})
    assert [rule.score(c).total for c in ctxs] == [RecRMComposite().score(c).total for c in ctxs]


@pytest.mark.slow
def test_wrapper_takes_scorers(relevance_judge):
    import gymnasium as gym

    import situ_gym  # noqa: F401
    from recrm import RecRMReward

    env = RecRMReward(gym.make("SituRec-Supermarket-v0"), scorers={"relevance": f"model:{relevance_judge}"})
    env.reset(seed=0)
    assert env.composite.components["relevance"].path == relevance_judge.resolve()
    task = env.unwrapped.task
    name = env.unwrapped.index.products[task.target_product_id].name
    recommend = {"response": f"I'd suggest the {name}.", "ranking": [task.target_product_id],
                 "assistant_actions": [{"type": "Recommend", "display_name": name, "visible_now": False,
                                        "reason": "it fits"}]}
    rc = env.step(json.dumps(recommend))[-1]["recrm"]
    assert rc["judged_item"] == task.target_product_id
    assert rc["details"]["relevance"]["scorer"] == str(relevance_judge.resolve())  # the judge ruled
    assert rc["components"]["relevance"] in (0.0, 0.5, 1.0)
    env.close()


def test_train_cli_errors_are_one_line(capsys, tmp_path):
    from recrm.train.__main__ import main

    assert main(["novelty"]) == 2
    assert "usage:" in capsys.readouterr().err
    assert main(["relevance", "--data", str(tmp_path), "--model", "x", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "relevance.jsonl" in err


def test_every_trainer_reads_the_same_seeded_training_records(data_dir, tmp_path):
    def cfg(task, **kw):
        return RMTrainConfig(task=task, data=str(data_dir), model="m", out=str(tmp_path), **kw)

    first = [r.model_dump() for r in cfg("ranking", seed=3).train_records()]
    assert [r.model_dump() for r in cfg("ranking", seed=3).train_records()] == first  # same seed, same order
    assert [r.model_dump() for r in cfg("ranking", seed=4).train_records()] != first
    assert sorted(map(str, first)) == sorted(str(r.model_dump()) for r in read_records(data_dir / "ranking.jsonl")
                                             if r.split == "train")
    assert [r.model_dump() for r in cfg("ranking", seed=3, limit=2).train_records()] == first[:2]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "behavior.jsonl").write_text("")
    with pytest.raises(ValueError, match="no training records for 'behavior'"):
        RMTrainConfig(task="behavior", data=str(tmp_path / "empty"), model="m", out=str(tmp_path)).train_records()


def test_cross_encoder_pairs_keep_their_segments_apart_in_training_and_scoring(tiny_base):
    from transformers import AutoTokenizer

    from recrm.scorers import encode_pairs
    from recrm.train.ranker import ListCollator

    tok = AutoTokenizer.from_pretrained(tiny_base)
    first, second = "Shopper: likes vegan food\nWants: cereal", "Item: Oat Crunch, $3.49"
    enc = encode_pairs(tok, [first], [second], 256)
    # a decoder-only tokenizer has no pair template: without the break the text would read "cerealItem"
    assert tok.decode(enc["input_ids"][0]) == f"{first}\n{second}"
    batch = ListCollator(tok, 256)([{"first": first, "candidates": [second, "Item: Corn Flakes"], "labels": [1, 0]}])
    n = int(enc["attention_mask"][0].sum())
    assert batch["input_ids"][0][:n].tolist() == enc["input_ids"][0][:n].tolist()  # trained as it is scored
    assert batch["list_mask"].tolist() == [[1, 1]] and batch["labels"].tolist() == [[1, 0]]
