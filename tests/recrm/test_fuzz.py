import random

from recrm.composite import RecRMComposite
from recrm.context import TurnContext
from tests.recrm.turns import opening_history, turn
from tests.world import REWARD_FIXTURES, REWARD_PRODUCTS

PIECES = (
    [p[1] for p in REWARD_PRODUCTS]
    + [p[2] for p in REWARD_PRODUCTS]
    + [f[1] for f in REWARD_FIXTURES]
    + [
        "$4.99",
        "$",
        "$12",
        "it",
        "is",
        "not",
        "gluten-free",
        "vegan",
        "in your cart",
        "you're holding",
        "your budget is $5",
        ",",
        ".",
        "!",
        "?",
        "—",
        "[a]",
        "Try the",
        "Ocean Fresh",
        "cod",
        "No",
        "\n",
        "",
        "%",
        "&",
    ]
)


def test_random_responses_never_raise_and_stay_in_range(index, task):
    rng = random.Random(0)
    comp = RecRMComposite()
    history = opening_history()
    for n in range(300):
        text = " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 25)))
        atype = rng.choice(["Recommend", "Explain", "AskPreference", "Navigate", None])
        pid = rng.choice([p[0] for p in REWARD_PRODUCTS] + [None, "sm_p999"])
        rec = turn(
            text,
            atype,
            n=3,
            recommended_id=pid,
            ranking=rng.sample([p[0] for p in REWARD_PRODUCTS] + ["x"], rng.randint(0, 5)),
            action={
                "display_name": rng.choice(PIECES),
                "visible_now": rng.choice([True, False, "yes"]),
                "reason": text,
            },
        )
        r = comp.score(TurnContext.from_record(rec, None, task, index, history))
        assert 0.0 <= r.total <= 1.0, (n, text)
        for v in r.components.values():
            assert v is None or 0.0 <= v <= 1.0
        if r.gates["instruction"] == 0.0 or r.gates["consistency"] == 0.0:
            assert r.total == 0.0
