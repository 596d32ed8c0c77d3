"""Train one RecRM reward model (any accelerate launcher works: the trainers are accelerate-native).

    python -m recrm.train relevance --data data/recrm --model gguf:smollm2 --out runs/rm/relevance
    python -m recrm.train ranking --data data/recrm --model PATH --out runs/rm/ranking --listwise_lambda 1.0
    accelerate launch -m recrm.train instruction --data data/recrm --model PATH --out runs/rm/inst --lora true

The first argument is the reward dimension; the options are the fields of
``recrm.train.RMTrainConfig``. ``-v`` / ``--verbose`` also logs the libraries' messages.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["main"]

PROG = "python -m recrm.train"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = any(a in ("-v", "--verbose") for a in argv)
    argv = [a for a in argv if a not in ("-v", "--verbose")]
    if not verbose:  # transformers' advice about missing optional packages
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import HfArgumentParser

    from recrm.train import TASKS, RMTrainConfig, train

    usage = f"{PROG} {{{','.join(TASKS)}}} --data DIR --model SPEC --out DIR [options] [-v]"
    parser = HfArgumentParser(RMTrainConfig, prog=PROG, usage=usage, description=__doc__.split("\n")[0],
                              epilog=f"reward dimensions: {', '.join(TASKS)}; -v, --verbose: log library messages")
    if not argv or argv[0] in ("-h", "--help"):
        if argv:
            parser.print_help()
            return 0
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: the first argument is the reward dimension: one of {', '.join(TASKS)}",
              file=sys.stderr)
        return 2
    if argv[0] not in TASKS:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: unknown reward dimension {argv[0]!r}; choose one of {', '.join(TASKS)}",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("recrm").setLevel(logging.INFO)  # the trainer's own progress
    try:
        (cfg,) = parser.parse_args_into_dataclasses(["--task", argv[0], *argv[1:]])
        out = train(cfg)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"saved {cfg.task} scorer to {out} (use it as model:{out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
