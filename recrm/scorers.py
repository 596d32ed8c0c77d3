"""Scorer registry: each reward dimension is a rule, a learned model or a chat model ("rule" / "model:PATH" / "llm:SPEC").

``build_components({"relevance": "model:runs/rm/relevance"})`` returns the five components
with the named ones replaced; every component answers ``score(ctx)`` (the
``RewardComponent`` protocol) and ``score_batch(ctxs)`` (one batched forward pass over the
turns of a vector of envs). A model folder holds a transformers checkpoint and
``recrm_scorer.json`` saying which dimension it scores and how (``judge``: a causal LM
writing ``Reason: ... Score: N``; ``cross_encoder``: one logit per (shopper, item) pair;
``classifier``: two classes over a recommended list; ``generative``: a causal LM answering
yes/no per item or 1/0 per list, scored by P(yes)). ``llm:SPEC`` is a zero-shot judge through
a chat backend (``recrm.judges.llm``), e.g. ``llm:hf:gguf:smollm2``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from recrm import dimensions as dims
from recrm.components import ComponentScore, RewardComponent
from recrm.context import TurnContext
from recrm.data.prompts import judge_messages, list_text, pair_text, parse_score
from recrm.inputs import context_fields
from situ_gym import jsonl

__all__ = [
    "SCORER_FILE",
    "REWARD_DIMENSIONS",
    "ModelScorer",
    "JudgeScorer",
    "CrossEncoderScorer",
    "ListClassifierScorer",
    "GenerativeScorer",
    "load_model_scorer",
    "resolve_scorer",
    "build_components",
    "score_batch",
    "context_fields",
    "encode_pairs",
]

logger = logging.getLogger(__name__)

SCORER_FILE = "recrm_scorer.json"
# the declared dimensions (recrm.dimensions); the functions below also take registered ones
REWARD_DIMENSIONS = dims.DIMENSION_NAMES
_TYPES = dims.MODEL_TYPES  # a scorer folder's default type per dimension


def score_batch(component: RewardComponent, ctxs: Sequence[TurnContext]) -> list[ComponentScore]:
    """``component.score_batch(ctxs)`` when it has one, else one ``score`` per turn."""
    batch = getattr(component, "score_batch", None)
    return list(batch(ctxs)) if callable(batch) else [component.score(c) for c in ctxs]


def encode_pairs(tokenizer, firsts: Sequence[str], seconds: Sequence[str], max_length: int):
    """Tensors of (first, second) pairs for a cross-encoder, the same in training and scoring.

    A decoder-only tokenizer (SmolLM2, the tiny test models) has no pair template and glues
    the segments ("...likes veganItem: ..."); a line break ends the first segment, the kind
    of whitespace a BERT-style pair template drops anyway.
    """
    return tokenizer([f"{f}\n" for f in firsts], list(seconds), return_tensors="pt", padding=True,
                     truncation=True, max_length=max_length)


class ModelScorer:
    """Base of the learned scorers: loads a checkpoint folder once, scores in batches."""

    def __init__(self, path: str | Path, name: str, meta: Mapping[str, Any], *, batch_size: int = 16,
                 device: str | None = None):
        import torch

        self.path, self.name, self.meta = Path(path), name, dict(meta)
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer, self.model = self._load()
        self.model.to(self.device).eval()

    def _load(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def score(self, ctx: TurnContext) -> ComponentScore:
        return self.score_batch([ctx])[0]

    def score_batch(self, ctxs: Sequence[TurnContext]) -> list[ComponentScore]:
        fields = [context_fields(self.name, c) for c in ctxs]
        todo = [f for f in fields if f is not None]
        values = iter(self.predict(todo)) if todo else iter(())
        out = []
        for f in fields:
            if f is None:
                out.append(ComponentScore(None, {"reason": "not applicable", "scorer": str(self.path)}))
            else:
                value, details = next(values)
                out.append(ComponentScore(value, {**details, "scorer": str(self.path)}))
        return out

    def predict(self, fields: Sequence[Mapping[str, Any]]) -> list[tuple[float, dict]]:  # pragma: no cover
        raise NotImplementedError


class JudgeScorer(ModelScorer):
    """A generative judge, greedy. Its folder's ``format`` says what it writes: ``paper`` (the
    paper's JSON, ``recrm.judges.formats``, decoded under its schema where llguidance is
    installed) or ``short`` (``Reason: ... Score: N``; folders from before formats existed).
    Value = label / max; an unreadable answer scores 0 with ``failed`` and the reason in the details."""

    def _load(self):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(self.path))
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        return tok, AutoModelForCausalLM.from_pretrained(str(self.path))

    @property
    def format(self) -> str:
        return str(self.meta.get("format", "short"))

    def _processors(self, n: int):
        from recrm.judges.formats import SCHEMAS

        if self.format != "paper" or SCHEMAS.get(self.name) is None:
            return None
        try:
            from situ_gym.llm.structured import GrammarConstraint
        except ImportError:  # pragma: no cover - llguidance is a dependency of situ-gym[llm]
            return None
        if getattr(self, "_grammar", None) is None:
            eos = self.model.generation_config.eos_token_id
            eos = [eos] if isinstance(eos, int) else list(eos or [])
            eos = sorted({int(i) for i in [*eos, self.tokenizer.eos_token_id] if i is not None})
            try:
                self._grammar = GrammarConstraint(self.tokenizer, vocab_size=self.model.get_output_embeddings()
                                                  .weight.shape[0], eos_ids=eos)
            except (ImportError, ValueError) as exc:
                logger.warning("judge %s decodes unconstrained: %s", self.path, exc)
                self._grammar = False
        if self._grammar is False:
            return None
        from transformers import LogitsProcessorList

        return LogitsProcessorList([self._grammar.logits_processor([SCHEMAS[self.name]] * n)])

    def generate(self, fields: Sequence[Mapping[str, Any]]) -> list[str]:
        import torch

        from recrm.judges import formats

        paper = self.format == "paper"
        prompts = [
            self.tokenizer.apply_chat_template(
                formats.messages(self.name, dict(f)) if paper else judge_messages(self.name, dict(f)),
                tokenize=False, add_generation_prompt=True)
            for f in fields
        ]
        budget = int(self.meta.get("max_new_tokens", formats.MAX_TOKENS[self.name] if paper else 48))
        answers: list[str] = []
        for i in range(0, len(prompts), self.batch_size):
            enc = self.tokenizer(prompts[i : i + self.batch_size], return_tensors="pt", padding=True,
                                 add_special_tokens=False).to(self.device)
            processors = self._processors(enc["input_ids"].shape[0])
            with torch.no_grad():
                gen = self.model.generate(**enc, max_new_tokens=budget, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id,
                                          **({"logits_processor": processors} if processors else {}))
            answers += self.tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        return answers

    def verdicts(self, fields: Sequence[Mapping[str, Any]]):
        """The judge's Verdicts (``recrm.judges.formats.Verdict``) on raw judge inputs."""
        from recrm.judges.formats import Verdict, parse_reply_text

        out = []
        for text in self.generate(fields):
            if self.format == "paper":
                out.append(parse_reply_text(self.name, text))
            else:
                s = parse_score(self.name, text)
                out.append(Verdict(s, {"answer": text.strip()[:300]},
                                   None if s is not None else "no in-range 'Score: N' in the answer"))
        return out

    def predict(self, fields):
        from recrm.judges.llm import judge_value

        out = []
        for v in self.verdicts(fields):
            if v.label is None:
                out.append((0.0, {"failed": True, "error": v.error, "score": None}))
            else:
                out.append((judge_value(self.name, v.label), {"score": v.label, **v.extra}))
        return out


