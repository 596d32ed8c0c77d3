"""Zero-shot chat-model judges (``llm:SPEC``), teacher labels and the paper's analyses, on scripted backends."""

import json

import pytest

from recrm.data import read_records
from recrm.judges.formats import SCHEMAS, parse_reply_text, record_requests, target
from recrm.judges.llm import LLMScorer
from situ_gym.llm import BackendUnavailable, ChatBackend, ChatResult
from situ_gym.llm.structured import parse_reply
from tests.ports import free_port

KINDS = ("instruction", "consistency", "relevance", "ranking", "behavior")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    from eval.rollout import RolloutConfig, run
    from recrm.data.__main__ import main

    root = tmp_path_factory.mktemp("llm_judges")
    runs = []
    for agent in ("heuristic", "random"):
        # 6 tasks per assistant: every record kind in both splits, a few seconds
        run(RolloutConfig(agent=agent, tasks="0-5", workers=1, seed=0, out=str(root / agent), no_report=True))
        runs.append(str(root / agent))
    assert main(["synthesize", "--runs", *runs, "--out", str(root / "data"), "--no-hf", "--eval-fraction", "0.4"]) == 0
    return root / "data"


def _records(data_dir, kind, split="test"):
    return [r for r in read_records(data_dir / f"{kind}.jsonl") if r.split == split]


class Oracle(ChatBackend):
    """Answers each request with the paper-format target of the record it was built from
    (looked up by the user message), or with ``bad`` for every ``every``-th request."""

    model = "oracle"

    def __init__(self, answers, bad="no idea", every=0):
        self.answers, self.bad, self.every = answers, bad, every
        self.batches, self.n = [], 0

    def chat_batch(self, requests):
        self.batches.append(len(requests))
        out = []
        for r in requests:
            self.n += 1
            text = self.bad if self.every and self.n % self.every == 0 else self.answers[r.messages[-1]["content"]]
            out.append(ChatResult(text=text, model=self.model))
        return out


