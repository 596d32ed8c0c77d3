"""The dialogue act of a reply, learnt from the labelled corpora on top of the rules' reading.

The rules (``analysis``, ``dialogue``) read what a turn does: the products it proposes,
compares or sets aside, the slots it asks, a route, a purchase prompt, and an act. The act is
where writers' conventions vary most ("which one, the A or the B?" clarifies to one writer
and asks a preference to another; "X is over budget, so nope; Y tho" handles a turn-down or
recommends), and where hand-written rules tuned on one corpus carried least to the next. So
the act is chosen by a multinomial logistic regression over

* what the rules read: their act, how many products the turn proposes, compares and
  mentions, the slots it asks, whether it explains, routes, prompts a purchase or greets;
* what the shopper's words did (``heard``, as the rules read them): asked, turned down,
  named products, stated a need;
* the words of the reply: its one- and two-word sequences.

(The shopper's own words as features fitted the corpora's shoppers rather than shopping: "the"
in a question pulled "I'd suggest the X instead" to an answer; they are left out.)

It is fitted on the development corpora of ``tests/language`` (never on the held-out
measure) by ``python -m tests.language.fit_acts``, which writes ``act_model.json`` beside
this file and prints the leave-one-corpus-out accuracy against the rules'. The weights are
plain JSON (no pickle); prediction is a sum of the weights of the features present.

Only a reply is read this way (``dialogue.analyze_reply``): the shopper's own words and a
text read alone (``analyze``) keep the rules' act.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from situ_gym.language.analysis import ACTS, Utterance

MODEL_FILE = "act_model.json"
# The rules' act enters at 1.5: it then takes more evidence from the words to overrule it (fitted
# with each corpus left out, 1 and 2 carried slightly less; tests/language/fit_acts.py --loco).
RULE_WEIGHT = 1.5
_WORDS = re.compile(r"[a-z']+|[?!→\-]")


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


NO_SHOPPER_WORDS = "heard=none"  # the feature of a reply that answers no shopper's words


def act_features(said: Utterance, heard: Utterance | None, raised: Iterable[str] = ()) -> dict[str, float]:
    """The features of the reply ``said`` (the rules' reading) to the shopper's words ``heard``
    (``raised``: the products the shopper raised itself, as ``analyze_reply`` takes them).

    Word features are prefixed ``w:``; the fitter keeps only those seen in a few lines, so a
    word the corpora never used weighs nothing."""
    f: dict[str, float] = {
        "rule=" + said.act: RULE_WEIGHT,
        "proposed": float(min(len(set(said.proposed)), 3)),
        "compared": float(min(len(set(said.compared)), 3)),
        "mentioned": float(min(len(set(said.mentioned)), 3)),
        "questions": float(min(len(said.questions), 3)),
    }
    for name, on in (
        ("explains", said.explanation is not None), ("navigates", said.navigation is not None),
        ("locates", said.location is not None), ("purchase_prompt", said.purchase_prompt),
        ("clarifies", any(q.clarifies for q in said.questions)), ("greets", said.greeting),
        ("sets_aside", bool(said.set_aside)), ("rejects", said.rejects),
    ):
        if on:
            f[name] = 1.0
    # a product offered that the shopper did not bring up is an offer whatever it answers
    own = set(raised) | set(heard.named if heard is not None else ())
    if any(p not in own for p in said.proposed):
        f["offers_new"] = 1.0
    for slot in said.asks:
        f["asks=" + slot] = 1.0
    words = _words(said.text)
    for w in words:
        f["w:" + w] = 1.0
    for a, b in zip(words, words[1:], strict=False):  # the two-word sequences
        f[f"w:{a} {b}"] = 1.0
    if heard is None or heard.empty:
        f[NO_SHOPPER_WORDS] = 1.0
        return f
    f["heard=" + heard.act] = 1.0
    f["heard_named"] = float(min(len(heard.named), 3))
    for name, on in (
        ("heard_compare", heard.asks_to_compare), ("heard_rejects", heard.rejects),
        ("heard_asks", bool(heard.questions)), ("heard_accepts", heard.accepts),
        ("heard_wants", bool(heard.wants)), ("heard_avoids", bool(heard.avoids)),
        ("heard_kind", bool(heard.categories)),
    ):
        if on:
            f[name] = 1.0
    return f


@dataclass(frozen=True)
class ActModel:
    """A fitted multinomial logistic regression: per feature, one weight per act."""

    classes: tuple[str, ...]
    intercept: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]

    def scores(self, features: dict[str, float]) -> list[float]:
        out = list(self.intercept)
        for name, value in features.items():
            w = self.weights.get(name)
            if w is not None:
                for i, wi in enumerate(w):
                    out[i] += wi * value
        return out

    def predict(self, features: dict[str, float]) -> str:
        s = self.scores(features)
        return self.classes[max(range(len(s)), key=s.__getitem__)]  # ties: the first act listed

    @classmethod
    def from_json(cls, data: dict, source: str = "act model") -> ActModel:
        try:
            classes = tuple(data["classes"])
            intercept = tuple(float(x) for x in data["intercept"])
            weights = {str(k): tuple(float(x) for x in v) for k, v in data["weights"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"{source}: not an act model ({e!r}); refit it: python -m tests.language.fit_acts") from e
        if not set(classes) <= set(ACTS) or len(intercept) != len(classes) or any(len(w) != len(classes) for w in weights.values()):
            raise ValueError(f"{source}: acts {classes} or weight lengths do not match; refit it: python -m tests.language.fit_acts")
        return cls(classes, intercept, weights)

    def to_json(self, **about) -> dict:
        return {**about, "classes": list(self.classes), "intercept": [round(x, 4) for x in self.intercept],
                "weights": {k: [round(x, 4) for x in w] for k, w in sorted(self.weights.items())}}


@functools.cache
def act_model() -> ActModel:
    """The fitted model shipped with the package (read once)."""
    ref = resources.files("situ_gym.language") / MODEL_FILE
    try:
        data = json.loads(ref.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{ref}: cannot read the act model ({e}); refit it: python -m tests.language.fit_acts") from e
    return ActModel.from_json(data, source=str(ref))


def choose_act(model: ActModel, features: dict[str, float], rule_act: str) -> str:
    """The model's act for a reply's ``features``, or the rules' (``rule_act``) where the reply
    answers no shopper's words: fitted mostly on replies to the shopper, the model carried worse
    than the rules to the one corpus written without them (491 against 497 of its 542 lines, with
    that corpus left out of the fit); keeping the rules there costs 6 of 10,892 lines elsewhere."""
    return rule_act if NO_SHOPPER_WORDS in features else model.predict(features)


def read_act(said: Utterance, heard: Utterance | None, raised: Iterable[str] = ()) -> str:
    """The act of the reply ``said`` (the rules' reading) to ``heard``, by the shipped model."""
    return choose_act(act_model(), act_features(said, heard, raised), said.act)
