"""The one rule for recommendation attempts (situ_gym.language.attempts), on utterances written
for it: what each puts forward, what is new, and how many attempts the env's limit counts."""

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from situ_gym.language import analyze, lexicon_for, raised_by, recommendation_attempt
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene

HONEY, WHEAT, CINNAMON = "sm_p001", "sm_p002", "sm_p003"
PLAIN_YOGURT, VANILLA_YOGURT, COCONUT_YOGURT = "sm_p207", "sm_p208", "sm_p210"
PENNE, ROTINI = "sm_p045", "sm_p047"


@pytest.fixture(scope="module")
def lex():
    return lexicon_for(SceneIndex(load_scene("supermarket")))


# (utterance, context, expected put_forward, expected new, expected count)
TABLE = [
    # proposed with a cue, in any form
    ("How about the Sunny Fields Honey Oat Clusters? They're $4.19.", {}, [HONEY], [HONEY], 1),
    ("I'd go with the Oakridge Organics Cinnamon Crunch.", {}, [CINNAMON], [CINNAMON], 1),
    # put forward without proposal wording: still an attempt
    ("Head to Shelf 1 on your left. By the way, the Sunny Fields Honey Oat Clusters are great.", {}, [HONEY], [HONEY], 1),
    ("Here's a quick rundown of the Morning Harvest Frosted Wheat Squares: $5.89, 18 oz.", {}, [WHEAT], [WHEAT], 1),
    ("rec: sunny fields honey oat clusters", {}, [HONEY], [HONEY], 1),
    ("The Oakridge Organics Cinnamon Crunch Cereal is on Shelf 1.", {}, [CINNAMON], [CINNAMON], 1),
    # several products at once: one attempt each
    ("You could try the Sunny Fields Honey Oat Clusters, the Morning Harvest Frosted Wheat Squares"
     " or the Oakridge Organics Cinnamon Crunch.", {}, [HONEY, WHEAT, CINNAMON], [HONEY, WHEAT, CINNAMON], 3),
    # an unrequested comparison favouring neither side offers both
    ("The Campo Verde Gluten Free Penne is $4.79; the Campo Verde Chickpea Rotini is $5.19.", {},
     [PENNE, ROTINI], [PENNE, ROTINI], 2),
    # the losing side of a comparison is weighed, not offered
    ("Compared with the Campo Verde Chickpea Rotini, which costs more, the Campo Verde Gluten Free Penne"
     " suits you better.", {}, [PENNE], [PENNE], 1),
    # options listed unasked, then one picked: each option was put forward
    ("There is three dish soap for grease: the BrightHome Original Blue 3.69, the BrightHome Grapefruit 3.29 and the"
     " Pure Meadow Lemon 6.99. Grapefruit is most cheap and also grease cutting, I take this.", {},
     ["sm_p111", "sm_p112", "sm_p115"], ["sm_p111", "sm_p112", "sm_p115"], 3),
    # ... also two set side by side unasked before the pick
    ("sunny grove no pulp 3.99 / sunny grove calcium added no pulp 3.89 -> calcium one, 10c less", {},
     ["sm_p219", "sm_p221"], ["sm_p219", "sm_p221"], 2),
    # a comparison the shopper asked for: its sides are answers
    ("The Campo Verde Gluten Free Penne is $4.79; the Campo Verde Chickpea Rotini is $5.19.",
     {"compare_requested": True}, [], [], 0),
    # not put forward: set aside, landmarks, a kind of product, praise of the shopper's choice
    ("You already turned down the Sunny Fields Honey Oat Clusters, so I won't suggest them again.", {}, [], [], 0),
    ("The Morning Harvest Frosted Wheat Squares are over your budget, so let's skip them.", {}, [], [], 0),
    ("Turn left at the end of the aisle, right next to the Morning Harvest Frosted Wheat Squares.", {}, [], [], 0),
    ("nice pick, yogurt then! and your budget?", {"visible": [PLAIN_YOGURT]}, [], [], 0),
    ("Great choice! What size would you like?", {"visible": [PLAIN_YOGURT]}, [], [], 0),
    # nothing new: put forward before, or raised by the shopper itself
    ("The Sunny Fields Honey Oat Clusters really are a good fit.", {"before": [HONEY]}, [HONEY], [], 0),
    ("Yes, the Meadow Creek Dairy Plain Greek Yogurt is $4.69.", {"raised": [PLAIN_YOGURT]}, [PLAIN_YOGURT], [], 0),
    # the Recommend annotation counts even when the words name nothing (the paper's rule)
    ("This one might be just right for you.", {"annotated": "Recommend"}, [], [], 1),
    ("Could you tell me your budget?", {"annotated": "AskPreference"}, [], [], 0),
    # proposing again a product the shopper turned down is a new recommendation of it,
    # whatever the annotation; repeating a standing recommendation (not turned down) is not
    ("I suggest the Sunny Fields Honey Oat Clusters, they fit your budget.",
     {"before": [HONEY], "declined": [HONEY], "annotated": "Explain"}, [HONEY], [], 1),
    ("Take a closer look. I suggest the Sunny Fields Honey Oat Clusters.",
     {"before": [HONEY], "annotated": "Explain"}, [HONEY], [], 0),
    ("You already turned down the Sunny Fields Honey Oat Clusters, so how about the Oakridge Organics"
     " Cinnamon Crunch?", {"before": [HONEY], "declined": [HONEY]}, [CINNAMON], [CINNAMON], 1),
    # the alternative after an acknowledged turn-down is offered, whatever its verb; the
    # turned-down one said in the same sentence as the acknowledgement is not
    ("No problem, we'll skip the Morning Harvest Frosted Wheat Squares! The Sunny Fields Honey Oat"
     " Clusters are $4.19 instead.", {}, [HONEY], [HONEY], 1),
    ("Understood, the Morning Harvest Frosted Wheat Squares are a no. Would you like something else?", {}, [], [], 0),
    # a push-back asks to reconsider the product turned down: proposed again, one attempt
    ("Fair, but the Sunny Fields Honey Oat Clusters fit your budget. Worth a second look?",
     {"before": [HONEY], "declined": [HONEY], "annotated": "HandleRejection"}, [HONEY], [], 1),
    # a short name of one product in view, chosen after a comparison
    ("greek $5.99 vs coconut $5.29, go coconut", {"visible": [VANILLA_YOGURT, COCONUT_YOGURT],
                                                 "compare_requested": True}, [COCONUT_YOGURT], [COCONUT_YOGURT], 1),
]


