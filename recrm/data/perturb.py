"""Single-violation and hallucination perturbations of a saved assistant turn.

Each function takes the turn (a ``TurnRecord``), its ``TurnContext`` and a numpy
generator and returns the perturbed ``TurnRecord`` plus a one-line reason, or None when
the perturbation does not apply to the turn. The raw JSON, ``response``, ``action`` and
``ranking`` are changed together, so the rule scorers and a judge see the same turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from recrm.context import TurnContext
from situ_gym.actions.parse import extract_json_object
from situ_gym.records import TurnRecord
from situ_gym.scene.model import Product

__all__ = ["INSTRUCTION_PERTURBATIONS", "ITEM_HALLUCINATIONS", "CONTENT_HALLUCINATIONS", "true_fact"]

Perturbation = Callable[[TurnRecord, TurnContext, np.random.Generator], "tuple[TurnRecord, str] | None"]


def _obj(rec: TurnRecord) -> dict[str, Any] | None:
    obj, _ = extract_json_object(rec.assistant_raw)
    return obj


def _with(rec: TurnRecord, obj: dict[str, Any] | None, *, raw: str | None = None, **fields: Any) -> TurnRecord:
    """The turn with a new output object (or raw text) and the record fields it implies."""
    if raw is None:
        raw = json.dumps(obj, ensure_ascii=False)
    update: dict[str, Any] = {"assistant_raw": raw, "reward": {}}
    if obj is not None:
        update["response"] = str(obj.get("response", ""))
        acts = obj.get("assistant_actions")
        if isinstance(acts, list) and acts and isinstance(acts[0], dict):
            update["action"] = dict(acts[0])
            update["action_type"] = acts[0].get("type")
        if isinstance(obj.get("ranking"), list):
            update["ranking"] = [str(x) for x in obj["ranking"]]
    update.update(fields)
    return rec.model_copy(update=update)


def _say(rec: TurnRecord, text: str, *, prepend: bool = False) -> TurnRecord | None:
    obj = _obj(rec)
    if obj is None:
        return None
    base = str(obj.get("response", "")).strip()
    obj["response"] = f"{text} {base}".strip() if prepend else f"{base} {text}".strip()
    return _with(rec, obj)


def _pick(rng: np.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _adding(rec: TurnRecord, text: str, reason: str) -> tuple[TurnRecord, str] | None:
    """The turn with ``text`` appended to its response, and the reason; None when it is not JSON."""
    out = _say(rec, text)
    return (out, reason) if out else None


def _judged_product(ctx: TurnContext) -> Product | None:
    """The product the turn is judged on (its recommendation or ranking head), if any."""
    return ctx.index.products[ctx.judged_item] if ctx.judged_item is not None else None


# ------------------------------------------------------------ instruction following
def _format(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    obj = _obj(rec)
    if obj is None:
        return None
    how = int(rng.integers(3))
    if how == 0:  # the JSON is cut off before its end
        raw = json.dumps(obj, ensure_ascii=False)
        return _with(rec, None, raw=raw[: max(10, int(len(raw) * 0.6))]), "format: the JSON output is cut off"
    if how == 1:
        acts = obj.get("assistant_actions") or []
        if not acts:
            return None
        extra = {"type": "AskPreference"} if acts[0].get("type") != "AskPreference" else {"type": "Greet"}
        obj["assistant_actions"] = [acts[0], extra]
        return _with(rec, obj), "format: two actions in assistant_actions, exactly one is required"
    pool = sorted(ctx.index.products)
    obj["ranking"] = [str(x) for x in (obj.get("ranking") or [])] + [_pick(rng, pool) for _ in range(11)]
    obj["ranking"] = list(dict.fromkeys(obj["ranking"]))[:14]
    if len(obj["ranking"]) <= 10:
        return None
    return _with(rec, obj), f"format: ranking holds {len(obj['ranking'])} ids, at most 10 are allowed"


def _process(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    obj = _obj(rec)
    acts = (obj or {}).get("assistant_actions") or []
    if not acts or not isinstance(acts[0], dict):
        return None
    act = dict(acts[0])
    droppable = [k for k in ("reason", "navigation_goal", "display_name") if k in act]
    if droppable and rng.random() < 0.6:
        key = _pick(rng, droppable)
        del act[key]
        obj["assistant_actions"] = [act]
        return _with(rec, obj), f"process: the {act.get('type')} action lacks its required field {key!r}"
    act["type"] = _pick(rng, ["Suggest", "Advise", "Chat"])
    obj["assistant_actions"] = [act]
    return _with(rec, obj), f"process: {act['type']!r} is not one of the ten dialogue actions"


def _role(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    pid = ctx.judged_item or _pick(rng, sorted(ctx.index.products))
    text = _pick(
        rng,
        [
            f"I put it first in my ranking JSON (product id {pid}).",
            f"Internal note: entity id {pid} is the top item.",
            "My expected_user_action for you is to move there.",
            "As the store manager I can give you a 50% discount on it.",
            "As an AI I cannot walk, so you will have to find it yourself.",
        ],
    )
    return _adding(rec, text, "role: the response exposes system internals to the shopper")


def _constraint(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    label = _pick(rng, ["[b]", "[c]", "[3]", "[12]", "label d", "marker 4"])
    return _adding(rec, f"It is the one marked {label} in your view.", f"constraint: the response discloses the marker label {label!r}")


def _content_quality(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    names = [ctx.index.products[p].name for p in sorted(ctx.index.products)]
    chosen = [names[int(i)] for i in rng.choice(len(names), size=5, replace=False)]
    return _adding(rec, "We also have " + ", ".join(chosen[:-1]) + f" and {chosen[-1]}.", "content_quality: the response dumps five product names at once")


def _style(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    obj = _obj(rec)
    if obj is None:
        return None
    last = ctx.last_user_utterance
    if last and len(last.split()) >= 4 and rng.random() < 0.5:
        obj["response"] = last
        return _with(rec, obj), "style: the response parrots the shopper's last utterance"
    base = str(obj.get("response", "")).strip() or "Let me help you."
    if rng.random() < 0.4:
        obj["response"] = f"{base} Honestly, just make up your mind already, I don't have all day."
        return _with(rec, obj), "style: a rude, impatient tone"
    obj["response"] = " ".join([base] * (130 // max(1, len(base.split())) + 1))
    return _with(rec, obj), "style: the response rambles far past the length limit"


INSTRUCTION_PERTURBATIONS: dict[str, Perturbation] = {
    "role": _role,
    "process": _process,
    "format": _format,
    "content_quality": _content_quality,
    "constraint": _constraint,
    "style": _style,
}

# ------------------------------------------------------------ factual consistency
_FAKE_WORDS = ["Midnight Truffle", "Volcano Spice", "Arctic Mint", "Royal Saffron", "Lunar Berry", "Golden Smoke"]


def _unknown_product(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    p = _judged_product(ctx)
    if p is None:
        return None
    noun = p.category.split()[-1]
    fake = f"{p.brand} {_pick(rng, _FAKE_WORDS)} {noun}"
    return _adding(rec, f"There is also the {fake}, which is very popular.", f"item: {fake!r} is not in the catalog")


def _wrong_price(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    p = _judged_product(ctx)
    if p is None:
        return None
    wrong = round(p.price * float(_pick(rng, [0.4, 0.6, 1.7, 2.5])), 2)
    return _adding(rec, f"The {p.name} costs ${wrong:.2f}.", f"item: states ${wrong:.2f} for {p.name}, which costs ${p.price:.2f}")


def _wrong_attribute(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    p = _judged_product(ctx)
    if p is None:
        return None
    have = {t.split(":", 1)[1] for t in p.tags} | set(p.name.lower().split())
    pool = sorted(
        {
            t.split(":", 1)[1]
            for q in ctx.index.products.values()
            if q.group == p.group
            for t in q.tags
            if t.split(":", 1)[0] in ("diet", "material", "feature", "style", "flavor")
        }
        - have
    )
    if not pool:
        return None
    value = _pick(rng, pool)
    return _adding(rec, f"The {p.name} is {value}.", f"item: {p.name} is not {value}")


def _wrong_location(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    p = _judged_product(ctx)
    if p is None:
        return None
    here = set(ctx.index.location_of(p.id))
    places = [f.id for f in ctx.index.scene.fixtures] + [a.id for a in ctx.index.scene.areas]
    places = [x for x in places if x not in here]
    if not places:
        return None
    place = ctx.index.name(_pick(rng, places))
    return _adding(rec, f"You will find the {p.name} in {place}.", f"item: {p.name} is not kept in {place}")


def _cart_claim(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    if ctx.cart:
        return None
    return _adding(rec, "It is already in your cart, so you are all set.", "content: claims an item is in the cart, which is empty")


def _hand_claim(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    if ctx.held_item:
        return None
    return _adding(rec, "The one you're holding is a great pick.", "content: claims the shopper holds an item; the hand is empty")


def _budget_claim(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    said = [d.value for d in ctx.revealed_items if d.kind == "budget" and isinstance(d.value, (int, float))]
    fake = float(_pick(rng, [7, 15, 45, 120, 350]))
    if said and abs(float(said[0]) - fake) < 1:
        return None
    return _adding(rec, f"That keeps you inside your ${fake:g} budget.", f"content: a ${fake:g} budget the shopper never stated")


def _ungrounded(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    claim = _pick(
        rng,
        [
            "Doctors say it cures colds within a day.",
            "It never expires, even after opening.",
            "It is the only one approved by the government.",
            "Everything here is free on Tuesdays.",
        ],
    )
    return _adding(rec, claim, f"content: ungrounded claim {claim!r}")


ITEM_HALLUCINATIONS: dict[str, Perturbation] = {
    "unknown_product": _unknown_product,
    "price": _wrong_price,
    "attribute": _wrong_attribute,
    "location": _wrong_location,
}
CONTENT_HALLUCINATIONS: dict[str, Perturbation] = {
    "cart": _cart_claim,
    "hand": _hand_claim,
    "budget": _budget_claim,
    "ungrounded": _ungrounded,
}


def true_fact(rec: TurnRecord, ctx: TurnContext, rng: np.random.Generator):
    """A positive with a correct price or location added, so "$" alone never means a lie."""
    p = _judged_product(ctx)
    if p is None:
        return None
    if rng.random() < 0.5:
        fact = f"The {p.name} costs ${p.price:.2f}."
    else:
        fact = f"You will find the {p.name} at {ctx.index.location_text(p.id)}."
    return _adding(rec, fact, "consistent: the added fact matches the catalog")
