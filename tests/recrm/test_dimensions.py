"""recrm.dimensions: the reward dimensions declared once, read everywhere, extendable by one declaration."""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
from pathlib import Path

import pytest

from recrm import dimensions as dims
from recrm.components import ComponentScore
from recrm.composite import COMPONENT_NAMES, TERMS, VARIANTS, RecRMComposite
from recrm.context import TurnContext
from tests.recrm.turns import honest_recommend, opening_history, turn

ROOT = Path(__file__).resolve().parents[2]
FIVE = {"instruction", "consistency", "relevance", "ranking", "behavior"}


# ------------------------------------------------------------------ (a) one declaration
def _literal_name_collections(path: Path) -> list[tuple[int, list[str]]]:
    """(line, names) of every tuple / list / set literal holding two or more dimension names."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in FIVE]
            if len(set(names)) >= 2:
                out.append((node.lineno, names))
    return out


def test_no_module_restates_the_dimension_names():
    found = {}
    for top in ("recrm", "train", "eval"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "recrm" / "dimensions.py":
                continue
            hits = _literal_name_collections(path)
            if hits:
                found[str(path.relative_to(ROOT))] = hits
    assert found == {}, f"spell the dimensions through recrm.dimensions, not as literals: {found}"


def test_the_declarations_and_what_derives_from_them():
    assert dims.DIMENSION_NAMES == ("instruction", "consistency", "relevance", "ranking", "behavior")
    assert dims.GATES == ("instruction", "consistency") and dims.ANCHOR == "relevance"
    assert dims.BONUS == ("ranking", "behavior") and dims.SCORES == ("relevance", *dims.BONUS)
    assert dims.TERMS == ("instruction", "relevance", "ranking", "behavior", "dialogue")
    assert dims.JUDGES == ("instruction", "consistency", "relevance") and dims.HEADED == dims.BONUS
    # the old public names are aliases of the derived tuples
    from recrm.data.prompts import JUDGE_KINDS
    from recrm.data.schema import KINDS, RECORD_TYPES
    from recrm.judges.formats import GENERATIVE_KINDS
    from recrm.scorers import REWARD_DIMENSIONS
    from recrm.train import TASKS
    from train.rewards import PARTS
    from train.rollout import COMPONENTS

    assert COMPONENT_NAMES == REWARD_DIMENSIONS == KINDS == TASKS == COMPONENTS == tuple(RECORD_TYPES)
    assert TERMS == dims.TERMS and PARTS == (*dims.TERMS, "outcome")
    assert JUDGE_KINDS == dims.JUDGES and GENERATIVE_KINDS == dims.HEADED
    assert [type(c).__name__ for c in RecRMComposite().components.values()] == [
        "InstructionFollowing", "FactualConsistency", "QueryItemRelevance", "ItemRanking", "BehaviorPrediction"]
    assert all(d.make_rule().name == d.name for d in dims.DIMENSIONS)


@pytest.mark.parametrize("bad, match", [
    (dict(role="bonus"), "role must be"),
    (dict(role="gate", weight="beta"), "a gate has no weight"),
    (dict(weight=None), "weight must be"),
    (dict(model="regressor"), "model must be"),
    (dict(rule="not a path"), "rule must be"),
])
def test_a_malformed_dimension_is_refused(bad, match):
    spec = dict(name="brevity", role="score", rule=lambda: None, description="-", symbol="R_brev",
                label="brevity", switch="behavior", weight="beta") | bad
    with pytest.raises(ValueError, match=match):
        dims.Dimension(**spec)


def test_register_refuses_what_the_formula_cannot_take():
    base = dict(role="score", rule=lambda: None, description="-", symbol="R_x", label="x")
    with pytest.raises(ValueError, match="two dimensions"):
        dims.register_dimension(dims.Dimension(name="ranking", switch="behavior", weight="beta", **base))
    with pytest.raises(ValueError, match="exactly one alpha"):
        dims.register_dimension(dims.Dimension(name="x", switch="behavior", weight="alpha", **base))
    with pytest.raises(ValueError, match="switch must be one of"):
        dims.register_dimension(dims.Dimension(name="x", switch="normalized", weight="beta", **base))
    with pytest.raises(ValueError, match="declared"):
        dims.unregister_dimension("ranking")
    assert dims.dimensions() == dims.DIMENSIONS


# ------------------------------------------------------------------ (b) the recipe: a sixth dimension
class Brevity:
    """A toy score: 1 for a reply of at most ten words, else 0.25."""

    name = "brevity"

    def score(self, ctx: TurnContext) -> ComponentScore:
        words = len(ctx.response.split())
        return ComponentScore(1.0 if words <= 10 else 0.25, {"words": words})


class Politeness:
    """A toy gate: shut unless the reply says please or thanks."""

    name = "politeness"

    def score(self, ctx: TurnContext) -> ComponentScore:
        polite = any(w in ctx.response.lower() for w in ("please", "thank"))
        return ComponentScore(1.0 if polite else 0.0, {})


BREVITY = dims.Dimension(name="brevity", role="score", rule=Brevity, description="short replies",
                         symbol="R_brev", label="brevity (R_brev)", switch="behavior", weight="beta")
POLITENESS = dims.Dimension(name="politeness", role="gate", rule=f"{__name__}:Politeness",
                            description="a courteous reply", symbol="C_polite", label="politeness gate",
                            switch="consistency")


@pytest.fixture
def brevity():
    with dims.registered(BREVITY) as d:
        yield d
    assert "brevity" not in dims.dimension_names()


def _ctx(index, task, rec):
    return TurnContext.from_record(rec, None, task, index, opening_history())


def test_a_new_reward_component_is_one_declaration_and_a_class(index, task, brevity):
    from recrm.scorers import build_components, resolve_scorer

    assert isinstance(resolve_scorer("brevity", "rule"), Brevity)
    assert [c.name for c in build_components()] == [*COMPONENT_NAMES, "brevity"]
    mine = Brevity()
    assert resolve_scorer("brevity", mine) is mine
    honest = honest_recommend()  # every declared component scores 1 (test_composite)
    r = RecRMComposite().score(_ctx(index, task, honest))
    words = len(honest.response.split())
    r_brev = 1.0 if words <= 10 else 0.25
    assert r.components["brevity"] == r_brev and r.details["brevity"] == {"words": words}
    scale = 1.0 + 3 * 0.5  # alpha + n_beta beta with three beta scores
    assert r.terms == pytest.approx({"instruction": 0.0, "relevance": 1.0 / scale, "ranking": 0.5 / scale,
                                     "behavior": 0.5 / scale, "brevity": 0.5 * r_brev / scale, "dialogue": 0.0})
    assert r.total == pytest.approx((1.0 + 0.5 * (1.0 + 1.0 + r_brev)) / scale)
    assert r.total == pytest.approx(sum(r.terms.values()))
    assert RecRMComposite(variant="paper").score(_ctx(index, task, honest)).total == pytest.approx(
        1.0 + 0.5 * (2.0 + r_brev))
    # off below the threshold and on rungs without the behaviour terms, like R_rank and R_beh
    assert RecRMComposite(variant="+relevance").score(_ctx(index, task, honest)).terms["brevity"] == 0.0
    assert "brevity" in VARIANTS["full"].active and "brevity" not in VARIANTS["+relevance"].active
    # a learned scorer or a config can name it
    with pytest.raises(ValueError, match="unknown reward dimension"):
        resolve_scorer("verbosity", "rule")
    # GSPO's reward parts take it too, and still sum to the turn's total
    from train.rewards import parts, turn_parts

    assert "brevity" in parts()
    assert sum(turn_parts(r.as_dict(), 1.0).values()) == pytest.approx(r.total)


def test_a_new_gate_is_one_declaration_and_a_class(index, task):
    from train.rewards import soft_gate

    honest = honest_recommend()
    with dims.registered(POLITENESS):
        full = RecRMComposite().score(_ctx(index, task, honest))
        assert full.gates == {"instruction": 1.0, "consistency": 1.0, "politeness": 0.0} and full.total == 0.0
        assert full.ungated == pytest.approx(1.0)
        assert soft_gate(full.as_dict(), 0.5) == pytest.approx(0.5)
        # its switch is C_consist's: R4 leaves it open
        r4 = RecRMComposite(variant="+behavior").score(_ctx(index, task, honest))
        assert r4.gates["politeness"] == 1.0 and r4.total == pytest.approx(1.0)
    assert "politeness" not in RecRMComposite().score(_ctx(index, task, honest)).gates


# ------------------------------------------------------------------ (c) the composite is unchanged
class Fixed:
    def __init__(self, name, value, details=None):
        self.name, self.value, self.details = name, value, details or {}

    def score(self, ctx):
        return ComponentScore(self.value, dict(self.details))


GRID = itertools.product((1.0, 0.0, 0.7), (1.0, 0.0, 0.7), (None, 0.0, 0.5, 0.51, 1.0), (None, 0.3), (None, 1.0),
                         (None, 0.5))
CONFIGS = [dict(variant=v) for v in VARIANTS] + [dict(variant=v, normalize=False) for v in VARIANTS if v != "paper"] \
    + [dict(variant=v, alpha=0.7, beta=0.2, tau=0.3, neutral=0.1) for v in VARIANTS]


def _golden_dump(index, task) -> str:
    asks = turn("What kind of cereal do the kids like?", n=3)
    ctxs = [_ctx(index, task, honest_recommend()), _ctx(index, task, asks)]
    out = []
    for inst, cons, relev, rank, beh, cap in GRID:
        components = [Fixed("instruction", inst), Fixed("consistency", cons),
                      Fixed("relevance", relev, {} if cap is None else {"first_turn_cap": cap}),
                      Fixed("ranking", rank), Fixed("behavior", beh)]
        for cfg in CONFIGS:
            composite = RecRMComposite(components=components, **cfg)
            out += [r.as_dict() for r in composite.score_batch(ctxs)]
            out.append(composite.combine(inst, cons, relev, rank, beh))
    return json.dumps(out, sort_keys=True)


# sha256 of _golden_dump under the composite before recrm.dimensions (commit f20a4e9), updated
# once since, by a reading and not by the composite: "What kind of cereal do the kids like?"
# (cereal: one category) now asks a preference, open in that dialogue, not the category the
# shopper gave, so only that turn's dialogue credit changed (0 -> alpha-scaled 0.5)
GOLDEN = "abb4aed419ea27494758ba0f0b2701c8e8bec8adac40f26bf12bb729c26ea3a7"


def test_composite_outputs_are_byte_identical_to_before(index, task):
    assert hashlib.sha256(_golden_dump(index, task).encode()).hexdigest() == GOLDEN