class GenerativeScorer(ModelScorer):
    """The paper's generative reranker (yes/no per item, score = P(yes)) or behaviour model (1/0 per list)."""

    _load = JudgeScorer._load

    def verdicts(self, fields: Sequence[Mapping[str, Any]]):
        from recrm.judges.formats import Verdict, messages, yes_no_words
        from recrm.judges.generative import yes_probs

        pos, neg = yes_no_words(self.name)
        probs = yes_probs(self.model, self.tokenizer, [messages(self.name, f) for f in fields], pos, neg,
                          batch_size=self.batch_size)
        return [Verdict(int(p > 0.5), {"prob": float(p)}) for p in probs]

    def predict(self, fields):
        from recrm.judges.llm import rank_value

        if self.name == "ranking":
            flat = [{"profile": f["profile"], "query": f["query"], "item": it} for f in fields for it in f["items"]]
            probs = iter(v.extra["prob"] for v in self.verdicts(flat))
            out = []
            for f in fields:
                ps = [next(probs) for _ in f["items"]]
                out.append((rank_value(ps), {"click_probs": [round(p, 4) for p in ps]}))
            return out
        return [(v.extra["prob"], {"prob": round(v.extra["prob"], 4)}) for v in self.verdicts(fields)]


class CrossEncoderScorer(ModelScorer):
    """R_rank from a cross-encoder: DCG of the ranked items' click probabilities, over the ideal."""

    def _load(self):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(self.path))
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        model = AutoModelForSequenceClassification.from_pretrained(str(self.path))
        model.config.pad_token_id = tok.pad_token_id
        return tok, model

    def pair_logits(self, firsts: Sequence[str], seconds: Sequence[str]) -> list[float]:
        import torch

        out: list[float] = []
        for i in range(0, len(firsts), self.batch_size):
            enc = encode_pairs(self.tokenizer, firsts[i : i + self.batch_size], seconds[i : i + self.batch_size],
                               int(self.meta.get("max_length", 384))).to(self.device)
            with torch.no_grad():
                out += self.model(**enc).logits[:, 0].float().cpu().tolist()
        return out

    def predict(self, fields):
        firsts, seconds, spans = [], [], []
        for f in fields:
            spans.append((len(firsts), len(f["items"])))
            firsts += [pair_text(f["profile"], f["query"])] * len(f["items"])
            seconds += list(f["items"])
        logits = self.pair_logits(firsts, seconds)
        out = []
        for start, n in spans:
            probs = [1.0 / (1.0 + math.exp(-x)) for x in logits[start : start + n]]
            dcg = sum(p / math.log2(r + 2) for r, p in enumerate(probs))
            ideal = sum(p / math.log2(r + 2) for r, p in enumerate(sorted(probs, reverse=True)))
            # ordered like the model would, and how likely the best item is a click
            value = (dcg / ideal if ideal > 0 else 0.0) * max(probs)
            out.append((min(1.0, value), {"click_probs": [round(p, 4) for p in probs]}))
        return out


