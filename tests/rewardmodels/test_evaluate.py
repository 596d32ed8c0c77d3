import pytest

from recrm.data import read_records
from recrm.evaluate import (
    behavior_metrics,
    judge_metrics,
    main,
    metrics_for,
    ranking_metrics,
    rule_predictions,
)


def test_judge_metrics_by_hand():
    m = judge_metrics([0, 0, 1, 1], [0, 1, 1, 1], 2)
    assert m["acc"] == 0.75
    # F1: class 0 = 2/3, class 1 = 0.8
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    # kappa: po = 0.75, pe = 0.5*0.25 + 0.5*0.75 = 0.5
    assert m["kappa_w"] == pytest.approx(0.5)
    # linear weights: a 0-vs-2 miss costs twice a 0-vs-1 miss
    near = judge_metrics([0, 1, 2, 2], [1, 1, 2, 2], 3)["kappa_w"]
    far = judge_metrics([0, 1, 2, 2], [2, 1, 2, 2], 3)["kappa_w"]
    assert near > far


def test_unparsed_verdicts_count_as_misses():
    m = judge_metrics([1, 0, 1], [None, None, 1], 2)
    assert m["acc"] == pytest.approx(1 / 3) and m["unparsed"] == 2


def test_ranking_metrics_hit_rates_and_ties():
    lists = [([0, 0, 1, 0], [0.9, 0.1, 0.8, 0.2]), ([1, 0, 0, 0], [0.7, 0.1, 0.2, 0.3])]
    m = ranking_metrics(lists)
    assert m["hr@1"] == 0.5 and m["hr@3"] == 1.0 and m["hr_mean"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert m["auc"] == pytest.approx(10 / 12)  # 2 positives x 6 negatives: only the 0.9 negative outranks them
    # a constant scorer does not get the first place for free: ties go by candidate order
    const = ranking_metrics([([0, 0, 1], [0.5, 0.5, 0.5])])
    assert const["hr@1"] == 0.0 and const["hr@3"] == 1.0


def test_behavior_metrics():
    m = behavior_metrics([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6])
    assert m["acc"] == 0.5 and m["auc"] == 0.75


def test_rule_scorers_on_held_out_data(data_dir, worlds):
    results = {}
    for kind in ("instruction", "consistency", "relevance", "ranking", "behavior"):
        recs = [r for r in read_records(data_dir / f"{kind}.jsonl") if r.split == "test"]
        assert recs, kind
        results[kind] = metrics_for(kind, recs, rule_predictions(kind, recs, worlds))
    # the rule relevance judge applies the same 0/1/2 criteria the labels come from
    assert results["relevance"]["acc"] == 1.0
    # ungrounded claims ("cures colds") are beyond the rule: consistency cannot be perfect
    cons = [r for r in read_records(data_dir / "consistency.jsonl") if r.split == "test"]
    if any(r.check == "ungrounded" for r in cons):
        assert results["consistency"]["acc"] < 1.0
    assert results["ranking"]["hr_mean"] > 0.5


def test_cli_prints_a_table_and_rejects_bad_specs(data_dir, capsys):
    assert main(["--scorer", "rule", "--data", str(data_dir), "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| dimension | scorer |") and "| relevance | rule |" in out
    assert main(["--scorer", "relevance=magic", "--data", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert "must be 'rule' or 'model:PATH'" in err and len(err.strip().splitlines()) == 1
    assert main(["--scorer", "ranking=model:/nonexistent", "--data", str(data_dir)]) == 2
    assert "recrm_scorer.json is missing" in capsys.readouterr().err
