"""Zero-shot judges through any chat backend: the ``llm:SPEC`` scorer of every reward dimension.

``SPEC`` is a chat-backend spec (``situ_gym.llm.make_backend``): ``llm:hf:gguf:smollm2``,
``llm:hf:/path/folder``, ``llm:openai:MODEL`` (``OPENAI_BASE_URL``), or
``llm:openai:MODEL@http://host:8000/v1`` with the server's base URL after ``@``. The judge
reads the paper's prompt of its dimension (``recrm.judges.formats``) and answers under its
JSON Schema (constrained decoding on the HF backend, ``response_format`` over HTTP); all the
turns (or records) of a call go to the backend as one batch, answered from the response
cache (``$SITU_GYM_LLM_CACHE``, default ``~/.cache/situ_gym/llm_responses.sqlite``;
``none`` disables it) where it can. Ranking and behaviour are generative: per candidate (per
list) the judge answers yes/no (1/0); on an ``hf:`` backend the score is P(yes) (P(1)) read
off the model's next-token logits, elsewhere the answer itself (1.0 or 0.0).

A reply out of format, or a request the backend refused, is a failure: counted in
``failures`` (by reason) and in the usage meter (a decision not ``used``), logged once per
batch, and given to the reward as 0 with the reason in the details (to an evaluation as
an unparsed verdict); it is never replaced by a default verdict. A backend that cannot
answer at all (a dead endpoint) raises ``BackendUnavailable`` when the scorer is built.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from recrm.components import ComponentScore
from recrm.context import TurnContext
from recrm.inputs import context_fields
from recrm.judges.formats import (
    GENERATIVE_KINDS,
    JUDGE_KINDS,
    MAX_TOKENS,
    SCHEMAS,
    Verdict,
    messages,
    parse_reply_text,
    yes_no_words,
)

__all__ = ["LLMScorer", "parse_llm_spec", "rank_value", "judge_value"]

logger = logging.getLogger(__name__)

PREFIX = "llm:"


def parse_llm_spec(spec: str) -> tuple[str, str | None]:
    """``(backend spec, base URL or None)`` of ``llm:SPEC[@URL]``.

    >>> parse_llm_spec("llm:openai:qwen@http://localhost:8000/v1")
    ('openai:qwen', 'http://localhost:8000/v1')
    >>> parse_llm_spec("llm:hf:gguf:smollm2")
    ('hf:gguf:smollm2', None)
    """
    if not spec.startswith(PREFIX) or not spec[len(PREFIX):]:
        raise ValueError(f"an LLM scorer spec is 'llm:SPEC' (e.g. llm:hf:gguf:smollm2), got {spec!r}")
    body = spec[len(PREFIX):]
    at = body.find("@http")
    if at == -1:
        return body, None
    return body[:at], body[at + 1:]


def _cache_arg(cache: Any) -> Any:
    if cache != "default":
        return cache
    env = os.environ.get("SITU_GYM_LLM_CACHE", "")
    if env.lower() == "none":
        return None
    from situ_gym.llm import default_cache_path

    return default_cache_path()


def rank_value(probs: Sequence[float]) -> float:
    """R_rank from per-item purchase probabilities in ranked order: DCG over the ideal, times the best.

    >>> rank_value([0.9, 0.1])
    0.9
    """
    dcg = sum(p / math.log2(r + 2) for r, p in enumerate(probs))
    ideal = sum(p / math.log2(r + 2) for r, p in enumerate(sorted(probs, reverse=True)))
    return min(1.0, (dcg / ideal if ideal > 0 else 0.0) * max(probs))


def judge_value(kind: str, label: int) -> float:
    """A verdict's label as a reward component value in [0, 1] (relevance: score / 2)."""
    return label / 2 if kind == "relevance" else float(label)


