"""Report tables in the paper's layouts (Table 3, Table 8, dialogue ratings, Fig. 10's
suggested actions within Navigate responses, Fig. 11's termination reasons) for the console
and ``runs/NAME/report.md``, plus ``metrics.json`` with every figure.

``python -m eval.report RUN [RUN ...] --out DIR`` writes one report.md, metrics.json and the
figures over several runs (their cohorts side by side), re-scored from the runs' trajectory
files like ``python -m eval.metrics``.

Text that comes from a run (env ids, agent names, termination reasons, error causes,
reward names, the title) goes through :func:`md_text`, so that rendering the report to
HTML, even by a renderer that passes raw HTML through, can make no element out of it:
``&``, ``<``, ``>`` become entities; a backslash, a backtick, ``*``, ``~``, ``[``, ``]``,
``|`` and a ``_`` that is not inside a word get a backslash (no emphasis, code span, link,
image or cell boundary); line breaks become spaces (one table row stays one line), NUL and lone
surrogates U+FFFD. In a terminal the text reads as it was, bar those backslashes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from eval.aggregate import TABLE3, TABLE8, by_environment, termination_reasons
from eval.judge import DIMENSIONS
from situ_gym import cli

__all__ = ["GLOSSARY", "fmt_stat", "md_text", "format_markdown", "format_console", "write_report",
           "write_metrics_json", "navigate_cell", "navigate_section", "combine_runs", "main"]

# How a Table 8 column is printed (the paper gives RPR without SD; counts with two decimals).
_TABLE8_FORMAT = {"RPR": {"sd": False}, "RPR|Cart": {"sd": False}, "Rec": {"digits": 2}, "Tools": {"digits": 2}}
_UNITS = {"SR": "SR (%)", "Turn": "Turn", "AFR": "AFR (%)", "LNSR": "LNSR (%)", "R@5": "R@5 (%)",
          "NDCG@10": "NDCG@10 (%)", "RPR": "RPR (%)", "RPR|Cart": "RPR|Cart (%)",
          "R-MRR@10": "R-MRR@10 (%)", "Catalog %": "Catalog (%)",
          "Rec": "Rec/ep", "Tools": "Tools/ep"}
_SHORT = {"Informativeness": "Inform.", "Naturalness": "Natur.", "Groundedness": "Ground.",
          "Preference Alignment": "Prefer.", "Proactiveness": "Proact.", "Non-repetition": "Nonrep.",
          "Overall": "Overall"}


def fmt_stat(stat: dict[str, Any] | None, digits: int = 1, sd: bool = True) -> str:
    """"mean±SD" from a subset statistic (the cohort mean when subsets give no mean); "-"
    when nothing was eligible."""
    if not stat:
        return "-"
    mean = stat.get("mean")
    if mean is None:
        mean = stat.get("cohort")
    if mean is None:
        return "-"
    text = f"{mean:.{digits}f}"
    if sd and stat.get("sd") is not None:
        text += f"±{stat['sd']:.{digits}f}"
    return text


# What each abbreviation means (SituRecBench App. C.1), printed under the tables.
GLOSSARY = (
    ("SR", "success rate: episodes that end with an item added to the cart"),
    ("Turn", "assistant turns per episode"),
    ("SR(t)", "share of episodes that succeeded by turn t"),
    ("AFR", "action following rate: the shopper's action type matches the assistant's expected user action"),
    ("LNSR", "local navigation alignment: the action type and its local parameters (direction or "
             "destination) both match"),
    ("R@5", "recall at 5: a purchased item is among the first 5 entries of the saved ranking"),
    ("NDCG@10", "normalised discounted cumulative gain of the purchased item in the saved top-10 ranking"),
    ("RPR", "reference purchase rate: the purchased item is in the task's reference set (items that meet "
            "its requirements and budget)"),
    ("RPR|Cart", "RPR among episodes with a purchase"),
    ("R-MRR@10", "reciprocal rank of the first reference item in each saved top-10 list, averaged per "
                 "episode, then over episodes"),
    ("Catalog %", "ranking entries that are real catalog product ids"),
    ("Rec", "recommendation attempts per episode: products put forward for the first time, in any "
            "wording, or a Recommend annotation (situ_gym.language.attempts; the env stops at 3)"),
    ("Tools", "catalog and map tool calls per episode (search_catalog, get_product, locate; 0 unless "
              "catalog_view is \"tools\")"),
    ("CGV / ΔCGV h", "cumulative goal visibility: share of the assistant's navigation goals seen in "
                     "the current or the next h views; ΔCGV is the gain over h = 0, in percentage points"),
    ("share (same)", "Fig. 10: share of the Navigate turns that suggest this user action, and the share of "
                     "those where the shopper's executed action has the same name (same-action rate)"),
    ("pass^k", "share of tasks solved in all k repeats"),
    ("mean ± SD", "mean of the four profile-stratified subset means ± their sample SD"),
)


_LINE_BREAKS = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")  # what str.splitlines() splits on
_UNSAFE = re.compile("[\ud800-\udfff\x00]")
_MD_MARKUP = re.compile(r"[&<>\\`*~\[\]|_]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: object) -> str:
    """``text`` as literal inline Markdown on one line (see the module docstring).

    >>> md_text("a|b <i>x</i> [l](javascript:1) success_cart_added _x_")
    'a\\\\|b &lt;i&gt;x&lt;/i&gt; \\\\[l\\\\](javascript:1) success_cart_added \\\\_x\\\\_'
    """
    text = _LINE_BREAKS.sub(" ", _UNSAFE.sub("\ufffd", str(text)))

    def one(m: re.Match) -> str:
        ch, i = m.group(), m.start()
        if ch in _ENTITIES:
            return _ENTITIES[ch]
        if ch == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            return ch  # inside a word: never emphasis (CommonMark), and names stay readable
        return "\\" + ch

    return _MD_MARKUP.sub(one, text)


def _cell(text: str) -> str:
    """A table cell: literal text on one line; a '|' would end the cell in Markdown and in a terminal."""
    return md_text(text)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(map(_cell, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(_cell, r)) + " |" for r in rows]
    return lines


def format_markdown(groups: dict[str, dict[str, Any]], title: str = "SituRec evaluation") -> str:
    """The full report as Markdown (one row per env/agent cohort in each table)."""
    out = [f"# {md_text(title)}", ""]
    errors = sum(s.get("errors", 0) for s in groups.values())
    if errors:
        causes: dict[str, int] = {}
        for s in groups.values():
            for cause, n in (s.get("error_causes") or {}).items():
                causes[cause] = causes.get(cause, 0) + n
        why = ", ".join(f"{md_text(c)}: {n}" for c, n in sorted(causes.items())) or "causes not recorded"
        out += [f"**{errors} of {sum(s['episodes'] for s in groups.values())} episodes ended in error** ({why}); "
                "they count as failures in every figure below. Tracebacks are in trajectories.jsonl; `--resume` "
                "reruns crashed episodes and those a dead endpoint cut short, `--resume --retry-errors` also "
                "those a model role's own fault ended (context length, content filter).", ""]
    any_s = next(iter(groups.values()), {})
    protocols = sorted({p for s in groups.values() for p in s.get("protocols", ["default"])})
    out += [f"Protocol: {', '.join(protocols)} (docs/protocol.md lists where the default departs from the papers; "
            "cohorts played under the paper's protocol are marked [paper]).", ""]
    out.append(
        f"Values are the mean of the profile-stratified subset means ± their sample SD "
        f"(subsets present: {any_s.get('subsets', [])}); cohort means are in metrics.json."
    )
    out.append("")
    # Table 3
    k = max((s.get("repeats", 1) for s in groups.values()), default=1)
    header = ["Environment", "Agent", "N", *(_UNITS[m] for m in TABLE3), f"pass^{k} (%)"]
    rows = []
    for key, s in groups.items():
        env, agent = key.split(" / ", 1)
        pk = s.get("pass_hat_k", {}).get(str(k))
        rows.append([env, agent, str(s["episodes"]), *(fmt_stat(s["metrics"][m]) for m in TABLE3),
                     "-" if pk is None else f"{pk:.1f}"])
    out += ["## Outcome, navigation, recommendation (Table 3 layout)", "", *_table(header, rows), ""]
    # Table 8
    header = ["Environment", "Agent", *(_UNITS[m] for m in TABLE8)]
    rows = []
    for key, s in groups.items():
        env, agent = key.split(" / ", 1)
        rows.append([env, agent, *(fmt_stat(s["metrics"].get(name), **_TABLE8_FORMAT.get(name, {}))
                                   for name in TABLE8)])
    out += ["## Purchase quality (Table 8 layout; RPR and RPR\\|Cart without SD)", "", *_table(header, rows), ""]
    # Dialogue
    if any("dialogue" in s for s in groups.values()):
        header = ["Environment", "Agent", "Judge", *(_SHORT[d] for d in DIMENSIONS)]
        rows = []
        for key, s in groups.items():
            env, agent = key.split(" / ", 1)
            d = s.get("dialogue") or {"judge": "-", "ratings": {}}
            rows.append([env, agent, f"judge: {d['judge']}",
                         *(fmt_stat(d["ratings"].get(dim)) for dim in DIMENSIONS)])
        out += ["## Dialogue quality (1-5)", "", *_table(header, rows), ""]
    # CGV
    header = ["Environment", "Agent", "events", *(f"ΔCGV {h}" for h in ("1", "2", "3", "4", "5", "End")), "CGV 0"]
    rows = []
    for key, s in groups.items():
        env, agent = key.split(" / ", 1)
        c = s["cgv"]
        cells = ["-" if c.get(f"delta_{h}") is None else f"{c[f'delta_{h}']:.1f}"
                 for h in ("1", "2", "3", "4", "5", "End")]
        rows.append([env, agent, str(int(c["events"])), *cells, "-" if c["0"] is None else f"{c['0']:.1f}"])
    out += ["## Cumulative goal visibility (pp over CGV 0, pooled events)", "", *_table(header, rows), ""]
    # Terminations (Fig. 11) and pass^k
    reasons = termination_reasons(groups)
    header = ["Environment", "Agent", *reasons]
    rows = [[*key.split(" / ", 1), *(_count_share(s["termination"].get(r, 0), s["episodes"]) for r in reasons)]
            for key, s in groups.items()]
    out += ["## Termination reasons (episodes, % of the cohort's; Fig. 11)", "", *_table(header, rows), ""]
    for key, s in groups.items():
        pk = s.get("pass_hat_k", {})
        if pk:
            out.append(f"- pass^k {md_text(key)}: " + ", ".join(f"k={kk}: {v:.1f}%" for kk, v in pk.items()))
    out.append("")
    # Action shares
    from situ_gym.actions.assistant import ACTION_TYPES

    header = ["Environment", "Agent", *ACTION_TYPES, "unrecognised turns"]
    rows = [[*key.split(" / ", 1), *(f"{s['action_shares']['shares'][a]:.1f}" for a in ACTION_TYPES),
             str(s["action_shares"]["unrecognised"])] for key, s in groups.items()]
    out += ["## Dialogue action shares (% of turns)", "", *_table(header, rows), ""]
    out += navigate_section(groups)
    # Rewards
    if any(s.get("reward") for s in groups.values()):
        out += ["## Reward components (per turn)", ""]
        for key, s in groups.items():
            r = s.get("reward") or {}
            if not r:
                continue
            total = r["mean"].get("recrm/total")
            out.append(f"### {md_text(key)}")
            if total is not None:
                out.append(f"- mean R_total: {total:.4f}")
            for g, v in r["gate_pass_rate"].items():
                out.append(f"- gate pass rate {md_text(g)}: {v:.1f}%")
            for name, v in r["mean"].items():
                out.append(f"- mean {md_text(name)}: {v:.4f} ({r['turns'][name]} turns)")
            out.append("")
    out += ["## Glossary", "", *(f"- **{_cell(k)}**: {v}" for k, v in GLOSSARY), ""]
    return "\n".join(out)


def _count_share(n: int, total: int) -> str:
    return f"{n} ({100.0 * n / total:.1f}%)" if total else str(n)


def navigate_cell(nav: dict[str, Any], action: str) -> str:
    """"share (same)" in percent for one suggested action, "-" when it was never suggested.

    >>> navigate_cell({"counts": {"turn": 3}, "shares": {"turn": 75.0}, "same_rate": {"turn": 100 / 3}}, "turn")
    '75.0 (33.3)'
    """
    if not nav.get("counts", {}).get(action):
        return "-"
    return f"{nav['shares'][action]:.1f} ({nav['same_rate'][action]:.1f})"


def navigate_section(groups: dict[str, dict[str, Any]]) -> list[str]:
    """Fig. 10 as tables, one per environment (its legal tools differ): rows agents, columns
    the suggested user actions, cells "share% (same-action %)"."""
    out = ["## Suggested actions within Navigate responses (Fig. 10 layout)", "",
           "Per cohort, over Navigate turns whose expected user action is a legal tool (events): the share of each "
           "suggested action, and in brackets the same-action rate, the share of those turns where the shopper's "
           "executed tool had the same name; a dash: never suggested.", ""]
    for env, cohorts in by_environment(groups).items():
        navs = [(agent, s.get("navigate_actions") or {}) for agent, s in cohorts]
        actions = list(dict.fromkeys(a for _, nav in navs for a in nav.get("actions", [])))
        header = ["Agent", "events", "no suggestion", *actions]
        rows = [[agent, str(nav.get("events", 0)), str(nav.get("without_suggestion", 0)),
                 *(navigate_cell(nav, a) for a in actions)] for agent, nav in navs]
        out += [f"### {md_text(env)}", "", *_table(header, rows), ""]
    return out


def format_console(groups: dict[str, dict[str, Any]]) -> str:
    """The same tables for a terminal (Markdown reads fine as plain text; a '|' inside a
    cell stays escaped so that columns line up)."""
    return format_markdown(groups)


def write_metrics_json(path: str | os.PathLike, groups: dict[str, dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
    payload = {"groups": groups, **(extra or {})}
    Path(path).write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")


def write_report(run_dir: str | os.PathLike, groups: dict[str, dict[str, Any]], title: str | None = None,
                 extra: dict[str, Any] | None = None) -> Path:
    """Write report.md and metrics.json into the run directory; returns report.md's path."""
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    report = run / "report.md"
    report.write_text(format_markdown(groups, title or f"SituRec evaluation: {run.name}") + "\n", encoding="utf-8")
    write_metrics_json(run / "metrics.json", groups, extra)
    return report


