"""Trajectory files: one ``EpisodeRecord`` per JSON line, appended durably, read tolerantly."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from situ_gym import jsonl
from situ_gym.records import EpisodeRecord, decode_trajectory, parse_episode_lines, read_episodes

__all__ = [
    "append_episode",
    "read_episodes",
    "drop_truncated_tail",
    "episode_id_for",
    "repeat_of",
    "done_keys",
    "task_order",
    "move_error_episodes",
    "retried_on_resume",
    "sort_episode_file",
    "register_run_store",
]

logger = logging.getLogger(__name__)

_REPEAT_RE = re.compile(r"#r(\d+)$")


def episode_id_for(task_id: str, repeat: int) -> str:
    """The runner's episode id: ``"<task_id>#r<repeat>"`` (repeat is 0-based)."""
    return f"{task_id}#r{int(repeat)}"


def repeat_of(episode: EpisodeRecord) -> int:
    """Repeat index of an episode, parsed from its id; 0 when the id carries none."""
    m = _REPEAT_RE.search(episode.episode_id)
    return int(m.group(1)) if m else 0


def done_keys(episodes: Iterable[EpisodeRecord]) -> set[tuple[str, int]]:
    """The ``(task_id, repeat)`` pairs already present (what ``--resume`` skips)."""
    return {(ep.task_id, repeat_of(ep)) for ep in episodes}


def _natural(text: str) -> tuple:
    """Sort key that orders digit runs by value ("t2" before "t10")."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def task_order(episodes: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """Episodes in (env, task, repeat) order: the order metrics, reports and the viewer use,
    so that they do not depend on worker count, batch size or resume history."""
    return sorted(episodes, key=lambda ep: (ep.env_id, ep.agent, _natural(ep.task_id), repeat_of(ep), ep.episode_id))


def retried_on_resume(termination: str | None, error_cause: str | None, retry_errors: bool = False) -> bool:
    """Does ``--resume`` play this saved episode again? Crashes and episodes a dead endpoint
    cut short: yes; episodes an LLM role's own fault ended (context length, content filter:
    the same request would fail again) only with ``--retry-errors``."""
    from situ_gym.llm.errors import EPISODE_CAUSES

    if termination != "error":
        return False
    return retry_errors or error_cause not in EPISODE_CAUSES


def move_error_episodes(path: str | os.PathLike, errors_path: str | os.PathLike, retry_errors: bool = False) -> int:
    """Move the error episodes that ``--resume`` plays again (``retried_on_resume``) of a
    trajectory file to ``errors_path`` (appended, kept for diagnosis); returns how many.

    The errors file is written first and the trajectory file replaced atomically after, so
    a kill in between leaves every record in at least one of the two files."""
    p = Path(path)
    if not p.exists():
        return 0
    keep, moved = [], []
    # Lines end at "\n" only: str.splitlines would also cut at U+2028, NEL, form feeds...
    # which a record's text may hold as they are, and write the halves back as two lines.
    for line in p.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        line += "\n"
        try:
            data = jsonl.loads(line)
            failed = retried_on_resume(data.get("termination"), data.get("error_cause"), retry_errors)
        except (ValueError, AttributeError):  # JSONDecodeError, too long an integer; not an object
            failed = False  # a truncated tail is drop_truncated_tail's business
        (moved if failed else keep).append(line)
    if not moved:
        return 0
    with open(errors_path, "a", encoding="utf-8") as fh:
        fh.writelines(moved)
        fh.flush()
        os.fsync(fh.fileno())
    _replace_lines(p, keep)
    return len(moved)


def register_run_store(trajectories: str | os.PathLike) -> None:
    """Register the store folder a run played (``env_kwargs["store"]`` in the config.json beside
    its trajectories), so that reading a folder store's run needs no ``SITUREC_STORES``. A run
    of a registered store, or with no readable config, is left alone."""
    from situ_gym.stores import register_store_folder

    config = Path(trajectories).parent / "config.json"
    try:
        store = json.loads(config.read_text(encoding="utf-8"))["config"]["env_kwargs"]["store"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if isinstance(store, str) and ("/" in store or os.sep in store):
        register_store_folder(store)  # a StoreError (one line) if the folder is gone


def sort_episode_file(path: str | os.PathLike) -> None:
    """Rewrite a trajectory file in ``task_order`` (atomically), so that its bytes do not depend
    on the order in which workers finished; a missing file is left missing."""
    p = Path(path)
    if not p.exists():
        return
    _replace_lines(p, [ep.model_dump_json() + "\n" for ep in task_order(read_episodes(p))])


def _replace_lines(path: Path, lines: list[str]) -> None:
    """Write ``lines`` to a temporary file, fsync it, then swap it in (a kill leaves one of the two)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def append_episode(path: str | os.PathLike, episode: EpisodeRecord) -> None:
    """Append one episode as one JSON line, then flush and fsync so a kill loses at most it."""
    if not isinstance(episode, EpisodeRecord):
        raise ValueError(f"episode must be an EpisodeRecord, got {type(episode).__name__}")
    line = episode.model_dump_json() + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def drop_truncated_tail(path: str | os.PathLike) -> int:
    """Cut a truncated last line off the file (before appending to it on resume).

    Returns the number of bytes removed (0 when the file is intact or absent). Without
    this, the next append would be glued onto the partial line and corrupt both.
    """
    p = Path(path)
    if not p.exists():
        return 0
    raw = p.read_bytes()
    # the reader's own decoding: a character cut off by the kill is part of the tail; any
    # other bad byte is an error naming its line, as read_episodes would raise it
    _, bad_line = parse_episode_lines(decode_trajectory(raw, str(p)), str(p))
    if bad_line is None:
        if raw and not raw.endswith(b"\n"):  # complete record without its newline
            with open(p, "ab") as fh:
                fh.write(b"\n")
        return 0
    keep = b"\n".join(raw.split(b"\n")[:bad_line])
    keep = keep + b"\n" if keep else b""
    removed = len(raw) - len(keep)
    with open(p, "wb") as fh:
        fh.write(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return removed