class ListClassifierScorer(ModelScorer):
    """R_beh from a list-level classifier: P(the shopper acts on this list)."""

    _load = CrossEncoderScorer._load

    def list_probs(self, texts: Sequence[str]) -> list[float]:
        import torch

        out: list[float] = []
        for i in range(0, len(texts), self.batch_size):
            enc = self.tokenizer(list(texts[i : i + self.batch_size]), return_tensors="pt", padding=True,
                                 truncation=True, max_length=768).to(self.device)
            with torch.no_grad():
                out += torch.softmax(self.model(**enc).logits.float(), -1)[:, 1].cpu().tolist()
        return out

    def predict(self, fields):
        probs = self.list_probs([list_text(f["profile"], f["query"], f["items"]) for f in fields])
        return [(float(p), {"prob": round(float(p), 4)}) for p in probs]


_CLASSES = {"judge": JudgeScorer, "cross_encoder": CrossEncoderScorer, "classifier": ListClassifierScorer,
            "generative": GenerativeScorer}


def load_model_scorer(path: str | Path, name: str | None = None, **kwargs: Any) -> ModelScorer:
    """The learned scorer saved in ``path`` (a folder with ``recrm_scorer.json``)."""
    path = Path(path)
    meta_file = path / SCORER_FILE
    if not meta_file.is_file():
        raise ValueError(f"{path} is not a RecRM scorer folder: {SCORER_FILE} is missing (train one with python -m recrm.train)")
    meta = jsonl.loads(meta_file.read_text(encoding="utf-8"))
    dim = meta.get("dimension")
    known = dims.dimension_names()
    if dim not in known:
        raise ValueError(f"{meta_file}: dimension must be one of {list(known)}, got {dim!r}")
    if name is not None and name != dim:
        raise ValueError(f"{path} scores {dim!r}, not {name!r}")
    kind = meta.get("type", dims.dimension(dim).model)
    if kind not in _CLASSES:
        raise ValueError(f"{meta_file}: type must be one of {list(_CLASSES)}, got {kind!r}")
    return _CLASSES[kind](path, dim, meta, **kwargs)


@lru_cache(maxsize=16)
def _shared_llm_scorer(spec: str, name: str):
    # one backend (and one loaded local model) per process and spec, whatever the number of envs
    from recrm.judges.llm import LLMScorer

    return LLMScorer(name, spec)


@lru_cache(maxsize=16)
def _shared_model_scorer(path: str, name: str) -> ModelScorer:
    # one copy of the weights per process, whatever the number of envs naming it
    return load_model_scorer(path, name)


def resolve_scorer(name: str, spec: str | RewardComponent) -> RewardComponent:
    """A component for dimension ``name`` from ``"rule"``, ``"model:PATH"``, ``"llm:SPEC"`` or a component.

    ``llm:SPEC`` checks the backend at once: a dead endpoint or a missing model file raises
    ``situ_gym.llm.BackendUnavailable`` (one line) before any turn is scored."""
    known = dims.dimension_names()
    if name not in known:
        raise ValueError(f"unknown reward dimension {name!r}; choose one of {list(known)}")
    if not isinstance(spec, str):
        if getattr(spec, "name", None) != name or not callable(getattr(spec, "score", None)):
            raise ValueError(f"scorer for {name!r} must be 'rule', 'model:PATH', 'llm:SPEC' or a component named {name!r}")
        return spec
    if spec == "rule":
        return dims.dimension(name).make_rule()
    if spec.startswith("model:") and spec[6:]:
        return _shared_model_scorer(str(Path(spec[6:]).resolve()), name)
    if spec.startswith("llm:") and spec[4:]:
        return _shared_llm_scorer(spec, name)
    raise ValueError(f"scorer for {name!r} must be 'rule' or 'model:PATH' or 'llm:SPEC' (a chat backend, "
                     f"e.g. llm:hf:gguf:smollm2), got {spec!r}")


def build_components(scorers: Mapping[str, str | RewardComponent] | None = None) -> list[RewardComponent]:
    """One component per dimension (``recrm.dimensions``), its default scorer (rule-based)
    unless ``scorers`` names another for it."""
    scorers = dict(scorers or {})
    known = dims.dimensions()
    unknown = sorted(set(scorers) - {d.name for d in known})
    if unknown:
        raise ValueError(f"unknown reward dimensions {unknown}; choose from {[d.name for d in known]}")
    return [resolve_scorer(d.name, scorers.get(d.name, d.scorer)) for d in known]
