"""Files of a human-evaluation study: participant states (with replay logs) and one run per assistant.

Layout of the study directory::

    study.json                         assistants, env, tasks, seed (fixed once created)
    participants/P001.json             coded participant: profile, plan, replay log, progress
    runs/<assistant>/config.json       {"config": {"agent": ..., "model": ..., "user": "human", ...}}
    runs/<assistant>/trajectories.jsonl  EpisodeRecord lines, as written by eval.rollout
    runs/<assistant>/ratings.jsonl     {"episode_id": ..., "ratings": {dimension: 1-5}} lines

Each run directory reads like an ``eval.rollout`` run (``python -m eval.metrics``) and is
what ``python -m eval.agreement`` pairs with simulated-user runs. Participant files hold
only a hash of the session token. Writes are atomic (temp file + rename) or appended with
fsync, and appends skip ids already present, so a crash between two writes repeats nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from eval.human.assistants import split_assistant_name
from eval.io import append_episode, drop_truncated_tail, read_episodes
from situ_gym import jsonl
from situ_gym.records import EpisodeRecord

__all__ = ["token_hash", "write_json", "read_json", "run_dir_name", "StudyFiles"]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Replace ``path`` atomically: a reader or a crash sees the old or the new file, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def run_dir_name(assistant: str) -> str:
    """A directory name for an assistant (``hf:runs/x`` -> ``hf_runs_x``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", assistant).strip("._") or "assistant"


class StudyFiles:
    """Reads and writes the files of one study directory."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.participants = self.root / "participants"
        self.runs = self.root / "runs"

    def init(self, study: dict[str, Any]) -> None:
        """Create the directory, or check that an existing one was made for the same study."""
        self.participants.mkdir(parents=True, exist_ok=True)
        self.runs.mkdir(parents=True, exist_ok=True)
        path = self.root / "study.json"
        if path.exists():
            previous = read_json(path)
            changed = {k: (previous.get(k), v) for k, v in study.items() if previous.get(k) != v}
            if changed:
                raise ValueError(f"{path} was made for another setup: {changed}; use another --out")
        else:
            write_json(path, study)
        names = [run_dir_name(a) for a in study["assistants"]]
        if len(set(names)) != len(names):
            raise ValueError(f"assistant names collide as directory names: {names}")
        for assistant in study["assistants"]:
            run = self.run_dir(assistant)
            run.mkdir(exist_ok=True)
            agent, model = split_assistant_name(assistant)
            # The keys of eval.rollout's config.json, so human and simulated runs pair alike.
            config = {
                "assistant": assistant,
                "config": {
                    "env": study["env"],
                    "agent": agent,
                    "model": model,
                    "user": "human",
                    "seed": study["seed"],
                    "max_turns": study["max_turns"],
                    "tasks": ",".join(study["tasks"]),
                    "reward": "none",
                },
                "study": str(self.root.resolve()),
            }
            write_json(run / "config.json", config)
            drop_truncated_tail(run / "trajectories.jsonl")

    def run_dir(self, assistant: str) -> Path:
        return self.runs / run_dir_name(assistant)

    # ------------------------------------------------------------------ participants
    def participant_path(self, participant_id: str) -> Path:
        return self.participants / f"{participant_id}.json"

    def load_participants(self) -> list[dict[str, Any]]:
        return [read_json(p) for p in sorted(self.participants.glob("P*.json"))]

    def save_participant(self, state: dict[str, Any]) -> None:
        write_json(self.participant_path(state["participant_id"]), state)

    # ------------------------------------------------------------------ results
    def save_episode(self, assistant: str, episode: EpisodeRecord) -> None:
        path = self.run_dir(assistant) / "trajectories.jsonl"
        if path.exists() and any(ep.episode_id == episode.episode_id for ep in read_episodes(path)):
            return
        append_episode(path, episode)

    def save_ratings(self, assistant: str, episode_id: str, ratings: dict[str, int]) -> None:
        path = self.run_dir(assistant) / "ratings.jsonl"
        if episode_id in self.rated_ids(assistant):
            return
        line = json.dumps({"episode_id": episode_id, "ratings": ratings}, sort_keys=True) + "\n"
        if path.exists():
            raw = path.read_bytes()
            if raw and not raw.endswith(b"\n"):  # a line torn by a crash: cut it, it is asked again
                with open(path, "wb") as fh:
                    fh.write(raw[: raw.rfind(b"\n") + 1])
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def rated_ids(self, assistant: str) -> set[str]:
        path = self.run_dir(assistant) / "ratings.jsonl"
        if not path.exists():
            return set()
        ids = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                ids.add(jsonl.loads(line)["episode_id"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line from a crash; the rating is asked again
        return ids
