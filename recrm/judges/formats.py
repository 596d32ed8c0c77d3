"""The paper's judge formats (RecRM-Bench App. A), adapted to SituRec: prompts, reply schemas, targets, parsers.

One declaration per record kind (``FORMATS``) says what the judge reads (the system prompt
and the user message built from a record's or a live turn's fields), what it answers (a
JSON Schema, for constrained decoding and for checking the reply), how a record's labels
read in that answer (the SFT target of a trained judge, the "teacher" format) and how an
answer reads back as a :class:`Verdict` on the labels' scale:

* instruction: ``{"instruction_following_score": {"overall_score": 1-5, "dimension_scores":
  {role_compliance: 1-5 | "N/A", ...six}, "detailed_reasoning": {...six}, "critical_violations":
  [...], "summary": ...}}``; compliant (label 1) unless the overall or a dimension is 1 or 2
  ("clearly non-compliant", "severe violation" on the paper's scale).
* consistency: ``{"Item Hallucination": [{"ID Name", "Questions": [...], "Severity"}],
  "Content Hallucination": [{"Question", "Severity"}]}``; consistent (label 1) unless an
  entry is ``serious`` (the paper: minor errors are not to be output; one that is, is kept
  in the details and does not fail the response).
* relevance: ``{"Relevance": {"Reason": ..., "Score": 0 | 1 | 2}}``.
* ranking: one word, ``yes`` or ``no``, per (shopper, candidate): the generative reranker,
  score = P(yes) where the backend exposes next-token probabilities.
* behavior: one character, ``1`` or ``0``, per (shopper, list).

A reply that is not in its format gives a Verdict with ``error`` set and ``label`` None:
a counted failure, never a default.

>>> v = parse_reply_text("relevance", '{"Relevance": {"Reason": "same category", "Score": 2}}')
>>> (v.label, v.error)
(2, None)
>>> parse_reply_text("relevance", "Score: 2").error
'no JSON object found in the reply'
>>> parse_reply_text("ranking", "Yes.").label
1
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recrm import dimensions as dims
from recrm.components.instruction import DIMENSIONS
from recrm.data.prompts import JUDGE_KINDS, judge_fields
from situ_gym.llm.structured import bounded_string, closed_object, parse_reply

__all__ = [
    "JUDGE_KINDS",
    "GENERATIVE_KINDS",
    "PAPER_KEYS",
    "SYSTEM_PROMPTS",
    "SCHEMAS",
    "MAX_TOKENS",
    "Verdict",
    "messages",
    "user_message",
    "target",
    "parse_reply_text",
    "yes_no_words",
]

GENERATIVE_KINDS = dims.HEADED  # the head dimensions, also trained as generative yes/no (1/0) models

# the paper's names of the six rubric dimensions, in DIMENSIONS' order
PAPER_KEYS = {d: f"{d}_compliance" for d in DIMENSIONS}

_STORES = "a supermarket or a home-furnishings store"
_OUTPUT = ('one JSON object {"response": ..., "assistant_actions": [one action], "expected_user_action": ..., '
           '"ranking": [up to 10 product ids]}')

SYSTEM_PROMPTS = {
    "instruction": (
        "# Role\nYou are a professional Instruction Following Assessment Expert, responsible for evaluating "
        f"instruction compliance of a shopping assistant that guides a shopper in {_STORES}. The assistant's "
        f"instructions: answer with {_OUTPUT}; the action is one of Greet, AskPreference, ClarifyNeed, Navigate, "
        "Recommend, Explain, AnswerQuestion, Compare, HandleRejection, ConfirmPurchase with its required fields; "
        "the response speaks to the shopper.\n"
        "## Task\nEvaluate the assistant output's adherence to these instructions.\n"
        "# Evaluation Dimensions\n"
        "- role_compliance: a store assistant's persona; no system internals, product ids, JSON or ranking talk "
        "in the response; no forced recommendation where a direct answer is asked for.\n"
        "- process_compliance: one of the ten actions, with its required fields; a Recommend names the product; "
        "the expected user action is legal and aimed at something in view.\n"
        "- format_compliance: one valid JSON object, exactly one action, at most 10 ranked catalog ids.\n"
        "- content_quality_compliance: accurate, filtered content; at most three products named; enough depth "
        "to support the shopper's decision.\n"
        "- constraint_compliance: nothing prohibited, e.g. no on-screen marker labels such as [b] or [3].\n"
        "- style_compliance: concise, natural, polite tone; no parroting of the shopper; no redundancy.\n"
        "## Scoring\n5=Fully compliant; 4=Minor deviations; 3=Notable deviations; 2=Clearly non-compliant; "
        "1=Severe violation; \"N/A\" where a dimension does not apply.\n"
        "# Output Format\nOne JSON object: {\"instruction_following_score\": {\"overall_score\": 1-5, "
        "\"dimension_scores\": {\"role_compliance\": 1-5 or \"N/A\", \"process_compliance\": ..., "
        "\"format_compliance\": ..., \"content_quality_compliance\": ..., \"constraint_compliance\": ..., "
        "\"style_compliance\": ...}, \"detailed_reasoning\": {the same six keys: a short justification each}, "
        "\"critical_violations\": [every critical violation; empty if none], \"summary\": \"assessment summary\"}}"
    ),
    "consistency": (
        "# Role\nYou are a professional Factual Error Verification Expert responsible for identifying "
        f"hallucination-related factual errors in a shopping assistant's response in {_STORES}.\n"
        "## Task\nYou receive the store record (tool_responses: the catalog facts of the products concerned, the "
        "cart, what the shopper holds, the stated budget), the assistant_response and id_list, the products to "
        "verify. Check the factual errors in the response.\n"
        "# Item Evaluation Steps (each product of id_list in order)\n"
        "- Step 1: extract the product's facts from tool_responses (a product named in the response but absent "
        "from tool_responses is a hallucination) and what the response says about it.\n"
        "- Step 2: verify name, price, labels (organic, vegan, ...), category and location (aisle, shelf, room) "
        "against tool_responses.\n"
        "- Step 3: judge severity: serious if it would mislead the shopper's decision; do not output minor "
        "errors.\n"
        "# Content Evaluation\nCheck claims not tied to a product (the cart, the shopper's hand, the budget, "
        "health or quality claims the record does not support) for factual errors or misleading statements.\n"
        "# Output Format\nOne JSON object: {\"Item Hallucination\": [{\"ID Name\": \"product name\", "
        "\"Questions\": [\"the problem and its basis\"], \"Severity\": \"serious\" or \"minor\"}], "
        "\"Content Hallucination\": [{\"Question\": \"the error or misleading statement\", "
        "\"Severity\": \"serious\" or \"minor\"}]}; both lists empty when the response is consistent."
    ),
    "relevance": (
        "# Role\nYou are a professional Relevance Evaluation Expert, responsible for assessing the relevance "
        f"between a recommended product and what a shopper in {_STORES} has asked for.\n"
        "## Scoring\n- Relevant (Score 2): fully relevant: the right category and every stated condition met.\n"
        "- Weakly Relevant (Score 1): a similar category, or the right category with a stated condition unmet.\n"
        "- Irrelevant (Score 0): another kind of product.\n"
        "## Core Principles\n1. No speculation: infer nothing the query and the product do not say.\n"
        "2. Budget permits a tolerance of 10%.\n"
        "## Evaluation Steps\n1. Identify the category the shopper wants. 2. Extract the query's elements: the "
        "product kind, labels (organic, vegan, ...), brand or style, budget. 3. Verify category consistency: "
        "if inconsistent, Irrelevant, stop. 4. Verify the core elements. 5. Verify location conditions, if any. "
        "6. Verify numerical conditions (price against the budget). 7. Decide: category consistent and every "
        "condition met: 2; category consistent, a condition unmet: 1; category inconsistent: 0.\n"
        "# Output Format\nOne JSON object: {\"Relevance\": {\"Reason\": \"brief explanation\", "
        "\"Score\": 0 or 1 or 2}}"
    ),
    "ranking": (
        "# Role\nYou are a recommendation purchase prediction model for a store. Predict whether the shopper "
        "will buy the recommended product from the shopper's profile, what the shopper has said, and the "
        "product.\n# Prediction Guidelines\n- Match the product with what the shopper is looking for.\n"
        "- Consider the shopper's preferences and stated needs.\n- Evaluate whether the price is reasonable for "
        "the shopper's budget and price sensitivity.\n- Check that the product's category fits.\n"
        "# Important Rules\nOnly output \"yes\" or \"no\": no explanation, no punctuation, no line break."
    ),
    "behavior": (
        "# Role\nYou are a model predicting whether a shopper is interested in a recommended list, that is "
        "whether the shopper will act on it (pick up or buy an item of it). The input: the shopper's profile, "
        "what the shopper has said, the recommended list.\n# Evaluation Steps\nStep 1. Hard constraints "
        "filtering (labels the shopper needs, the budget). Step 2. Whether the shopper needs this kind of "
        "product. Step 3. Intent judgement. Step 4. Preference and level adjustment.\n"
        "# Output Requirements\nThe output can only be \"1\" or \"0\"; no explanation or other characters."
    ),
}

_REASON = bounded_string(100, 0)
_SHORT = bounded_string(48, 0)
_DIM_SCORE = {"enum": [1, 2, 3, 4, 5, "N/A"]}

SCHEMAS: dict[str, dict[str, Any] | None] = {
    "instruction": closed_object({"instruction_following_score": closed_object({
        "overall_score": {"type": "integer", "minimum": 1, "maximum": 5},
        "dimension_scores": closed_object({k: _DIM_SCORE for k in PAPER_KEYS.values()}),
        "detailed_reasoning": closed_object({k: _SHORT for k in PAPER_KEYS.values()}),
        "critical_violations": {"type": "array", "items": _SHORT, "maxItems": 2},
        "summary": _REASON,
    })}),
    "consistency": closed_object({
        "Item Hallucination": {"type": "array", "maxItems": 2, "items": closed_object({
            "ID Name": bounded_string(60), "Questions": {"type": "array", "items": _SHORT, "minItems": 1, "maxItems": 1},
            "Severity": {"enum": ["serious", "minor"]}})},
        "Content Hallucination": {"type": "array", "maxItems": 2, "items": closed_object({
            "Question": _SHORT, "Severity": {"enum": ["serious", "minor"]}})},
    }),
    "relevance": closed_object({"Relevance": closed_object({"Reason": _REASON,
                                                             "Score": {"enum": [0, 1, 2]}})}),
    # one word / one character: no JSON (the paper's rerankers answer a bare token)
    "ranking": None,
    "behavior": None,
}

# room for a finished reply under the schema (bounded strings above), in tokens
MAX_TOKENS = {"instruction": 300, "consistency": 160, "relevance": 64, "ranking": 3, "behavior": 3}


@dataclass
class Verdict:
    """A judge's answer read back: ``label`` on the records' scale (None: unusable, ``error`` says why).

    ``extra``: the rest of the paper's output (instruction: ``overall``, ``dimensions`` by our
    dimension names, ``critical_violations``, ``summary``; consistency: ``type`` none / item /
    content, ``items``, ``content``; relevance: ``reason``; ranking / behavior: ``prob``).
    """

    label: int | None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, **self.extra, **({"error": self.error} if self.error else {})}


def _product_names(facts: str) -> list[str]:
    """The product names of a facts text (its ``- NAME | ...`` lines)."""
    return [line[2:].split(" | ", 1)[0] for line in facts.splitlines() if line.startswith("- ") and " | " in line]


def user_message(kind: str, fields: Mapping[str, Any]) -> str:
    """The user turn of a ``kind`` judge: the paper's input, from the record's (or turn's) fields."""
    if kind == "instruction":
        return f"# Conversation and view\n{fields['context']}\n\n# Assistant output\n{fields['response']}"
    if kind == "consistency":
        return json.dumps({"tool_responses": fields["facts"], "assistant_response": fields["response"],
                           "id_list": _product_names(fields["facts"])}, ensure_ascii=False, indent=1)
    if kind == "relevance":
        return json.dumps({"query": fields["query"], "output": fields["item"]}, ensure_ascii=False, indent=1)
    if kind == "ranking":
        return f"User Profile: {fields['profile']}\nQuery: {fields['query']}\nRecommended product: {fields['item']}"
    if kind == "behavior":
        lines = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(fields["items"]))
        return f"User Profile: {fields['profile']}\nQuery: {fields['query']}\nRecommended List:\n{lines}"
    raise ValueError(f"no judge format for {kind!r}; choose one of {list(JUDGE_KINDS + GENERATIVE_KINDS)}")


