"""Token, latency, cache and fallback accounting per role; one JSON line per backend call."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from situ_gym import jsonl
from situ_gym.llm.types import ChatRequest, ChatResult

__all__ = ["UsageMeter", "METER", "summarize_usage", "read_usage", "format_usage"]

logger = logging.getLogger(__name__)

# Summed per role. ``calls`` counts backend requests (re-asks included); ``decisions`` counts
# what the role had to decide (one shopper turn, one moderator verdict, one rating), of
# which ``used`` came from the model's reply (first answer or re-ask) and ``fallbacks``
# from the role's safe default; ``errors`` are requests that ended their episode.
_FIELDS = ("calls", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "seconds", "cache_hits",
           "cache_misses", "retries", "errors", "decisions", "used", "fallbacks", "reasks")


class UsageMeter:
    """Running totals per role; with ``log_path`` set, each record is also appended there
    (one small ``O_APPEND`` write per line, so worker processes can share the file).

    A request's line also carries its ``latency`` and, when the request continues a
    ``conversation`` seen before, ``prefix_share``: the share of its prompt (characters of
    the serialised messages) that repeats the previous request's prompt as a prefix, which
    is what a server's prefix cache can reuse.
    """

    def __init__(self, log_path: str | os.PathLike | None = None):
        self.log_path = Path(log_path) if log_path else None
        self.totals: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()
        self._last_prompt: dict[str, str] = {}  # conversation -> its latest prompt text

    @contextmanager
    def logging_to(self, path: str | os.PathLike | None) -> Iterator[UsageMeter]:
        """Append the block's records to ``path`` (None: to no file), then log where it did
        before. A run points the process's meter at its own file for its duration only, so a
        later run, judge or report in the same process never writes into it (nor fails on a
        run directory since removed)."""
        previous, self.log_path = self.log_path, Path(path) if path else None
        try:
            yield self
        finally:
            self.log_path = previous

    def record(self, model: str, requests: Iterable[ChatRequest], results: Iterable[ChatResult]) -> None:
        for req, res in zip(requests, results, strict=True):
            line: dict[str, float] = {"latency": round(res.latency or res.seconds, 4)}
            if req.conversation is not None:
                prompt = prompt_text(req)
                with self._lock:
                    previous = self._last_prompt.get(req.conversation)
                    self._last_prompt[req.conversation] = prompt
                if previous is not None and prompt:
                    line["prefix_share"] = round(len(os.path.commonprefix([previous, prompt])) / len(prompt), 4)
            self.add(
                req.role,
                model=model,
                extra=line,
                calls=1,
                prompt_tokens=res.prompt_tokens,
                cached_prompt_tokens=res.cached_prompt_tokens,
                completion_tokens=res.completion_tokens,
                seconds=res.seconds,
                cache_hits=int(res.cached),
                cache_misses=int(not res.cached),
                retries=res.retries,
                errors=int(res.error is not None),
            )

    def add(self, role: str, model: str = "", extra: dict[str, float] | None = None, **counts: float) -> None:
        unknown = set(counts) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown usage fields {sorted(unknown)}; valid: {_FIELDS}")
        with self._lock:
            row = self.totals.setdefault(role, dict.fromkeys(_FIELDS, 0))
            for k, v in counts.items():
                row[k] += v
            if self.log_path is not None:
                line = json.dumps({"role": role, "model": model, **counts, **(extra or {})}, sort_keys=True) + "\n"
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)


def prompt_text(request: ChatRequest) -> str:
    """The request's messages as one string (images as content hashes), in order."""
    parts = []
    for m in request.key_payload("")["messages"]:
        content = m["content"]
        if isinstance(content, list):
            content = "".join(p.get("text", "") if p.get("type") != "image" else f"<image {p.get('sha256')}>"
                              for p in content)
        parts.append(f"<{m['role']}>{content}")
    return "".join(parts)


# The process's meter: backends and LLM roles record here; runners point log_path at the run.
METER = UsageMeter()


