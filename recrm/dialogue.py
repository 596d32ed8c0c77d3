"""What a turn that recommends nothing is worth: it is scored for what it does.

A turn that puts no product forward (``recrm.context.judged_item`` is None) is an
elicitation, guidance or social turn. Its value in [0, 1] (the composite pays
``neutral * value``) is the best of what it does:

* **Elicitation** — a question about a slot still open (no detail of that kind revealed
  yet, or the task still holds an unrevealed one: a second need, say) is worth 1; a
  question with no recognisable slot ("anything else?") 0.5; asking again only what is
  already known 0; so is the shopper's own question said back to it, and "where are you?"
  asked again right after it was answered.
* **Guidance** — navigation whose expected user action is a legal, valid motion and agrees
  with the words (the place named is the annotated goal or the action's target, the
  direction said is the action's direction) is worth 1; guidance whose words and
  expected action disagree, or that names nowhere to go, 0.25.
* **Opening** — a greeting on the first turn is worth 1.
* **Empty acts** — a turn annotated as an act about products (Recommend, Explain, Compare,
  ConfirmPurchase) whose words put no product in play, or a purchase asked for with nothing
  under discussion ("Add it to your cart!" before any product), is worth 0: it does not do
  what it says, and best-of-N preferred it to followable guidance while it earned 0.5.
* Anything else (an answer, an acknowledgement, a closing) is worth 0.5.

Every goal has a kind of product, whether or not the task lists it among the details to
disclose, so "what are you looking for?" stays open until the shopper has named the kind
(a room or a use said first does not answer it).

No decay over the episode: an assistant that keeps asking runs out of open slots, one that
keeps guiding is paid only while its guidance is followable, and either way a turn is
worth at most ``neutral`` (0.2), far below an honest recommendation (up to 1).
"""

from __future__ import annotations

from recrm.context import TurnContext
from situ_gym.language import SLOT_KINDS
from situ_gym.language.dialogue import echoed_questions

__all__ = ["dialogue_value"]

_MOTION_TOOLS = frozenset(
    {"move_forward", "move_backward", "turn_and_move", "move_and_turn", "side_step", "turn",
     "look_up_down", "move_to_fixture", "move_to_store", "move_to_area"}
)


_PRODUCT_ACTS = frozenset({"Recommend", "Explain", "Compare", "ConfirmPurchase"})


def dialogue_value(ctx: TurnContext) -> tuple[float, str]:
    """(value in [0, 1], what earned it) for a turn that judges no product."""
    said = ctx.said
    under_discussion = ctx.focus is not None or ctx.held_item is not None
    if said.purchase_prompt and not under_discussion:
        return 0.0, "asks for a purchase with nothing under discussion"
    pointing = under_discussion and (said.deictic or said.purchase_prompt)  # "shall we add it?"
    if ctx.action_type in _PRODUCT_ACTS and not said.products and not pointing:
        return 0.0, f"annotated {ctx.action_type} with no product in the words"
    options: list[tuple[float, str]] = []
    if said.questions:
        options.append(_elicitation(ctx))
    if said.navigation is not None or ctx.action_type == "Navigate":
        options.append(_guidance(ctx))
    if said.greeting and not ctx.history:
        options.append((1.0, "opening greeting"))
    if not options:
        options.append((0.5, "answer or acknowledgement"))
    return max(options, key=lambda o: o[0])


def _elicitation(ctx: TurnContext) -> tuple[float, str]:
    if echoed_questions(ctx.said, ctx.last_user_utterance):
        return 0.0, "repeats the shopper's own question"  # best-of-N played the echo at 0.2
    asked = [s for s in ctx.said.asks if s != "other"]
    if not asked:
        return 0.5, "open question"
    if asked == ["location"] and ctx.history_said and "location" in ctx.history_said[-1].asks:
        return 0.0, "asks again where the shopper is, a turn after asking it"
    revealed = dict(ctx.revealed)
    pending: dict[str, int] = {}
    for item in ctx.task.disclosure:
        pending[item.kind] = pending.get(item.kind, 0) + 1
    pending["category"] = max(pending.get("category", 0), 1)  # every goal has a kind of product
    for slot in asked:
        kinds = SLOT_KINDS.get(slot, ())
        unknown = not any(revealed.get(k, 0) for k in kinds)
        still_held = any(pending.get(k, 0) > revealed.get(k, 0) for k in kinds)
        if not kinds or unknown or still_held:
            return 1.0, f"asks an open slot ({slot})"
    return 0.0, f"asks only what is known ({', '.join(asked)})"


def _guidance(ctx: TurnContext) -> tuple[float, str]:
    nav = ctx.said.navigation
    eua = ctx.expected_user_action
    if nav is None:
        return 0.25, "Navigate without guidance in the words"
    if eua is None or not (eua.legal and eua.valid) or eua.name not in _MOTION_TOOLS:
        return 0.25, "guidance without a legal motion to follow it"
    goals = {ctx.navigation_goal_id, eua.target_id} - {None}
    if nav.target is not None and goals:
        if nav.target in goals:
            return 1.0, "guidance to the annotated goal"
        return 0.25, f"the words lead to {nav.target!r}, the expected action elsewhere"
    # A turn toward a place named ("Turn right; Atelier Prime is that way") expects a turn,
    # which has no target: the direction said is what the action can agree with.
    said_dir, act_dir = nav.direction, eua.arguments.get("direction")
    if said_dir is None or act_dir is None or said_dir == act_dir:
        return 1.0, "guidance consistent with the expected action"
    return 0.25, f"the words say {said_dir!r}, the expected action {act_dir!r}"
