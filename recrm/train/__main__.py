"""Train one RecRM reward model (any accelerate launcher works: the trainers are accelerate-native).

    python -m recrm.train relevance --data data/recrm --model gguf:smollm2 --out runs/rm/relevance
    python -m recrm.train ranking --data data/recrm --model PATH --out runs/rm/ranking --listwise_lambda 1.0
    accelerate launch -m recrm.train instruction --data data/recrm --model PATH --out runs/rm/inst --lora true
"""

from __future__ import annotations

import logging
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from transformers import HfArgumentParser

    from recrm.train import TASKS, RMTrainConfig, train

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in TASKS:
        print(f"usage: python -m recrm.train {{{'|'.join(TASKS)}}} --data DIR --model SPEC --out DIR [options]",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    parser = HfArgumentParser(RMTrainConfig)
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
