"""Seeded profiles and shopping tasks of one store (SituRecBench App. A.3, four steps).

1. Roles and themes come from the store's people table (``vocab_people``, or the store folder's
   people.json: ``roles`` in store.json); gender, Big Five, interaction settings and the
   demographics (within the role's options) are sampled from the seed.
2. Four targets per profile, cycling through the role's themes, each of a different category
   and location (fixture, or display area) than the profile's other targets, and not the
   target of an earlier task when another choice exists.
3. Required tags (1-3 of the target's labels) and avoided tags (0-2 labels of its category
   peers that the target lacks) are searched so that the reference set has 2-6 products where
   possible; disclosure and acceptance follow the profile.
4. Budgets follow ``situ_gym.scene.budget.compute_budget``.

Subsets: ``rng = random.Random(42)``; for each profile in bank order, ``order = [0, 1, 2, 3]``,
``rng.shuffle(order)``, then the profile's task ``order[i]`` (bank order) goes to subset ``i``.
"""

from __future__ import annotations

import random

from situ_gym.assets.vocab_people import BEHAVIOR_STYLES, FIRST_NAMES, LAST_NAMES, people_of
from situ_gym.scene.budget import compute_budget, eligible_products, reference_set
from situ_gym.scene.model import (
    AcceptancePolicy,
    DisclosureItem,
    Interaction,
    Product,
    Profile,
    Scene,
    Task,
    TaskBank,
)
from situ_gym.scene.wording import AVOIDABLE_KEYS, avoid_phrasings, need_phrasings
from situ_gym.stores import store_spec

__all__ = ["build_tasks", "assign_subsets", "tag_phrase", "SUBSET_SEED"]

SUBSET_SEED = 42
TASKS_PER_PROFILE = 4
_TIER_WEIGHTS = {"high": (0.6, 0.3, 0.1), "medium": (0.25, 0.5, 0.25), "low": (0.1, 0.3, 0.6)}
_LEVELS = ("low", "medium", "high")


def tag_phrase(tag: str) -> str:
    """How a shopper says a label: ``"diet:gluten-free"`` -> ``"gluten-free"``."""
    key, _, v = tag.partition(":")
    templates = {
        "flavour": "{v} flavour", "scent": "with a {v} scent", "packaging": "in a {v}",
        "material": "made of {v}", "color": "in {v}", "style": "{v} style", "size": "{v} size",
        "allergen": "containing {v}", "life stage": "for a {v}", "pet": "for a {v}",
        "plant": "a {v}", "season": "{v} themed", "use": "for {v} use", "origin": "from the {v}",
        "ply": "{v}", "certification": "{v} certified", "preparation": "{v}",
    }
    if key in ("diet", "feature", "care", "caffeine", "form", "taste", "ripeness", "texture"):
        return v
    if key in templates:
        return templates[key].format(v=v)
    return f"{v} {key}"


