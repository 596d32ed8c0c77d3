"""Token, latency, cache and fallback accounting per role; one JSON line per backend call."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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
    (one small ``O_APPEND`` write per line, so worker processes can share the file)."""

    def __init__(self, log_path: str | os.PathLike | None = None):
        self.log_path = Path(log_path) if log_path else None
        self.totals: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def record(self, model: str, requests: Iterable[ChatRequest], results: Iterable[ChatResult]) -> None:
        for req, res in zip(requests, results, strict=True):
            self.add(
                req.role,
                model=model,
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

    def add(self, role: str, model: str = "", **counts: float) -> None:
        unknown = set(counts) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown usage fields {sorted(unknown)}; valid: {_FIELDS}")
        with self._lock:
            row = self.totals.setdefault(role, dict.fromkeys(_FIELDS, 0))
            for k, v in counts.items():
                row[k] += v
            if self.log_path is not None:
                line = json.dumps({"role": role, "model": model, **counts}, sort_keys=True) + "\n"
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)


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
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            logger.warning("%s: skipped an unreadable usage line", p)
    return rows


def summarize_usage(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per role: totals, models, tokens/s (completion tokens over backend seconds) and
    seconds per call (= per turn for the shopper and moderator, per episode for the judge)."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        role = row.get("role", "?")
        agg = out.setdefault(role, dict.fromkeys(_FIELDS, 0) | {"models": []})
        for k in _FIELDS:
            agg[k] += row.get(k, 0) or 0
        if row.get("model") and row["model"] not in agg["models"]:
            agg["models"].append(row["model"])
    for agg in out.values():
        agg["seconds"] = round(agg["seconds"], 3)
        misses_seconds = agg["seconds"]
        agg["tokens_per_s"] = round(agg["completion_tokens"] / misses_seconds, 1) if misses_seconds else None
        agg["seconds_per_call"] = round(agg["seconds"] / agg["calls"], 3) if agg["calls"] else None
        agg["completion_tokens_per_call"] = round(agg["completion_tokens"] / agg["calls"], 1) if agg["calls"] else None
    return out


def format_usage(summary: dict[str, dict[str, Any]]) -> str:
    """A markdown table of :func:`summarize_usage`."""
    if not summary:
        return ""
    lines = [
        "| Role | Model | Calls | Prompt tok | Completion tok | s/call | tok/s | Cache hits | Cache misses | Re-asks | Fallbacks |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for role in sorted(summary):
        s = summary[role]
        lines.append(
            f"| {role} | {', '.join(s['models']) or '-'} | {int(s['calls'])} | {int(s['prompt_tokens'])} | "
            f"{int(s['completion_tokens'])} | {s['seconds_per_call'] if s['seconds_per_call'] is not None else '-'} | "
            f"{s['tokens_per_s'] if s['tokens_per_s'] is not None else '-'} | {int(s['cache_hits'])} | "
            f"{int(s['cache_misses'])} | {int(s['reasks'])} | {int(s['fallbacks'])} |"
        )
    return "\n".join(lines)