def _oracle(kind, records, **kw):
    from recrm.judges.formats import user_message

    fields, spans = record_requests(kind, records)
    answers = {}
    for rec, (start, n) in zip(records, spans, strict=True):
        for j in range(n):
            answers[user_message(kind, fields[start + j])] = target(kind, rec, item=j if kind == "ranking" else None)
    return Oracle(answers, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_paper_targets_validate_and_read_back_as_the_label(data_dir, kind):
    recs = _records(data_dir, kind, "train")
    assert recs
    for r in recs:
        if kind == "ranking":
            assert [parse_reply_text(kind, target(kind, r, item=j)).label for j in range(len(r.candidates))] == r.labels
            continue
        text = target(kind, r)
        if SCHEMAS[kind] is not None:  # what constrained decoding would let a trained judge write
            assert parse_reply(text, SCHEMAS[kind])[1] == ""
        want = r.score if kind == "relevance" else r.label
        assert parse_reply_text(kind, text).label == want
    if kind == "consistency":  # the hallucination's kind survives in the paper's two lists
        types = {r.hallucination: parse_reply_text(kind, target(kind, r)).extra["type"] for r in recs}
        assert all(k == v for k, v in types.items())


def test_unusable_replies_are_counted_failures_not_defaults(data_dir):
    recs = _records(data_dir, "relevance")
    backend = _oracle("relevance", recs, bad='{"Relevance": {"Score": 7}}', every=2)
    judge = LLMScorer("relevance", backend, cache=None, check=False)
    fields, _ = record_requests("relevance", recs)
    verdicts = judge.judge("relevance", fields)
    assert backend.batches == [len(recs)]  # one batch for all records
    bad = [v for v in verdicts if v.label is None]
    assert len(bad) == len(recs) // 2 and all("schema" in v.error for v in bad)
    assert sum(judge.failures.values()) == len(bad) and judge.decisions == len(recs)
    good = [v.label for i, v in enumerate(verdicts) if (i + 1) % 2]
    assert good == [r.score for i, r in enumerate(recs) if (i + 1) % 2]


def test_llm_scorer_in_the_composite_scores_a_batch_of_turns(data_dir):
    from recrm.composite import RecRMComposite
    from recrm.context import TurnContext
    from recrm.data.synth import World
    from recrm.judges.formats import user_message
    from recrm.scorers import context_fields
    from situ_gym.records import TurnRecord

    world = World.load("supermarket")
    ctxs = []
    for r in _records(data_dir, "instruction", "train")[:6]:
        hist = [TurnRecord.model_validate(h) for h in r.history]
        ctxs.append(TurnContext.from_record(TurnRecord.model_validate(r.turn), None, world.tasks[r.source.task_id],
                                            world.index, hist))
    answers = {user_message("relevance", f): json.dumps({"Relevance": {"Reason": "fits", "Score": 1}})
               for f in (context_fields("relevance", c) for c in ctxs) if f is not None}
    backend = Oracle(answers)
    comp = RecRMComposite(components=None, scorers={"relevance": LLMScorer("relevance", backend, cache=None,
                                                                           check=False)})
    results = comp.score_batch(ctxs)
    assert len(backend.batches) <= 1  # every judged turn in one backend call
    for c, res in zip(ctxs, results, strict=True):
        if context_fields("relevance", c) is None:
            assert res.components["relevance"] is None
        else:
            assert res.components["relevance"] == 0.5 and res.details["relevance"]["scorer"] == "llm:oracle"



def test_a_dead_endpoint_is_one_line_before_any_record(data_dir, capsys, monkeypatch):
    from recrm.evaluate import main
    from recrm.scorers import resolve_scorer
    from situ_gym.llm import LLMSettings, configure
    from situ_gym.llm.openai_backend import reset_endpoints

    old = configure(LLMSettings(timeout=1.0, retries=1, backoff=0.01, max_backoff=0.02, persistent_after=1))
    monkeypatch.setenv("SITU_GYM_LLM_CACHE", "none")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    url = f"http://127.0.0.1:{free_port()}/v1"
    try:
        reset_endpoints()
        with pytest.raises(BackendUnavailable):
            resolve_scorer("relevance", f"llm:openai:m@{url}")
        assert main(["--scorer", f"relevance=llm:openai:m@{url}", "--data", str(data_dir)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and url in err
    finally:
        configure(old)
        reset_endpoints()


@pytest.fixture()
def oracle_backends(data_dir, monkeypatch):
    """``llm:oracle`` answers every kind from the records' own labels (one wrong in three for
    relevance, chosen by the text), through the same factory the CLIs use."""
    import situ_gym.llm as llm

    answers = {}
    for kind in KINDS:
        answers.update(_oracle(kind, _records(data_dir, kind)).answers)
    backend = Oracle(answers)
    wrong = json.dumps({"Relevance": {"Reason": "other kind", "Score": 0}})

    class Flaky(Oracle):
        def chat_batch(self, requests):
            out = backend.chat_batch(requests)
            for i, r in enumerate(requests):
                # by content, so that labelling and evaluation err on the same records
                if "Relevance Evaluation" in r.messages[0]["content"] and len(r.messages[-1]["content"]) % 3 == 0:
                    out[i] = ChatResult(text=wrong, model="oracle")
            return out

    flaky = Flaky({})
    monkeypatch.setattr(llm, "make_backend", lambda spec, **kw: flaky)
    monkeypatch.setattr(llm, "check_backend", lambda spec, **kw: None)
    return backend


def test_label_writes_the_teacher_beside_the_rule_label(data_dir, tmp_path, oracle_backends, capsys):
    from recrm.data.__main__ import main

    out = tmp_path / "teacher"
    assert main(["label", "--teacher", "oracle:x", str(data_dir), "--out", str(out), "--split", "test"]) == 0
    assert "labelled=" in capsys.readouterr().out
    for kind in KINDS:
        before, after = read_records(data_dir / f"{kind}.jsonl"), read_records(out / f"{kind}.jsonl")
        assert [r.id for r in before] == [r.id for r in after]
        for b, a in zip(before, after, strict=True):
            assert b.model_dump(exclude={"teacher"}) == a.model_dump(exclude={"teacher"})  # the rule label kept
            if a.split == "train":
                assert a.teacher is None
            else:
                assert a.teacher is not None and a.teacher.model == "llm:oracle:x"
                if kind == "ranking":
                    assert a.teacher.labels == a.labels
                elif kind != "relevance":
                    assert a.teacher.label == (a.label if kind != "relevance" else a.score)
    assert json.loads((out / "teacher.json").read_text())["teacher"] == "llm:oracle:x"
    # an unlabelled file reads as before: no "teacher" key on its lines
    assert '"teacher"' not in (data_dir / "relevance.jsonl").read_text()


def test_evaluate_prints_the_paper_tables_for_rule_and_zero_shot_rows(data_dir, tmp_path, oracle_backends, capsys):
    from recrm.data.__main__ import main as data_main
    from recrm.evaluate import evaluate_rows, main

    out = tmp_path / "teacher"
    assert data_main(["label", "--teacher", "oracle:x", str(data_dir), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["--scorer", "rule", "--scorer", "llm:oracle:x", "--data", str(out)]) == 0
    text = capsys.readouterr().out
    for head in ("| scorer | IF ACC | IF F1 | FC ACC", "Agreement of the records' labels", "Discriminability",
                 "Failures by type", "| rule |", "| llm:oracle:x |"):
        assert head in text
    report = evaluate_rows(str(out), {"llm": {k: "llm:oracle:x" for k in KINDS}})
    rows = report["rows"]["llm"]
    assert rows["instruction"]["acc"] == 1.0 and rows["consistency"]["acc"] == 1.0
    assert rows["ranking"]["hr_mean"] == 1.0 and rows["behavior"]["acc"] == 1.0
    assert rows["relevance"]["acc"] < 1.0  # one answer in three is "0"
    fails = report["failures"]["llm"]["relevance"]
    assert set(fails) <= {"category misjudgement", "condition misjudgement", "multi-condition misjudgement"}
    assert sum(fails.values()) == round((1 - rows["relevance"]["acc"]) * rows["relevance"]["n"])
    # the teacher agrees with the rule labels except where it was made to err
    agree = report["agreement"]
    assert agree["instruction"]["overall (label)"]["raw"] == 1.0 and agree["consistency"]["item hallucination"]["raw"] == 1.0
    assert agree["relevance"]["score (0/1/2)"]["raw"] < 1.0
    disc = report["discriminability"]["llm"]["instruction"]["groups"]
    assert disc["intact"]["mean"] == 5.0 and all(g["mean"] == 1.0 for k, g in disc.items() if k != "intact")
    # evaluated against the teacher's labels instead, the teacher's own answers score 100 %
    own = evaluate_rows(str(out), {"llm": {"relevance": "llm:oracle:x"}}, labels="teacher")
    assert own["rows"]["llm"]["relevance"]["acc"] == 1.0


def test_agreement_stats_by_hand():
    from recrm.judges.analysis import agreement_stats

    m = agreement_stats([0, 1, 2, 2, 1], [0, 1, 2, 1, 1])
    assert m["n"] == 5 and m["raw"] == pytest.approx(0.8)
    assert 0 < m["kappa_w"] < 1 and 0 < m["spearman"] < 1
    const = agreement_stats([1, 1], [1, 1])
    assert const["raw"] == 1.0 and const["spearman"] is None


def test_recrm_score_takes_an_llm_scorer(tmp_path, monkeypatch, capsys):
    import situ_gym.llm as llm
    from eval.rollout import RolloutConfig, run
    from recrm.score import main

    run(RolloutConfig(agent="heuristic", tasks="0-1", workers=1, seed=0, out=str(tmp_path / "h"), no_report=True))
    backend = Oracle({}, bad=json.dumps({"Relevance": {"Reason": "fits", "Score": 2}}), every=1)
    monkeypatch.setattr(llm, "make_backend", lambda spec, **kw: backend)
    monkeypatch.setattr(llm, "check_backend", lambda spec, **kw: None)
    from recrm.scorers import _shared_llm_scorer

    _shared_llm_scorer.cache_clear()
    traj = str(tmp_path / "h" / "trajectories.jsonl")
    assert main([traj, "--scorer", "relevance=llm:oracle:y", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overall"]["components"]["relevance"]["mean"] == 1.0  # the chat model's verdict, not the rule's
    assert len(backend.batches) == 2  # one backend call per episode
    with pytest.raises(SystemExit) as exit_:
        main([traj, "--scorer", "relevance"])
    assert exit_.value.code == 2 and "DIMENSION=SPEC" in capsys.readouterr().err
    _shared_llm_scorer.cache_clear()
