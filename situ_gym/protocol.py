"""The two protocols, and every place where the default departs from the papers.

``protocol="default"`` (the default everywhere) keeps what serves learning and speed: a rule
shopper that is fast and deterministic, a shaped reward, a fixed observation space.
``protocol="paper"`` runs SituRecBench and RecRM-Bench as written: pass it to ``gym.make``
(``gym.make("SituRec-Supermarket-v0", protocol="paper")``) or to the command line
(``python -m eval.rollout --protocol paper``); the env hands it on to its rule shopper and
moderator, ``recrm.RecRMReward`` reads it from the env, and the rollout passes it to the
judge.

``DEPARTURES`` is the one list of the differences. ``docs/protocol.md`` is written from it
(``python -m situ_gym.protocol > docs/protocol.md``; a test keeps the two equal), and every
row has a test of each protocol in ``tests/protocol/test_<key>.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROTOCOLS", "Departure", "DEPARTURES", "check_protocol", "markdown"]

PROTOCOLS = ("default", "paper")


def check_protocol(value: object) -> str:
    """``value`` if it names a protocol; a ValueError naming the choices otherwise."""
    if type(value) is str and value in PROTOCOLS:
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ValueError(f"protocol must be one of {PROTOCOLS}, got {shown}")


@dataclass(frozen=True)
class Departure:
    """One place where the default protocol differs from the papers."""

    key: str  # also names its tests: tests/protocol/test_<key>.py
    section: str  # where the paper says it
    paper: str  # what the paper specifies
    default: str  # what the default protocol does instead
    why: str  # why the default does so
    restore: str  # how to get the paper's behaviour


DEPARTURES: tuple[Departure, ...] = (
    Departure(
        key="user_simulator",
        section="SituRecBench 3.2, A.3",
        paper="A vision-language model role-plays the shopper from its profile and goal.",
        default="The seeded rule shopper (`situ_gym.user.rule`) reads the assistant through the "
                "language layer and follows the persona policy of `situ_gym.user.rule.persona`.",
        why="Training needs millions of turns: the rule shopper costs no model call, is byte-for-byte "
            "deterministic under a seed and cannot be prompted out of its goal.",
        restore="`--user llm --user-model SPEC` (either protocol); `protocol=\"paper\"` alone keeps the rule "
                "shopper, with the paper's budget rule.",
    ),
    Departure(
        key="budget",
        section="SituRecBench A.3",
        paper="Purchase decisions follow the shopping needs and preferences within the task's budget limit.",
        default="A shopper may buy a product 5-10% over budget (low or medium price sensitivity), or one "
                "that misses a need after the first (openness >= 0.5), once the assistant has explained "
                "that trade-off for it and a per-product draw agrees.",
        why="Real shoppers weigh trade-offs; it rewards an assistant that explains them instead of only "
            "filtering, and makes price sensitivity mean something.",
        restore="`protocol=\"paper\"`: every need and the budget are hard limits.",
    ),
    Departure(
        key="moderator_reads",
        section="SituRecBench B.3 (4)",
        paper="The moderator decides from the conversation history, the latest assistant and user "
              "messages and the current user action.",
        default="The rule moderator also reads the rule shopper's own record of the turn: its give-up "
                "flag and its intent.",
        why="The shopper knows exactly when it gave up or is still shopping; reading its record makes "
            "the end of an episode exact and never a misreading of its words.",
        restore="`protocol=\"paper\"`: the rule moderator reads the messages and the action only (nor does "
                "it read an LLM shopper's give-up flag); `--moderator llm` asks a chat model with the same inputs.",
    ),
    Departure(
        key="end_order",
        section="SituRecBench B.3",
        paper="End checks in the order purchase, turn limit, recommendation exhaustion, moderator, "
              "motion stall: on the last turn the turn limit wins over the three after it.",
        default="Purchase, recommendation exhaustion, moderator, motion stall, then the turn limit "
                "(`truncated`).",
        why="In Gymnasium `terminated` is an end of the task and `truncated` a time limit: an episode "
            "that really ended on its last turn is terminated, so value targets never bootstrap past it.",
        restore="`protocol=\"paper\"`: the last turn is always `turn_limit` unless it bought something.",
    ),
    Departure(
        key="recommendation_count",
        section="SituRecBench B.3 (3)",
        paper="Recommendation attempts are counted from Recommend annotations.",
        default="Every Recommend annotation counts, and so does every new product the words put forward "
                "under another label, and a product the shopper turned down proposed again under any label "
                "(`situ_gym.language.attempts`); both protocols count this way.",
        why="One meaning of recommendation for env, shopper and reward: an assistant cannot dodge the "
            "three-attempt limit by not annotating, and the count is never below the paper's.",
        restore="Not switchable: under `protocol=\"paper\"` the count is at least the paper's.",
    ),
    Departure(
        key="ablation_image",
        section="SituRecBench D.4",
        paper="\"w/o EVV\" removes the assistant's first-person RGB image (current and historical inputs).",
        default="Under either ablation `som_rgb` stays in the observation as a black frame of the same "
                "shape; assistants never send it to a model (the map still goes, as D.4 keeps it).",
        why="A policy with a fixed input shape (an image encoder, a batched vector env) runs every "
            "condition without code changes.",
        restore="`protocol=\"paper\"`: the observation has no `som_rgb` key under either ablation.",
    ),
    Departure(
        key="judge",
        section="SituRecBench C.1, C.2",
        paper="An LLM judge rates each trajectory on seven anchored dimensions from the trajectory alone.",
        default="The rule judge (`eval.rule_judge`), which also reads the hidden task (Overall = "
                "0.7 x the mean of the six others + 0.3 x the outcome against the reference set).",
        why="Ratings for every run with no model and no cost, deterministic; the outcome term ties "
            "them to what the shopper needed.",
        restore="`--judge llm --judge-model SPEC` (eval.rollout, eval.metrics, eval.report, eval.human report); "
                "`protocol=\"paper\"` makes the rule judge read the trajectory only (the outcome is whether "
                "anything was bought, the preferences those the shopper stated).",
    ),
    Departure(
        key="judge_definitions",
        section="SituRecBench C.1",
        paper="The seven dimensions with their full anchored definitions.",
        default="The LLM judge's prompt abridges the definitions.",
        why="A shorter prompt leaves room for the transcript in a small judge's context.",
        restore="`protocol=\"paper\"` (`--protocol paper`): the full definitions, word for word.",
    ),
    Departure(
        key="recrm_composite",
        section="RecRM-Bench 4.5",
        paper="R = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh)); "
              "alpha, beta and tau are not given.",
        default="The same gates and bracket, divided by alpha + 2 beta (R in [0, 1]); a turn that judges "
                "no product gets a small dialogue value (`recrm.dialogue`, at most 0.2); a product put "
                "forward before the shopper said anything is at most weakly relevant.",
        why="GSPO compares rollouts by their sum of turn rewards: asking and guiding turns need a "
            "signal, a bounded reward keeps advantages comparable, and a blind first-turn guess should "
            "not pay like an elicited recommendation.",
        restore="`RecRMReward(env, variant=\"paper\")`, the default under `protocol=\"paper\"`: the formula "
                "exactly, alpha = 1, beta = 0.5, tau = 0.5 unless given.",
    ),
)


def markdown() -> str:
    """``docs/protocol.md``: every departure with the paper's text, the default, why, and the switch."""
    lines = [
        "# The paper's protocol and the default",
        "",
        "<!-- Written by `python -m situ_gym.protocol > docs/protocol.md` from "
        "`situ_gym.protocol.DEPARTURES`; edit that list, not this file. -->",
        "",
        "SituRec Gym runs two protocols. `protocol=\"paper\"` follows SituRecBench and RecRM-Bench as "
        "written; the default departs from them where that serves learning and speed. Select one with "
        "`gym.make(ENV_ID, protocol=\"paper\")` or `python -m eval.rollout --protocol paper`; the run's "
        "`config.json`, every episode record and the report's header say which was used.",
        "",
        "Each row below has a test of both protocols in `tests/protocol/test_<key>.py`.",
        "",
        "| Key | Paper (section) | Default | Why | Paper's behaviour |",
        "|---|---|---|---|---|",
    ]
    for d in DEPARTURES:
        lines.append(f"| `{d.key}` | {d.paper} ({d.section}) | {d.default} | {d.why} | {d.restore} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