def _cohort(ep: Any) -> str:
    """The cohort key summarize_groups files an episode under."""
    return f"{ep.env_id} / {ep.agent}" + ("" if ep.protocol == "default" else f" [{ep.protocol}]")


def combine_runs(runs: list[str | os.PathLike]) -> list[Any]:
    """The episodes of several run directories (or trajectory files), in task order. The
    same episode of the same cohort in two runs is refused: pooled, it would count twice."""
    from eval.io import read_episodes, register_run_store, task_order

    episodes: list[Any] = []
    where: dict[tuple[str, str], str] = {}
    for run in runs:
        path = Path(run)
        trajectories = path / "trajectories.jsonl" if path.is_dir() else path
        register_run_store(trajectories)
        for ep in read_episodes(trajectories):
            key = (_cohort(ep), ep.episode_id)
            if key in where:
                raise ValueError(f"{where[key]} and {run} both hold episode {ep.episode_id} of {key[0]}")
            where[key] = str(run)
            episodes.append(ep)
    return task_order(episodes)


def main(argv: list[str] | None = None) -> int:
    """``python -m eval.report RUN [RUN ...] --out DIR``: one report over several runs
    (report.md, metrics.json and the figures, every cohort of every run together), re-scored
    from their trajectory files."""
    import argparse
    from typing import NoReturn

    from eval.aggregate import judge_label, load_indexes, load_tasks, summarize_groups
    from eval.judge import judge_from_cli
    from eval.plots import write_plots

    parser = argparse.ArgumentParser(prog="python -m eval.report",
                                     description="One report (tables and figures) over several runs.")
    parser.add_argument("runs", nargs="+", help="run directories (or their trajectories.jsonl)")
    parser.add_argument("--out", required=True, help="directory for report.md, metrics.json and the PNGs")
    parser.add_argument("--judge", default="rule", help="dialogue judge: rule | llm | none (default: rule)")
    parser.add_argument("--judge-model", default=None, help="chat model SPEC for --judge llm (hf:... | openai:NAME)")
    parser.add_argument("--judge-base-url", default=None, help="OpenAI-compatible URL for the judge model")
    parser.add_argument("--title", default=None, help="report title (default: the runs' names)")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.verbose)

    def fail(message: str) -> NoReturn:  # one line, exit 2 (usage is for --help)
        cli.fail(parser, message)
    try:
        episodes = combine_runs(args.runs)
        # Each episode is rated under the protocol it was played under; checked before any rating.
        judges = {p: judge_from_cli(args.judge, model=args.judge_model, base_url=args.judge_base_url, protocol=p)
                  for p in sorted({ep.protocol for ep in episodes})}
    except (ValueError, OSError) as exc:  # missing or garbage file, a run given twice, a bad judge
        fail(str(exc).splitlines()[0])
    if not episodes:
        fail("no episodes in " + ", ".join(map(repr, args.runs)))
    stores = {ep.store for ep in episodes}
    indexes = load_indexes(stores)
    ratings = None
    if args.judge != "none":
        tasks = load_tasks(stores)
        ratings = [None] * len(episodes)
        for protocol, judge in judges.items():  # one batch per protocol
            mine = [i for i, ep in enumerate(episodes) if ep.protocol == protocol]
            rated = judge.rate_batch([(episodes[i], tasks.get(episodes[i].task_id), indexes.get(episodes[i].store))
                                      for i in mine])
            for i, rating in zip(mine, rated, strict=True):
                ratings[i] = rating
    groups = summarize_groups(episodes, indexes=indexes, ratings=ratings)
    title = args.title or "SituRec evaluation: " + ", ".join(Path(r).name for r in args.runs)
    report = write_report(args.out, groups, title=title,
                          extra={"judge": None if ratings is None else judge_label(ratings),
                                 "runs": [str(r) for r in args.runs]})
    write_plots(args.out, groups)
    print(format_console(groups))
    print(f"written: {report} and metrics.json, figures beside them")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