@pytest.mark.parametrize("text, ctx, offered, new, count", TABLE, ids=[row[0][:48] for row in TABLE])
def test_recommendation_attempts(lex, text, ctx, offered, new, count):
    said = analyze(text, lex, visible=frozenset(ctx.get("visible", ())))
    attempt = recommendation_attempt(
        said, before=ctx.get("before", ()), raised=ctx.get("raised", ()),
        annotated=ctx.get("annotated"), compare_requested=ctx.get("compare_requested", False),
        declined=ctx.get("declined", ()),
    )
    assert sorted(attempt.put_forward) == sorted(offered)
    assert sorted(attempt.new) == sorted(new)
    assert attempt.count == count


@pytest.mark.parametrize("reply, offered, expected", [
    ("The Morning Harvest Frosted Wheat Squares doesn't have the organic I'm after.", [HONEY], [WHEAT]),  # named
    ("No, that one doesn't work for me.", [WHEAT, HONEY], [HONEY]),  # the last one put forward
    ("Great, I'll take a look at it.", [HONEY], []),  # no rejection
])
def test_what_a_reply_turns_down(lex, reply, offered, expected):
    from situ_gym.language import turned_down

    assert list(turned_down(analyze(reply, lex), offered)) == expected


def _say(text: str, action: dict) -> str:
    import json

    return json.dumps({"response": text, "assistant_actions": [action],
                       "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def test_env_limit_counts_every_new_product_put_forward():
    """Three products in one turn spend the whole limit: the episode ends there, and the record
    says what was put forward."""
    env = gym.make("SituRec-Supermarket-v0", image_size=(96, 72))
    env.reset(seed=0)
    text = ("You could try the Sunny Fields Honey Oat Clusters, the Morning Harvest Frosted Wheat Squares"
            " or the Oakridge Organics Cinnamon Crunch.")
    *_, terminated, _, info = env.step(_say(text, {"type": "AnswerQuestion"}))
    assert info["turn"].put_forward == [HONEY, WHEAT, CINNAMON]
    assert info["turn"].recommendation_attempts == 3
    assert terminated and info["termination"] == "recommendation_exhausted"
    env.close()


def test_env_limit_ignores_repeats_and_counts_vague_recommend_annotations():
    env = gym.make("SituRec-Supermarket-v0", image_size=(96, 72))
    env.reset(seed=0)
    drop = "Let's keep walking. By the way, the Sunny Fields Honey Oat Clusters are great."
    counts = []
    for action in ({"type": "Navigate"}, {"type": "Navigate"}):
        *_, info = env.step(_say(drop, action))
        counts.append(info["turn"].recommendation_attempts)
    *_, terminated, _, info = env.step(_say("This one might be just right for you.", {"type": "Recommend"}))
    counts.append(info["turn"].recommendation_attempts)
    assert counts == [1, 0, 1]  # the same product again is no new attempt; a vague Recommend is one
    assert not terminated
    env.close()


@pytest.mark.parametrize("store, heard, raised", [
    # named by its brand or a word of its name no other product of its kind has ...
    ("supermarket", "I'll take the Golden Acre creamy", ("sm_p019",)),
    ("home_furnishings", "I like the Noor desk", ("hf_p039",)),
    # ... or asked about: answering costs nothing
    ("supermarket", "Where can I find the cannellini beans?", ("sm_p069",)),
    # a wish that happens to fit one product raises none: offering it is a recommendation
    ("home_furnishings", "I want a writing desk with drawers for my study.", ()),
    ("home_furnishings", "white bookcase, under 350", ()),
])
def test_what_the_shopper_raises_by_its_words(store, heard, raised):
    lx = lexicon_for(SceneIndex(load_scene(store)))
    assert raised_by(analyze(heard, lx), lx) == raised


def test_offering_the_one_product_a_wish_fits_is_an_attempt():
    lx = lexicon_for(SceneIndex(load_scene("home_furnishings")))
    heard = analyze("I want a writing desk with drawers for my study.", lx)
    assert heard.named == ("hf_p039",)  # the words fit the Noor desk alone
    said = analyze("The Ironbark Noor Writing Desk has drawers and cable management, $569.99.", lx)
    attempt = recommendation_attempt(said, raised=raised_by(heard, lx), annotated="Explain")
    assert attempt.new == ("hf_p039",) and attempt.count == 1