class LLMScorer:
    """The ``name`` dimension judged by a chat model (``spec``: ``"llm:SPEC"`` or a ChatBackend).

    ``score(ctx)`` / ``score_batch(ctxs)``: the RewardComponent protocol; ``judge(kind,
    fields)``: Verdicts for raw judge inputs (evaluation, teacher labelling). ``failures``
    counts unusable answers by reason, ``decisions`` every answer asked for.
    """

    def __init__(self, name: str, spec: Any, *, cache: Any = "default", check: bool = True,
                 probabilities: bool = True):
        from situ_gym.llm import ChatBackend, check_backend, make_backend

        if name not in JUDGE_KINDS + GENERATIVE_KINDS:
            raise ValueError(f"unknown reward dimension {name!r}")
        self.name = name
        if isinstance(spec, ChatBackend):
            self.spec, base_url, backend_spec = f"llm:{spec.model}", None, spec
        else:
            backend_spec, base_url = parse_llm_spec(spec)
            self.spec = spec
        if check:
            check_backend(backend_spec, base_url=base_url)
        self.backend = make_backend(backend_spec, base_url=base_url, cache=_cache_arg(cache))
        self.probabilities = bool(probabilities)
        self.failures: Counter[str] = Counter()
        self.decisions = 0

    # ------------------------------------------------------------------ answers
    def _hf_model(self):
        """(model, tokenizer) behind an ``hf:`` text backend, else None."""
        inner = getattr(self.backend, "inner", self.backend)
        if not self.probabilities or not hasattr(inner, "net") or getattr(inner, "supports_images", False):
            return None
        return inner.net, inner.tokenizer

    def judge(self, kind: str, fields: Sequence[Mapping[str, Any]]) -> list[Verdict]:
        """One Verdict per judge input, from one backend batch (failures counted, never defaulted)."""
        from situ_gym.llm import METER, ChatRequest

        if not fields:
            return []
        convs = [messages(kind, f) for f in fields]
        hf = self._hf_model() if kind in GENERATIVE_KINDS else None
        if hf is not None:
            from recrm.judges.generative import yes_probs

            pos, neg = yes_no_words(kind)
            probs = yes_probs(hf[0], hf[1], convs, pos, neg)
            verdicts = [Verdict(int(p > 0.5), {"prob": float(p)}) for p in probs]
        else:
            requests = [ChatRequest(c, role="judge", max_tokens=MAX_TOKENS[kind], temperature=0.0,
                                    json_mode=SCHEMAS[kind] is not None, schema=SCHEMAS[kind]) for c in convs]
            verdicts = []
            for res in self.backend.chat_batch(requests):
                if res.error is not None:
                    verdicts.append(Verdict(None, error=f"the backend refused the request: {res.error}"))
                else:
                    verdicts.append(parse_reply_text(kind, res.text))
        failed = [v.error for v in verdicts if v.label is None]
        self.decisions += len(verdicts)
        for err in failed:
            self.failures[str(err).split(":")[0][:60]] += 1
        METER.add("judge", model=self.backend.model, decisions=len(verdicts), used=len(verdicts) - len(failed))
        if failed:
            logger.warning("%s judge %s: %d of %d answers unusable (first: %s)", kind, self.spec, len(failed),
                           len(verdicts), failed[0])
        return verdicts

    # ------------------------------------------------------------------ reward component
    def score(self, ctx: TurnContext) -> ComponentScore:
        return self.score_batch([ctx])[0]

    def score_batch(self, ctxs: Sequence[TurnContext]) -> list[ComponentScore]:
        kind = self.name
        per_turn = [context_fields(kind, c) for c in ctxs]
        inputs, spans = [], []
        for f in per_turn:
            if f is None:
                spans.append(None)
            elif kind == "ranking":
                spans.append((len(inputs), len(f["items"])))
                inputs += [{"profile": f["profile"], "query": f["query"], "item": it} for it in f["items"]]
            else:
                spans.append((len(inputs), 1))
                inputs.append(f)
        verdicts = self.judge(kind, inputs)
        out = []
        for span in spans:
            if span is None:
                out.append(ComponentScore(None, {"reason": "not applicable", "scorer": self.spec}))
                continue
            vs = verdicts[span[0]: span[0] + span[1]]
            bad = [v.error for v in vs if v.label is None]
            if bad:
                out.append(ComponentScore(0.0, {"scorer": self.spec, "failed": True, "error": bad[0]}))
            elif kind == "ranking":
                probs = [v.extra.get("prob") if v.extra.get("prob") is not None else float(v.label) for v in vs]
                out.append(ComponentScore(rank_value(probs), {"scorer": self.spec,
                                                              "click_probs": [round(p, 4) for p in probs]}))
            elif kind == "behavior":
                p = vs[0].extra.get("prob")
                out.append(ComponentScore(float(vs[0].label) if p is None else float(p),
                                          {"scorer": self.spec, **vs[0].as_dict()}))
            else:
                out.append(ComponentScore(judge_value(kind, vs[0].label), {"scorer": self.spec, **vs[0].as_dict()}))
        return out
