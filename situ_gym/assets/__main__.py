"""Command line: ``python -m situ_gym.assets {generate,validate,stats}``.

    python -m situ_gym.assets generate [--seed 0] [--out DIR]   # write both paper stores' JSON
    python -m situ_gym.assets build FOLDER [--seed 0]            # a store folder's scene + tasks
    python -m situ_gym.assets validate [FOLDER ...] [--root DIR] # load + every cross check
    python -m situ_gym.assets stats [--root DIR]                 # SituRecBench Table 2
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from pathlib import Path

from situ_gym.assets import DEFAULT_SEED
from situ_gym.cli import fail

_ROWS = (("products", "# Products"), ("instances", "# Instances"), ("nav_targets", "# Nav. Targets"),
         ("waypoints", "# Waypoints"), ("profiles", "# User Profiles"), ("tasks", "# Tasks"))


def _load(root):
    from situ_gym.scene.loader import load_scene, load_task_bank
    from situ_gym.scene.model import STORE_KINDS

    return {s: (load_scene(s, root), load_task_bank(s, root)) for s in STORE_KINDS}


def cmd_generate(args) -> int:
    from situ_gym.assets.generate import generate

    for path in generate(seed=args.seed, out=args.out):
        print(f"wrote {path}")
    return 0


def cmd_build(args) -> int:
    from situ_gym.assets.generate import build_store
    from situ_gym.scene.validate import AssetError
    from situ_gym.stores import StoreError

    try:
        for path in build_store(args.folder, seed=args.seed):
            print(f"wrote {path}")
    except (StoreError, AssetError) as e:
        print(f"INVALID: {e}", file=sys.stderr)
        return 1
    return 0


def _validate_folders(folders: list[str]) -> int:
    from situ_gym.scene.loader import load_scene, load_task_bank
    from situ_gym.scene.validate import AssetError
    from situ_gym.stores import StoreError, store_spec

    for folder in folders:
        try:
            store = store_spec(folder).id
            scene, bank = load_scene(store), load_task_bank(store)
        except (StoreError, AssetError) as e:
            print(f"INVALID: {e}", file=sys.stderr)
            return 1
        print(f"{store} ({folder}): ok ({len(scene.products)} products, {len(bank.tasks)} tasks)")
    return 0


def cmd_validate(args) -> int:
    from situ_gym.scene.loader import data_file
    from situ_gym.scene.validate import AssetError, check_table2

    if args.folders:
        return _validate_folders(args.folders)
    try:
        data = _load(args.root)
        for scene, bank in data.values():
            # Table 2 counts come from both files: name both, so the message says where to look.
            files = f"{data_file(scene.store, 'scene.json', args.root)} + tasks.json"
            check_table2(scene, bank, files)
    except AssetError as e:
        print(f"INVALID: {e}", file=sys.stderr)
        return 1
    for store, (scene, bank) in data.items():
        print(f"{store}: ok ({len(scene.products)} products, {len(bank.tasks)} tasks)")
    return 0


def cmd_stats(args) -> int:
    from situ_gym.scene.validate import AssetError, scene_stats

    try:
        data = _load(args.root)
    except AssetError as e:
        print(f"INVALID: {e}", file=sys.stderr)
        return 1
    stats = {s: scene_stats(scene, bank) for s, (scene, bank) in data.items()}
    sm, hf = stats["supermarket"], stats["home_furnishings"]
    print(f"{'Environment':<16}{'Supermarket':>13}{'Home Furnishings':>18}{'Total':>8}")
    for key, label in _ROWS:
        print(f"{label:<16}{sm[key]:>13,}{hf[key]:>18,}{sm[key] + hf[key]:>8,}")
    sm_scene, sm_bank = data["supermarket"]
    hf_scene, hf_bank = data["home_furnishings"]
    kinds = Counter(f.kind for f in sm_scene.fixtures)
    print("\nSupermarket fixtures: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    print(f"Home Furnishings: {len(hf_scene.stores)} stores + {len(hf_scene.areas)} display areas")
    for store, (_, bank) in data.items():
        sizes = [len(t.reference_set) for t in bank.tasks]
        tiers = Counter(t.budget_tier for t in bank.tasks)
        print(f"{store}: reference-set size min {min(sizes)} / mean {sum(sizes) / len(sizes):.2f} / "
              f"max {max(sizes)}, {sum(n >= 2 for n in sizes)} tasks with >= 2; tiers {dict(sorted(tiers.items()))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m situ_gym.assets", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write scene.json and tasks.json of both stores")
    g.add_argument("--seed", type=int, default=DEFAULT_SEED)
    g.add_argument("--out", default=None, help="output root (default: the packaged data dir)")
    b = sub.add_parser("build", help="write a store folder's scene.json (from its builder) and tasks.json")
    b.add_argument("folder", help="a store folder (holding store.json)")
    b.add_argument("--seed", type=int, default=DEFAULT_SEED)
    for name, help_ in (("validate", "load and cross-check the paper stores, or the store folders given"),
                        ("stats", "print SituRecBench Table 2 from the files")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--root", default=None, help="data root (default: the packaged data)")
        if name == "validate":
            p.add_argument("folders", nargs="*", metavar="FOLDER", help="store folders to validate")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    root = getattr(args, "root", None)
    if root is not None and not Path(root).is_dir():
        fail(parser, f"--root {root!r} is not a directory (expected <root>/<store>/scene.json)")
    out = getattr(args, "out", None)
    if out is not None:
        parent = Path(out).absolute()
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            fail(parser, f"--out {out!r} cannot be created: {str(parent)!r} is not a directory")
    commands = {"generate": cmd_generate, "build": cmd_build, "validate": cmd_validate, "stats": cmd_stats}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