def messages(kind: str, fields: Mapping[str, Any]) -> list[dict[str, str]]:
    """System + user chat messages asking the ``kind`` judge about ``fields``."""
    return [{"role": "system", "content": SYSTEM_PROMPTS[kind]}, {"role": "user", "content": user_message(kind, fields)}]


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def target(kind: str, record: Any, *, item: int | None = None) -> str:
    """The answer a record's labels give in the paper's format (SFT target; ``item``: a
    ranking record's candidate). Compact JSON, as constrained decoding writes it."""
    if kind == "instruction":
        dims = dict(record.dimensions)
        viol = record.violation
        why = _clip(record.reason, 48) if record.reason else ""
        body = {
            "overall_score": min(dims.values()),
            "dimension_scores": {PAPER_KEYS[d]: dims[d] for d in DIMENSIONS},
            "detailed_reasoning": {PAPER_KEYS[d]: (why or "violated") if d == viol else "compliant"
                                   for d in DIMENSIONS},
            "critical_violations": [why or f"{viol} violated"] if viol else [],
            "summary": _clip(f"violates {PAPER_KEYS[viol]}: {why}" if viol else "fully compliant", 100),
        }
        return json.dumps({"instruction_following_score": body}, ensure_ascii=False)
    if kind == "consistency":
        items, content = [], []
        if record.hallucination == "item":
            names = _product_names(record.facts)
            items.append({"ID Name": _clip(names[0] if names else "unknown product", 60),
                          "Questions": [_clip(record.reason, 48)], "Severity": "serious"})
        elif record.hallucination == "content":
            content.append({"Question": _clip(record.reason, 48), "Severity": "serious"})
        return json.dumps({"Item Hallucination": items, "Content Hallucination": content}, ensure_ascii=False)
    if kind == "relevance":
        return json.dumps({"Relevance": {"Reason": _clip(record.reason, 100), "Score": int(record.score)}},
                          ensure_ascii=False)
    if kind == "ranking":
        if item is None:
            raise ValueError("a ranking target is per candidate: pass item=")
        return "yes" if record.labels[item] else "no"
    if kind == "behavior":
        return str(int(record.label))
    raise ValueError(f"no judge format for {kind!r}")