def _profile(rng: random.Random, pid: str, role: tuple, used_names: set[str]) -> Profile:
    (role_name, persona, _themes, ages, employment, occupations, households, housing, transport,
     storage, price_levels) = role
    gender = rng.choices(("female", "male", "non-binary"), weights=(0.48, 0.48, 0.04))[0]
    while True:
        name = f"{rng.choice(FIRST_NAMES[gender])} {rng.choice(LAST_NAMES)}"
        if name not in used_names:
            used_names.add(name)
            break
    demo = {
        "age_group": rng.choice(ages.split(";")),
        "employment": rng.choice(employment.split(";")),
        "occupation": rng.choice(occupations.split(";")),
        "household": rng.choice(households.split(";")),
        "housing": rng.choice(housing.split(";")),
        "transport": rng.choice(transport.split(";")),
        "storage": rng.choice(storage.split(";")),
    }
    big_five = {k: round(rng.random(), 2) for k in
                ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")}
    style = rng.choice(BEHAVIOR_STYLES)
    explanation = ("high" if style in ("cautious", "skeptical") else rng.choice(_LEVELS))
    interaction = Interaction(
        behavior_style=style,
        patience=rng.randint(3, 5) if style in ("decisive", "skeptical") else rng.randint(4, 8),
        price_sensitivity=rng.choice(price_levels.split(";")),
        explanation_seeking=explanation,
        substitute_willingness=("high" if style == "exploratory" else rng.choice(_LEVELS)),
        navigation_following=round(rng.uniform(0.6, 0.95), 2),
        talkativeness=("high" if style == "chatty" else rng.choice(_LEVELS)),
    )
    return Profile(id=pid, name=name, persona=f"{role_name}: {persona}", gender=gender,
                   demographics=demo, big_five=big_five, interaction=interaction)


def _location(p: Product) -> str:
    return p.fixture_id or p.area_id or ""


def _candidate_tags(target: Product, peers: list[Product], keys: tuple[str, ...]) -> list[str]:
    """The target's preference labels that tell it apart from some of its category peers."""
    return [t for t in target.tags if t.partition(":")[0] in keys
            and not all(t in p.tags for p in peers)]


_AVOID_KEYS = AVOIDABLE_KEYS  # never sizes, features or care labels: people don't "avoid 12 oz"


def _choose_tags(rng, target: Product, products: list[Product], keys, tier: str):
    """Search required/avoided tags giving a reference set of 2-6 (else the best seen)."""
    peers = [p for p in products if p.category == target.category]
    cand = _candidate_tags(target, peers, keys) or [
        t for t in target.tags if t.partition(":")[0] in keys]
    lacking = sorted({t for p in peers for t in p.tags if t not in target.tags
                      and t.partition(":")[0] in _AVOID_KEYS})
    best, best_score = None, None
    for _ in range(40):
        k_req = min(len(cand), rng.choices((1, 2, 3), weights=(0.45, 0.4, 0.15))[0])
        if k_req == 0:
            break
        required = sorted(rng.sample(cand, k_req))
        k_av = min(len(lacking), rng.choices((0, 1, 2), weights=(0.4, 0.4, 0.2))[0])
        avoided = sorted(rng.sample(lacking, k_av))
        eligible = eligible_products(products, target.category, required, avoided)
        budget = compute_budget(target.price, [p.price for p in eligible], tier)
        refs = reference_set(products, target.category, required, avoided, budget)
        n = len(refs)
        score = (2 <= n <= 6, -abs(n - 3), len(required) + len(avoided))
        if best_score is None or score > best_score:
            best, best_score = (required, avoided, budget, refs), score
        if 2 <= n <= 4:
            break
    return best


def _disclosure(rng, spec, category: str, theme: str, use: str, budget: float, required, avoided):
    cat_item = DisclosureItem(kind="category", text=f"I'm looking for {spec.article(category)} {category}.",
                              value=category)
    use_item = DisclosureItem(kind="use", text=use, value=theme)
    opening = rng.choice(([cat_item], [use_item], [cat_item, use_item], [use_item, cat_item]))
    rest = [DisclosureItem(kind="budget", text=f"I can spend ${budget:,.0f} at most.", value=budget)]
    rest += [DisclosureItem(kind="avoid", text=rng.choice(avoid_phrasings(t)), value=t) for t in avoided]
    rest += [DisclosureItem(kind="need", text=rng.choice(need_phrasings(t)), value=t) for t in required]
    rng.shuffle(rest)
    return opening + rest


def _request(spec, category: str, use: str, budget: float, required, avoided) -> str:
    need = ", ".join(tag_phrase(t) for t in required)
    text = f"{use} I want {spec.article(category)} {category}: {need}."
    if avoided:
        text += " I want to avoid anything " + " or ".join(tag_phrase(t) for t in avoided) + "."
    return text + f" I'd like to spend at most ${budget:,.2f}."


def _acceptance(rng, prof: Profile) -> AcceptancePolicy:
    it = prof.interaction
    return AcceptancePolicy(
        inspect_before_buying=it.behavior_style in ("cautious", "skeptical") or rng.random() < 0.4,
        explanations_needed={"low": 0, "medium": 1, "high": 2}[it.explanation_seeking],
        accept_substitutes={"low": False, "high": True}.get(it.substitute_willingness, rng.random() < 0.5),
        rejection_style=("compare" if it.behavior_style == "skeptical"
                         else rng.choice(("reason", "clarify", "compare"))),
    )


def assign_subsets(tasks_by_profile: list[list[Task]]) -> list[Task]:
    """Profile-stratified subsets (see the module docstring); returns tasks in bank order."""
    rng = random.Random(SUBSET_SEED)
    out = []
    for tasks in tasks_by_profile:
        order = list(range(len(tasks)))
        rng.shuffle(order)
        subset_of = {order[i]: i for i in range(len(order))}
        out += [t.model_copy(update={"subset": subset_of[j]}) for j, t in enumerate(tasks)]
    return out


def build_tasks(scene: Scene, rng: random.Random) -> TaskBank:
    spec = store_spec(scene.store)
    roles, themes_of_role, theme_use = people_of(spec)
    keys = spec.preference_keys  # label keys that can be a preference (sizes, allergens are not)
    prefix = spec.id_prefix
    products = list(scene.products)
    by_category: dict[str, list[Product]] = {}
    for p in products:
        by_category.setdefault(p.category, []).append(p)
    used_targets: set[str] = set()
    used_names: set[str] = set()
    profiles, grouped = [], []
    for ri, role in enumerate(roles):
        pid = f"{prefix}_u{ri + 1:02d}"
        prof = _profile(rng, pid, role, used_names)
        profiles.append(prof)
        themes = role[2].split(",")
        cats_used, locs_used, tasks = set(), set(), []
        for k in range(TASKS_PER_PROFILE):
            theme = themes[k % len(themes)]
            # This theme's categories first; when they offer no new category at a new location,
            # the role's other themes (the task then carries the theme its category came from).
            pool = []
            for scope in ([theme], [theme, *themes]):
                theme_of = {}
                for t in scope:
                    for c in themes_of_role[t]:
                        if c in by_category and c not in cats_used:
                            theme_of.setdefault(c, t)
                options = [p for c in sorted(theme_of) for p in by_category[c]]
                fresh = [p for p in options if _location(p) not in locs_used and p.id not in used_targets]
                spare = [p for p in options if _location(p) not in locs_used]
                pool = fresh or spare
                if pool:
                    break
            pool = pool or options
            tier = rng.choices(("strict", "moderate", "flexible"),
                               weights=_TIER_WEIGHTS[prof.interaction.price_sensitivity])[0]
            best = None
            for target in rng.sample(pool, min(len(pool), 8)):
                choice = _choose_tags(rng, target, products, keys, tier)
                if choice is None:  # the target has no preference labels at all
                    continue
                required, avoided, budget, refs = choice
                if best is None or (2 <= len(refs) <= 6 and not 2 <= len(best[4]) <= 6):
                    best = (target, required, avoided, budget, refs)
                if 2 <= len(refs) <= 6:
                    break
            target, required, avoided, budget, refs = best
            cats_used.add(target.category)
            locs_used.add(_location(target))
            used_targets.add(target.id)
            tasks.append(Task(
                id=f"{pid}_t{k + 1}", store=scene.store, profile_id=pid, theme=theme_of[target.category],
                request=_request(spec, target.category, theme_use[theme], budget, required, avoided),
                category=target.category, required_tags=required, avoided_tags=avoided,
                target_product_id=target.id,
                disclosure=_disclosure(rng, spec, target.category, theme, theme_use[theme], budget, required,
                                       avoided),
                acceptance=_acceptance(rng, prof), budget_tier=tier, budget=budget,
                reference_set=refs, subset=0))
        grouped.append(tasks)
    return TaskBank(store=scene.store, profiles=profiles, tasks=assign_subsets(grouped))
