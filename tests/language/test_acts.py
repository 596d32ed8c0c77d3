"""The act reader fitted on the development corpora (situ_gym.language.acts): in step with the
corpora and the rules, never fitted on the held-out measure, better than the rules on a writer
it has not seen, and loud about a broken weights file."""

import json
from importlib import resources

import pytest

from situ_gym.language import analyze, analyze_reply, lexicon_for
from situ_gym.language.acts import (
    MODEL_FILE,
    ActModel,
    act_features,
    act_model,
    choose_act,
    read_act,
)
from situ_gym.language.dialogue import read_reply
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene

from . import corpus as C

pytest.importorskip("sklearn")  # the fitter's dependency (extra "train")


@pytest.fixture(scope="module")
def data():
    from .fit_acts import examples

    return examples(lex=C.lexicons())


def test_the_held_out_measure_is_the_latest_corpus_and_never_fitted_on():
    # a new corpus written apart becomes the measure: MEASURE moves to it, its use says so, and
    # the corpus it replaces joins the development sets the reader is refitted on
    assert C.MEASURE == list(C.HELD_OUT)[-1]
    assert "never tuned on" in C.HELD_OUT[C.MEASURE]
    assert all("never tuned on" not in use for name, use in C.HELD_OUT.items() if name != C.MEASURE)
    fitted_on = json.loads((resources.files("situ_gym.language") / MODEL_FILE).read_text(encoding="utf-8"))["fitted_on"]
    assert C.MEASURE not in fitted_on and set(fitted_on) == set(C.DEVELOPMENT)


def test_the_shipped_model_is_the_one_the_development_corpora_fit(data):
    # A change to the rules, the features or the corpora that is not refitted shows here:
    # python -m tests.language.fit_acts
    from .fit_acts import fit

    shipped = json.loads((resources.files("situ_gym.language") / MODEL_FILE).read_text(encoding="utf-8"))
    assert shipped["fitted_on"] == {name: sum(d[0] == name for d in data) for name in C.DEVELOPMENT}
    refit = fit(data)
    assert set(refit.weights) == set(act_model().weights)
    differ = [f for _, f, _, _ in data if refit.predict(f) != act_model().predict(f)]
    assert len(differ) <= len(data) // 1000, f"{len(differ)} of {len(data)} lines read differently: refit"


def test_the_model_carries_to_a_writer_it_has_not_seen_better_than_the_rules(data):
    # fitted with each development corpus left out in turn, on that corpus: the rules were tuned
    # on every one of them, so they are read at their best here, and the model must still win
    from .fit_acts import leave_one_corpus_out

    rows = leave_one_corpus_out(data)
    rules, learnt = (sum(r[i] for r in rows) for i in (2, 3))
    assert learnt > rules, rows
    # and on no writer more than a point worse (the first corpus, read without the shopper's
    # words, is where it gains least)
    assert all(model >= rule - n / 100 for _, n, rule, model in rows), rows
    assert sum(model > rule for _, _, rule, model in rows) > len(rows) // 2, rows


@pytest.fixture(scope="module")
def lex():
    return lexicon_for(SceneIndex(load_scene("supermarket")))


def test_a_reply_takes_the_models_act_and_the_shoppers_words_the_rules(lex):
    heard = analyze("the breakfast blend or the decaf?", lex)
    text = "decaf, 100% -- it's $8.49 and won't keep you up"
    rules = read_reply(text, lex, heard=heard)
    said = analyze_reply(text, lex, heard=heard)
    assert said.act == read_act(rules, heard)
    assert (said.proposed, said.compared, said.mentioned) == (rules.proposed, rules.compared, rules.mentioned)
    # the shopper's own words, read alone, keep the rules' act (the model reads replies)
    alone = analyze(text, lex)
    assert alone.act == read_reply(text, lex).act


def test_a_reply_to_no_shoppers_words_keeps_the_rules_act(lex):
    # the model reads replies to the shopper; with nothing heard the rules' act stands
    rules = read_reply("The Honeycrisp apples are $4.49 for a 3 lb bag.", lex)
    model = act_model()
    f = act_features(rules, None)
    assert choose_act(model, f, rules.act) == rules.act == read_act(rules, None)
    heard = analyze("how much are the honeycrisp apples?", lex)
    f = act_features(rules, heard)
    assert choose_act(model, f, "Greet") == model.predict(f)


def test_features_name_what_the_rules_read_and_the_words(lex):
    heard = analyze("that's too expensive", lex)
    said = read_reply("ok, no worries! what's the most you'd like to spend?", lex, heard=heard)
    f = act_features(said, heard)
    assert f["rule=" + said.act] > 1.0 and f["asks=budget"] == 1.0  # the rules' act weighs more
    assert f["heard_rejects"] == 1.0 and "heard=none" not in f
    assert f["w:spend"] == 1.0 and f["w:no worries"] == 1.0
    assert not [k for k in f if "expensive" in k]  # the shopper's words enter as the rules read them
    assert act_features(said, None)["heard=none"] == 1.0


def test_prediction_is_the_act_of_the_highest_score():
    model = ActModel(("Greet", "Navigate"), (0.0, 0.5), {"w:hi": (2.0, 0.0), "w:left": (0.0, 1.0)})
    assert model.predict({"w:hi": 1.0}) == "Greet"
    assert model.predict({"w:left": 1.0}) == "Navigate"
    assert model.predict({"w:unseen": 1.0}) == "Navigate"  # only the intercepts
    assert ActModel.from_json(model.to_json()) == model


@pytest.mark.parametrize("data, complaint", [
    ({}, "not an act model"),
    ({"classes": ["Greet"], "intercept": [0.0, 1.0], "weights": {}}, "do not match"),
    ({"classes": ["Wave"], "intercept": [0.0], "weights": {}}, "do not match"),
    ({"classes": ["Greet"], "intercept": ["x"], "weights": {}}, "not an act model"),
])
def test_a_broken_weights_file_says_so_and_how_to_refit(data, complaint):
    with pytest.raises(ValueError, match=complaint) as e:
        ActModel.from_json(data, source="act_model.json")
    assert "python -m tests.language.fit_acts" in str(e.value)
