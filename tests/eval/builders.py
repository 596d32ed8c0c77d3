"""Builders for hand-made trajectory records and tiny scenes used by the eval tests."""

from __future__ import annotations

import json

from situ_gym.records import EpisodeRecord, ExecutionResult, ToolCall, TurnRecord
from situ_gym.scene.model import (
    Area,
    Fixture,
    Layout,
    Pose2,
    Product,
    Scene,
    Store,
    Waypoint,
)


def call(name, target_id=None, **arguments):
    return ToolCall(name=name, arguments=arguments, target_id=target_id)


def turn(n, *, ranking=None, raw=None, expected=None, actual=None, action_type="Navigate", **kw):
    """A TurnRecord; ``ranking=None`` means the output had no ranking key at all."""
    if raw is None:
        obj = {"response": f"turn {n}"}
        if ranking is not None:
            obj["ranking"] = ranking
        raw = json.dumps(obj)
    return TurnRecord(
        turn=n,
        assistant_raw=raw,
        assistant_valid=True,
        response=kw.pop("response", f"turn {n}"),
        action_type=action_type,
        ranking=ranking or [],
        expected_user_action=expected,
        user_action=actual,
        result=ExecutionResult(ok=True, message="ok"),
        **kw,
    )


def episode(turns=(), *, cart=(), store="supermarket", subset=0, task_id="t1", repeat=0,
            reference_set=(), termination=None, agent="test", env_id=None):
    if termination is None:
        termination = "success_cart_added" if cart else "turn_limit"
    return EpisodeRecord(
        episode_id=f"{task_id}#r{repeat}",
        env_id=env_id or ("SituRec-Supermarket-v0" if store == "supermarket" else "SituRec-HomeFurnishings-v0"),
        store=store,
        task_id=task_id,
        profile_id="p1",
        subset=subset,
        seed=repeat,
        agent=agent,
        user="rule",
        target_id="a",
        reference_set=list(reference_set),
        budget=20.0,
        turns=list(turns),
        cart=list(cart),
        termination=termination,
    )


def _product(pid, name, price, **loc):
    return Product(id=pid, name=name, brand="B", category="lamp", group="lighting", price=price,
                   attributes={}, tags=["style:modern"], color=(10, ord(pid[-1]), 20),
                   instances=[], **loc)


def home_scene() -> Scene:
    """Two stores; store st1 has areas ar1, ar2; products p1 in ar1, p2 in ar2, p3 in st2."""
    pose = Pose2(x=0.0, y=0.0)
    stores = [
        Store(id=sid, name=f"Store {sid}", theme="t", footprint=(0, 0, 5, 5), wall_height=3.0,
              color=(200, i, 0), doorway=(0, 0, 1, 0.1),
              approach={"outside_doorway": pose, "inside_doorway": pose},
              area_ids=areas, product_ids=[])
        for i, (sid, areas) in enumerate([("st1", ["ar1", "ar2"]), ("st2", [])])
    ]
    areas = [
        Area(id=aid, store_id="st1", name=f"Area {aid}", footprint=(0, 0, 2, 2), color=(150, i, 0),
             approach=pose, product_ids=[])
        for i, aid in enumerate(["ar1", "ar2"])
    ]
    products = [
        _product("p1", "Oak Lamp", 49.0, store_id="st1", area_id="ar1"),
        _product("p2", "Brass Lamp", 89.5, store_id="st1", area_id="ar2"),
        _product("p3", "Paper Lamp", 15.0, store_id="st2"),
    ]
    return Scene(store="home_furnishings", name="tiny home",
                 layout=Layout(bounds=(0, 0, 20, 20), walls=[], start=pose),
                 products=products, stores=stores, areas=areas,
                 waypoints=[Waypoint(id="w1", x=1, y=1, neighbors=[])])


def market_scene() -> Scene:
    pose = Pose2(x=0.0, y=0.0)
    fixtures = [
        Fixture(id=fid, name=f"Shelf {fid}", kind="shelf", footprint=(0, 0, 1, 1), height=2.0,
                levels=[0.5], color=(100, i, 0), front_yaw=0.0, approach={"front": pose},
                product_ids=[])
        for i, fid in enumerate(["fx1", "fx2", "fx3"])
    ]
    products = [_product("a", "Cod Fillets", 9.99, fixture_id="fx1"),
                _product("b", "Salmon", 12.5, fixture_id="fx2"),
                _product("c", "Tuna", 4.0, fixture_id="fx3")]
    return Scene(store="supermarket", name="tiny market",
                 layout=Layout(bounds=(0, 0, 20, 20), walls=[], start=pose),
                 products=products, fixtures=fixtures,
                 waypoints=[Waypoint(id="w1", x=1, y=1, neighbors=[])])
