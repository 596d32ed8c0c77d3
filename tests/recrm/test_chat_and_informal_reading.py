"""Chat markup, clipped notes and non-native English read as the heuristic's plain prose is
read (issue 24): the same facts pass the same gates, and real faults in those styles are
still caught. Real catalogs, one table per failure found by restyling the heuristic."""

import json

import pytest

from recrm.components import FactualConsistency, InstructionFollowing
from recrm.context import TurnContext
from situ_gym.language import analyze, lexicon_for, put_forward
from situ_gym.records import ToolCall, TurnRecord
from situ_gym.scene.index import index_of
from situ_gym.scene.loader import load_scene
from tests.world import task as world_task


def _index(store):
    return index_of(load_scene(store))


def _context(store, response, *, action="Explain", ranking=(), recommended=None):
    index = _index(store)
    pid = ranking[0] if ranking else next(iter(index.products))
    task = world_task("t", store, "x", [], acceptance={"inspect_before_buying": False, "accept_substitutes": True},
                      profile_id="p", theme="x", category=index.products[pid].category, required_tags=[],
                      avoided_tags=[], target_product_id=pid, budget=index.products[pid].price, reference_set=[pid])
    fields = {"display_name": index.products[recommended].name, "visible_now": False, "reason": "fits what you said"} \
        if action == "Recommend" else {}
    raw = json.dumps({"response": response, "assistant_actions": [{"type": action, **fields}],
                      "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": list(ranking)})
    rec = TurnRecord(turn=2, assistant_raw=raw, assistant_valid=True, response=response, action_type=action,
                     action={"type": action, **fields}, recommended_id=recommended,
                     expected_user_action=ToolCall(name="idle"), ranking=list(ranking))
    return TurnContext.from_record(rec, None, task, index)


def _findings(judge, ctx):
    return [f["message"] for f in judge.score(ctx).details.get("findings", []) if f.get("hard", True)]


# ---------------------------------------------------------------- what is put forward
@pytest.mark.parametrize(("text", "offered"), [
    # a numbered markdown comparison: the favoured side only (a list line is no name's end)
    ("Great question! Here's how the two options compare:\n\n1. **Campo Verde Gluten Free Penne, 32 oz**: "
     "suits you better, since it offers gluten-free, vegan, box, penne\n2. **Campo Verde Penne Rigate, 32 oz**: "
     "costs more\n\nLet me know if you have any questions!", ("sm_p045",)),
    ("Compared with the Campo Verde Penne Rigate, 32 oz, which costs more, the Campo Verde Gluten Free Penne, "
     "32 oz suits you better since it offers gluten-free, vegan, box, penne.", ("sm_p045",)),
    # "here's the next step" offers a step, not the product named after it
    ("You're doing great! Here's the next step: The Oakridge Organics Chamomile Herbal Tea is at the **back** of "
     "**Shelf 3**.", ("sm_p038",)),
    ("Here's the next step: head to Shelf 3.", ()),
])
def test_what_a_chat_turn_puts_forward(text, offered):
    lex = lexicon_for(_index("supermarket"))
    said = analyze(text, lex)
    assert put_forward(said) == offered


def test_here_is_the_next_step_carries_no_proposal_to_a_product_in_view():
    lex = lexicon_for(_index("supermarket"))
    text = "You're doing great! Here's the next step: The tea is at the back of Shelf 3."
    assert analyze(text, lex, visible={"sm_p038"}).proposed == ()
    assert analyze("Here's the tea for you: it is at the back of Shelf 3.", lex, visible={"sm_p038"}).proposed == (
        "sm_p038",)


def test_the_favoured_side_of_a_non_native_comparison_is_the_one_offered():
    lex = lexicon_for(_index("home_furnishings"))
    text = ("Compare with the Casa Linea Alba 3-Seat Sofa, Grey Velvet, which miss some things you ask, the Casa "
            "Linea Elio 3-Seat Sofa, Grey Velvet is more good for you, it offer grey, velvet.")
    said = analyze(text, lex)
    assert said.proposed == ("hf_p005",) and put_forward(said) == ("hf_p005",)
    # "there is a better match" names none: no cue for a product elsewhere in the turn
    assert analyze("Understood, I skip this one. There is more better match for your sofa.", lex,
                   visible={"hf_p005"}).proposed == ()