def read_usage(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The records of a usage log (missing file: none; a torn last line is skipped)."""
    p = Path(path)
    if not p.exists():
        return []
    rows = []
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            row = jsonl.loads(line)
        except json.JSONDecodeError:
            logger.warning("%s: skipped an unreadable usage line", p)
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return round(float(np.percentile(values, q)), 3)


def summarize_usage(rows: Iterable[dict[str, Any]],
                    prices: tuple[float, float, float] | None = None) -> dict[str, dict[str, Any]]:
    """Per role: the summed fields, the models, request latency p50/p95 (requests the model
    answered, not cache hits), the mean ``prefix_share``, ``fallback_rate`` (fallbacks over
    decisions), tokens/s, seconds per call, and with ``prices`` (dollars per million input,
    cached input and output tokens) the estimated ``cost`` of the requests sent (cache hits
    cost nothing)."""
    out: dict[str, dict[str, Any]] = {}
    latencies: dict[str, list[float]] = {}
    shares: dict[str, list[float]] = {}
    billed: dict[str, list[float]] = {}
    for row in rows:
        role = str(row.get("role", "?"))
        agg = out.setdefault(role, dict.fromkeys(_FIELDS, 0) | {"models": []})
        for k in _FIELDS:
            value = row.get(k, 0)
            agg[k] += value if isinstance(value, (int, float)) and math.isfinite(value) else 0
        if row.get("model") and row["model"] not in agg["models"]:
            agg["models"].append(row["model"])
        sent = row.get("calls") and not row.get("cache_hits")
        if sent and isinstance(row.get("latency"), (int, float)):
            latencies.setdefault(role, []).append(float(row["latency"]))
        if isinstance(row.get("prefix_share"), (int, float)):
            shares.setdefault(role, []).append(float(row["prefix_share"]))
        if sent:
            b = billed.setdefault(role, [0.0, 0.0, 0.0])
            cached = float(row.get("cached_prompt_tokens", 0) or 0)
            b[0] += float(row.get("prompt_tokens", 0) or 0) - cached
            b[1] += cached
            b[2] += float(row.get("completion_tokens", 0) or 0)
    for role, agg in out.items():
        agg["seconds"] = round(agg["seconds"], 3)
        agg["tokens_per_s"] = round(agg["completion_tokens"] / agg["seconds"], 1) if agg["seconds"] else None
        agg["seconds_per_call"] = round(agg["seconds"] / agg["calls"], 3) if agg["calls"] else None
        agg["completion_tokens_per_call"] = round(agg["completion_tokens"] / agg["calls"], 1) if agg["calls"] else None
        agg["latency_p50"] = _percentile(latencies.get(role, []), 50)
        agg["latency_p95"] = _percentile(latencies.get(role, []), 95)
        agg["prefix_share"] = round(sum(shares[role]) / len(shares[role]), 4) if shares.get(role) else None
        agg["fallback_rate"] = round(agg["fallbacks"] / agg["decisions"], 4) if agg["decisions"] else None
        if prices is not None:
            fresh, cached, completion = billed.get(role, [0.0, 0.0, 0.0])
            agg["cost"] = round((fresh * prices[0] + cached * prices[1] + completion * prices[2]) / 1e6, 6)
    return out


def _num(value: Any, fmt: str = "{}") -> str:
    return "-" if value is None else fmt.format(value)


def format_usage(summary: dict[str, dict[str, Any]]) -> str:
    """Markdown tables of :func:`summarize_usage`: what each role cost, and how often its
    replies were used, re-asked or replaced by its fallback."""
    if not summary:
        return ""
    cost = any("cost" in s for s in summary.values())
    lines = [
        "| Role | Model | Requests | Prompt tok | Cached prompt tok | Completion tok | Latency p50 s | "
        "Latency p95 s | Prefix share | Retries | Cache hits | Cache misses |" + (" Est. cost $ |" if cost else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if cost else ""),
    ]
    for role in sorted(summary):
        s = summary[role]
        lines.append(
            f"| {role} | {', '.join(s['models']) or '-'} | {int(s['calls'])} | {int(s['prompt_tokens'])} | "
            f"{int(s['cached_prompt_tokens'])} | {int(s['completion_tokens'])} | {_num(s['latency_p50'])} | "
            f"{_num(s['latency_p95'])} | {_num(s['prefix_share'], '{:.1%}')} | {int(s['retries'])} | "
            f"{int(s['cache_hits'])} | {int(s['cache_misses'])} |" + (f" {_num(s.get('cost'), '{:.4f}')} |" if cost else "")
        )
    lines += [
        "",
        "| Role | Decisions | Model replies used | Re-asks | Fallbacks | Fallback rate | Episode errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for role in sorted(summary):
        s = summary[role]
        lines.append(f"| {role} | {int(s['decisions'])} | {int(s['used'])} | {int(s['reasks'])} | "
                     f"{int(s['fallbacks'])} | {_num(s['fallback_rate'], '{:.1%}')} | {int(s['errors'])} |")
    return "\n".join(lines)
