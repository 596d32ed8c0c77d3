"""Benchmark of the actions layer: parse/validate throughput and robustness figures.

Run: ``python -m benchmarks.parse [--fuzz 10000] [--seed 1]`` (prints figures; asserts nothing timed).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from situ_gym import cli
from situ_gym.actions import parse_assistant_output, validate_user_call
from situ_gym.actions.tools import TOOLS
from tests.actions import conftest
from tests.actions import test_parse as tp


def _rate(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.parse", description=__doc__.split("\n")[0])
    parser.add_argument("--fuzz", type=int, default=10_000,
                        help="generated assistant outputs and user calls, each tried in both stores (default: 10000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated inputs (default: 1)")
    args = parser.parse_args(argv)
    if args.fuzz < 0:
        cli.fail(parser, f"--fuzz must be >= 0, got {args.fuzz}")
    market = conftest.build_market()
    home = conftest.build_home()
    mview = conftest.build_market_views(market)
    hview = conftest.build_home_views(home)

    valid = json.dumps(
        tp.turn(
            tp.MARKET_ACTIONS["Recommend"],
            {"name": "pick_up_item", "arguments": {"item": "a"}},
            ["sm_p001"],
        )
    )
    fenced = "Here you go:\n```json\n" + valid + "\n```"
    cases = {
        "valid JSON turn": valid,
        "fenced + prose": fenced,
        "plain prose (no JSON)": "Hello! What are you shopping for today? " * 5,
        "1 MB of '{'": "{" * 1_000_000,
        "1 MB unicode response": '{"response": "' + "ü" * 1_000_000 + '"}',
        "deep nesting 200k": "[" * 200_000,
    }
    print("parse_assistant_output, microseconds per call (supermarket):")
    for name, text in cases.items():
        n = 2000 if len(text) < 10_000 else 5
        us = _rate(
            lambda t=text: parse_assistant_output(
                t, store="supermarket", index=market, view=mview[0]
            ),
            n,
        )
        out = parse_assistant_output(text, store="supermarket", index=market, view=mview[0])
        print(f"  {name:<26} {us:>12.1f} us   valid={out.valid} errors={len(out.errors)}")

    rng = np.random.default_rng(args.seed)
    n = raised = valid_count = 0
    for i in range(args.fuzz):
        if i % 2:
            obj = {
                k: tp._random_value(rng)
                for k in ("response", "assistant_actions", "expected_user_action", "ranking")
            }
            text = json.dumps(obj)
        else:
            chars = list(valid)
            for _ in range(rng.integers(1, 6)):
                pos = int(rng.integers(len(chars)))
                chars.insert(pos, '{}[]",:\\ax7'[rng.integers(11)])
            text = "".join(chars)
        for store, index, view in (
            ("supermarket", market, mview[0]),
            ("home_furnishings", home, hview[0]),
        ):
            try:
                out = parse_assistant_output(text, store=store, index=index, view=view)
                valid_count += out.valid
            except Exception:  # noqa: BLE001 - counting is the point
                raised += 1
            n += 1
    print(f"fuzzed assistant outputs: {n}, raised: {raised}, still valid: {valid_count}")

    names = [*TOOLS, "fly"]
    n = raised = accepted = 0
    for _ in range(args.fuzz):
        call = {"name": names[rng.integers(len(names))], "arguments": tp._random_value(rng)}
        for store, view in (("supermarket", mview[1]), ("home_furnishings", hview[1])):
            try:
                prim, _ = validate_user_call(call, store=store, view=view, held_item="sm_p003")
                accepted += prim is not None
            except Exception:  # noqa: BLE001
                raised += 1
            n += 1
    print(f"fuzzed user calls: {n}, raised: {raised}, accepted: {accepted}")
    us = _rate(
        lambda: validate_user_call(
            {"name": "move_to_fixture", "arguments": {"fixture": "A", "approach": "front"}},
            store="supermarket",
            view=mview[1],
            held_item=None,
            index=market,
        ),
        5000,
    )
    print(f"validate_user_call (valid move_to_fixture): {us:.1f} us per call")


if __name__ == "__main__":
    main()