def test_the_most_specific_guidance_is_the_one_read():
    lex = lexicon_for(_index("supermarket"))
    nav = analyze("Let's keep going! Turn **left** about **90 degrees**, since **Shelf 11** is in that "
                  "direction.\n\nLet me know if you have any questions!", lex).navigation
    assert (nav.target, nav.direction, nav.angle) == ("sm_shelf_11", "left", 90.0)
    assert analyze("Keep going. Then walk ahead.", lex).navigation.direction == "ahead"


# ---------------------------------------------------------------- the gates
def test_a_markdown_comparison_passes_the_instruction_gate_as_its_prose_does():
    chat = ("Here's how the two options compare:\n\n1. **Campo Verde Gluten Free Penne, 32 oz**: suits you better, "
            "since it offers gluten-free, vegan, box, penne\n2. **Campo Verde Penne Rigate, 32 oz**: costs more")
    prose = ("Compared with the Campo Verde Penne Rigate, 32 oz, which costs more, the Campo Verde Gluten Free Penne, "
             "32 oz suits you better since it offers gluten-free, vegan, box, penne.")
    for text in (prose, chat):
        assert _findings(InstructionFollowing(), _context("supermarket", text, action="Compare",
                                                          ranking=("sm_p045", "sm_p043"))) == []
    # favouring the product the ranking does not head is still caught, in either style
    for text in (prose, chat):
        wrong = _context("supermarket", text, action="Compare", ranking=("sm_p043", "sm_p045"))
        assert any("heads neither" in m for m in _findings(InstructionFollowing(), wrong))


@pytest.mark.parametrize(("store", "text", "ranking", "expected"), [
    # negation in non-native English: no claim that the lamp is linen
    ("home_furnishings", "The Lumen Field Elio Table Lamp, Amber Glass is good for your needs because it is "
     "table lamp, and it has nothing of linen, price $75.99.", ("hf_p078",), []),
    ("home_furnishings", "The Lumen Field Elio Table Lamp, Amber Glass is linen, price $75.99.", ("hf_p078",),
     ["calls Lumen Field Elio Table Lamp, Amber Glass 'linen'"]),
    # a budget in words is a budget, not the nightstand's price (the user has not said one here)
    ("home_furnishings", "I am recommending Fjell Home Zephyr Nightstand, Grey Pine, because is grey, and price is "
     "$119.99, it is in your 160 dollars budget.", ("hf_p105",), ["cites a $160 budget the user has not stated"]),
    ("home_furnishings", "The Fjell Home Zephyr Nightstand, Grey Pine is 90 dollars.", ("hf_p105",),
     ["states '90 dollars' for Fjell Home Zephyr Nightstand"]),
    # a conditional instruction about the cart claims nothing; a claim still does
    ("home_furnishings", "If you are happy with it, you put it in your cart.", ("hf_p105",), []),
    ("home_furnishings", "You've put it in your cart already.", ("hf_p105",), ["but the cart is empty"]),
    # a brand in lower case with its product's words is that product (clipped notes)
    ("supermarket", "vs campo verde extra virgin olive oil (misses some asks): campo verde avocado oil better, "
     "vegan, avocado, glass bottle, high heat.", ("sm_p098",), []),
    ("supermarket", "campo verde avocado oil: organic, 7.89.", ("sm_p098",),
     ["calls Campo Verde Avocado Oil, 16.9 fl oz 'organic'"]),
])
def test_the_consistency_gate_reads_informal_styles(store, text, ranking, expected):
    found = _findings(FactualConsistency(), _context(store, text, ranking=ranking))
    assert len(found) == len(expected) and all(any(e in f for f in found) for e in expected), found


@pytest.mark.parametrize(("text", "target", "relation"), [
    # a clipped note's arrow ends the place it points from; the area, not its store, is the goal
    ("light logic: light logic - night and accent lights -> string lights there.", "hf_area_light_logic_4", "to"),
    # a lower-case store name made of product words is a place where a place is meant
    ("into the plant via doorway, just inside.", "hf_store_the_plant", "into"),
    ("leave the plant via doorway first; atelier prime elsewhere on floor.", "hf_store_the_plant", "out_of"),
    ("Let's leave The Plant through its doorway first; Atelier Prime is elsewhere on the floor.",
     "hf_store_the_plant", "out_of"),
])
def test_clipped_guidance_names_where_to_go(text, target, relation):
    nav = analyze(text, lexicon_for(_index("home_furnishings"))).navigation
    assert (nav.target, nav.relation) == (target, relation)


def test_a_lower_case_product_word_stays_a_product_without_a_place_cue():
    lex = lexicon_for(_index("home_furnishings"))
    assert analyze("I want a plant for my desk.", lex).navigation is None
