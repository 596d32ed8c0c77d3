"""Trained judges in the paper's formats, the generative ranking / behaviour heads, head selection and the
augmentation ablation, on a tiny from-scratch model (nothing downloaded)."""

import json

import pytest

from recrm.data import read_records
from recrm.judges.formats import SYSTEM_PROMPTS, parse_reply_text
from recrm.train import RMTrainConfig, train
from recrm.train.judge import generative_rows, judge_rows
from tests.recrm.test_llm_judges import data_dir  # noqa: F401  (the module's small database)


@pytest.fixture(scope="module")
def tiny_base(data_dir, tmp_path_factory):  # noqa: F811
    from train.tiny import build_tiny_model

    texts = list(SYSTEM_PROMPTS.values())
    for kind in ("relevance", "ranking", "behavior"):
        for r in read_records(data_dir / f"{kind}.jsonl"):
            texts += [r.query, *(getattr(r, "candidates", None) or getattr(r, "items", None) or [r.item]), r.profile
                      if hasattr(r, "profile") else r.reason]
    # hidden 32, one layer: a few CPU seconds per training run
    return str(build_tiny_model(tmp_path_factory.mktemp("fmt_base"), texts, hidden_size=32, num_layers=1))


def test_sft_targets_are_the_paper_formats(data_dir):  # noqa: F811
    recs = [r for r in read_records(data_dir / "instruction.jsonl") if r.split == "train"]
    rows = judge_rows("instruction", recs, "paper")
    answer = json.loads(rows[0]["completion"][0]["content"])
    assert set(answer["instruction_following_score"]) == {"overall_score", "dimension_scores", "detailed_reasoning",
                                                          "critical_violations", "summary"}
    assert "Instruction Following Assessment Expert" in rows[0]["prompt"][0]["content"]
    assert judge_rows("instruction", recs[:1])[0]["completion"][0]["content"].startswith("Reason: ")  # short
    ranking = [r for r in read_records(data_dir / "ranking.jsonl") if r.split == "train"]
    grows = generative_rows("ranking", ranking[:2])
    assert len(grows) == sum(len(r.candidates) for r in ranking[:2])
    assert [g["completion"][0]["content"] for g in grows[: len(ranking[0].candidates)]] == \
        ["yes" if y else "no" for y in ranking[0].labels]


def test_the_augmentation_ablation_drops_only_synthesised_negatives(data_dir, tmp_path):  # noqa: F811
    for kind in ("instruction", "consistency"):
        kw = dict(task=kind, data=str(data_dir), model="unused", out=str(tmp_path))
        with_neg = RMTrainConfig(**kw).train_records()
        without = RMTrainConfig(**kw, synthesised_negatives=False).train_records()
        assert 0 < len(without) < len(with_neg)
        assert all(r.label == 1 for r in without)
        assert {r.id for r in without} == {r.id for r in with_neg if r.label == 1}
    with pytest.raises(ValueError, match="head must be one of"):
        RMTrainConfig(task="ranking", data="d", model="m", out="o", head="tower")


def _cfg(task, data_dir, base, out, **kw):  # noqa: F811
    # 2 steps of 4 records: enough to move the weights and write a scorer, cheap on CPU
    kw = {"limit": 8, **kw}
    return RMTrainConfig(task=task, data=str(data_dir), model=base, out=str(out), max_steps=2, batch_size=4,
                         learning_rate=1e-3, max_length=2048, **kw)


@pytest.mark.slow
def test_paper_format_judge_trains_scores_and_evaluates(data_dir, tiny_base, tmp_path):  # noqa: F811
    from recrm.evaluate import evaluate
    from recrm.scorers import load_model_scorer

    out = train(_cfg("relevance", data_dir, tiny_base, tmp_path / "rel"))
    meta = json.loads((out / "recrm_scorer.json").read_text())
    assert meta["format"] == "paper" and meta["type"] == "judge"
    scorer = load_model_scorer(out, "relevance")
    rec = [r for r in read_records(data_dir / "relevance.jsonl") if r.split == "test"][0]
    (text,) = scorer.generate([{"query": rec.query, "item": rec.item}])
    # decoded under the reply's schema: even an untrained judge writes the paper's JSON
    assert parse_reply_text("relevance", text).label in (0, 1, 2)
    res = evaluate(str(data_dir), {"relevance": f"model:{out}"}, limit=4)["relevance"]
    assert res["n"] == 4 and res["unparsed"] == 0


@pytest.mark.slow
def test_generative_heads_score_by_p_yes_and_select_keeps_the_better(data_dir, tiny_base, tmp_path):  # noqa: F811
    from recrm.evaluate import evaluate

    gen = train(_cfg("behavior", data_dir, tiny_base, tmp_path / "beh", head="generative"))
    assert json.loads((gen / "recrm_scorer.json").read_text())["type"] == "generative"
    res = evaluate(str(data_dir), {"behavior": f"model:{gen}"}, limit=6)["behavior"]
    assert res["n"] == 6 and res["unparsed"] == 0 and set(res) >= {"acc", "auc"}
    out = train(_cfg("ranking", data_dir, tiny_base, tmp_path / "rank", head="select", limit=4))
    sel = json.loads((out / "selection.json").read_text())
    assert sel["chosen"] in ("classifier", "generative") and set(sel["metrics"]) == {"classifier", "generative"}
    meta = json.loads((out / "recrm_scorer.json").read_text())
    assert meta["type"] == ("generative" if sel["chosen"] == "generative" else "cross_encoder")
    hr = {h: m["hr_mean"] for h, m in sel["metrics"].items()}
    assert hr[sel["chosen"]] == max(hr.values())


def test_an_hf_chat_backend_gives_p_yes_not_a_greedy_word(data_dir, tiny_base):  # noqa: F811
    from recrm.judges.formats import record_requests
    from recrm.judges.llm import LLMScorer

    recs = [r for r in read_records(data_dir / "behavior.jsonl") if r.split == "test"][:3]
    fields, _ = record_requests("behavior", recs)
    judge = LLMScorer("behavior", f"llm:hf:{tiny_base}", cache=None)
    verdicts = judge.judge("behavior", fields)
    probs = [v.extra["prob"] for v in verdicts]
    assert all(0.0 < p < 1.0 for p in probs) and len(set(probs)) > 1  # a probability per list, from the logits
    assert [v.label for v in verdicts] == [int(p > 0.5) for p in probs] and not judge.failures