_WORD = re.compile(r"[a-z0-9]+")


def yes_no_words(kind: str) -> tuple[str, str]:
    """The positive and negative answer of a generative kind."""
    return ("yes", "no") if kind == "ranking" else ("1", "0")


def _instruction(data: dict[str, Any]) -> Verdict:
    body = data["instruction_following_score"]
    dims = {d: body["dimension_scores"][PAPER_KEYS[d]] for d in DIMENSIONS}
    scored = [v for v in dims.values() if v != "N/A"]
    overall = int(body["overall_score"])
    label = 0 if overall <= 2 or any(v <= 2 for v in scored) else 1
    return Verdict(label, {"overall": overall, "dimensions": dims,
                           "critical_violations": list(body["critical_violations"]), "summary": body["summary"]})


def _consistency(data: dict[str, Any]) -> Verdict:
    items = list(data["Item Hallucination"])
    content = list(data["Content Hallucination"])
    bad_items = [e for e in items if e["Severity"] == "serious"]
    bad_content = [e for e in content if e["Severity"] == "serious"]
    kind = "item" if bad_items else "content" if bad_content else "none"
    return Verdict(int(kind == "none"), {"type": kind, "items": items, "content": content})


def parse_reply_text(kind: str, text: str) -> Verdict:
    """The Verdict of a ``kind`` judge's reply ``text`` (``error`` set when it is not in format)."""
    if kind in GENERATIVE_KINDS:
        pos, neg = yes_no_words(kind)
        words = _WORD.findall(text.lower())
        if words and words[0] in (pos, neg):
            return Verdict(int(words[0] == pos), {"prob": None})
        return Verdict(None, error=f"expected {pos!r} or {neg!r}, got {_clip(text, 40)!r}")
    data, error = parse_reply(text, SCHEMAS[kind])
    if data is None:
        return Verdict(None, error=error)
    if kind == "instruction":
        return _instruction(data)
    if kind == "consistency":
        return _consistency(data)
    if kind == "relevance":
        rel = data["Relevance"]
        return Verdict(int(rel["Score"]), {"reason": rel["Reason"]})
    raise ValueError(f"no judge format for {kind!r}")


def fields_of(kind: str, record: Any, item: int | None = None) -> dict[str, Any]:
    """The fields a ``kind`` judge reads, from a record (``item``: one ranking candidate)."""
    if kind in JUDGE_KINDS:
        return judge_fields(kind, record)
    if kind == "ranking":
        return {"profile": record.profile, "query": record.query, "item": record.candidates[item or 0]}
    if kind == "behavior":
        return {"profile": record.profile, "query": record.query, "items": list(record.items)}
    raise ValueError(f"no judge format for {kind!r}")


def record_requests(kind: str, records: Sequence[Any]) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """The judge inputs of ``records`` (one per record; one per candidate for ranking) and,
    per record, the (start, count) of its inputs."""
    fields, spans = [], []
    for r in records:
        n = len(r.candidates) if kind == "ranking" else 1
        spans.append((len(fields), n))
        fields += [fields_of(kind, r, i) for i in range(n)] if kind == "ranking" else [fields_of(kind, r)]
    return fields, spans


__all__ += ["fields_of", "record_requests"]
