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
from tests.language.corpus import (  # noqa: E402
    lexicons,
    load_corpus,
    load_heldout,
    load_heldout2,
    load_heldout3,
    load_heldout4,
    load_heldout5,
    load_heldout6,
    load_heldout7,
    load_heldout8,
    load_heldout9,
    load_heldout10,
    score,
)


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
    corpora = [
        ("first corpus (tests/language/corpus)", lambda: rows),
        ("held-out corpus (tests/language/heldout: chat, clipped, non-native, mixed; written apart, since tuned on)",
         load_heldout),
        ("third corpus (tests/language/heldout2: the four styles and spoken; written apart, since tuned on)", load_heldout2),
        ("fourth corpus (tests/language/heldout3: the five styles; written apart, since tuned on)", load_heldout3),
        ("fifth corpus (tests/language/heldout4: the five styles; written apart, its totals guided tuning)", load_heldout4),
        ("sixth corpus (tests/language/heldout5: the five styles; written apart, its totals guided tuning, since tuned on)",
         load_heldout5),
        ("seventh corpus (tests/language/heldout6: the five styles; written apart, its totals guided tuning, since tuned on)",
         load_heldout6),
        ("eighth corpus (tests/language/heldout7: the five styles; written apart, since tuned on)", load_heldout7),
        ("ninth corpus (tests/language/heldout8: the five styles; written apart, since tuned on)", load_heldout8),
        ("tenth corpus (tests/language/heldout9: the five styles; written apart, since tuned on)", load_heldout9),
        ("eleventh corpus (tests/language/heldout10: the five styles; written apart, never tuned on)", load_heldout10),
    ]
    for title, load in corpora:
        print(f"\n{title}:")
        print(score(load()).table())

if __name__ == "__main__":
    main()
