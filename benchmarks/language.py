"""Cost of the language layer per utterance, and its accuracy on the labelled corpus.

    python benchmarks/language.py [--repeats 5]

Prints the median and p95 time of ``situ_gym.language.analyze`` per utterance, cold (every
text new: the analysis cache is cleared) and warm (cached), over the 542 corpus utterances
plus shopper sentences, and the accuracy tables (per label, act, and on the held-out corpus
per style). One process, one thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from situ_gym.language import (
    analysis,  # noqa: E402
    analyze,  # noqa: E402
)
from situ_gym.language.acts import read_act  # noqa: E402
from situ_gym.language.dialogue import read_reply  # noqa: E402
from tests.language.corpus import HELD_OUT, lexicons, load_corpus, load_held_out, score  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timing passes over the corpus (median taken)")
    args = parser.parse_args(argv)
    rows = load_corpus()
    lex = lexicons()
    for row in rows[:50]:  # warm the lemma and typo caches once, as a running env would
        analyze(row["text"], lex[row["store"]])
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(args.repeats):
        analysis._analyze.cache_clear()
        for row in rows:
            ctx = row.get("context") or {}
            kw = dict(visible=frozenset(ctx.get("visible") or ()), focus=ctx.get("focus"))
            t = time.perf_counter()
            analyze(row["text"], lex[row["store"]], **kw)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            analyze(row["text"], lex[row["store"]], **kw)
            warm.append(time.perf_counter() - t)
    q = statistics.quantiles(cold, n=20)
    print(f"utterances: {len(rows)} x {args.repeats}")
    print(f"analyze, new text : median {1e3 * statistics.median(cold):.3f} ms, p95 {1e3 * q[-1]:.3f} ms")
    print(f"analyze, cached   : median {1e6 * statistics.median(warm):.1f} us")
    long_text = "How about the Sunny Fields Honey Oat Clusters? " * 20_000
    t = time.perf_counter()
    analyze(long_text, lex["supermarket"])
    print(f"1 MB input (capped): {1e3 * (time.perf_counter() - t):.1f} ms")
    # the act of a reply is read by a model fitted on the development sets (situ_gym.language.acts):
    # its cost per reply, on the rules' reading
    replies = []
    for row in rows:
        heard = analyze((row.get("context") or {}).get("last_user") or "How much is it?", lex[row["store"]])
        replies.append((read_reply(row["text"], lex[row["store"]], heard=heard), heard))
    t = time.perf_counter()
    for said, heard in replies:
        read_act(said, heard)
    print(f"act reader, per reply: {1e6 * (time.perf_counter() - t) / len(replies):.1f} us")
    print("(the development sets' act figures below are in-sample for it; with each corpus left out:"
          " python -m tests.language.fit_acts --loco)")
    print("\nfirst corpus (tests/language/corpus):")
    print(score(rows).table())
    for name, how in HELD_OUT.items():
        print(f"\nheld-out corpus tests/language/{name} ({how}):")
        print(score(load_held_out(name)).table())


if __name__ == "__main__":
    main()
