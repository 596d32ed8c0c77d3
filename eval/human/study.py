"""The study service: participants, their plans and live conversations, independent of HTTP.

Every participant is known only by a coded id (``P001``) and a random session token whose
hash is stored. Their state file holds the plan, the stage and the replay log of the
conversation in progress; a live :class:`~eval.human.conversation.Conversation` is rebuilt
from it on demand, so a restarted server resumes every session where it stopped. Calls for
one participant are serialised by a lock; different participants run side by side.

An assistant that fails during a conversation ends that conversation only: its episode is
saved with termination ``"error"``, the participant is told so (no traceback) and goes on
to their next planned conversation, without a questionnaire for the broken one. Every
conversation event (started, each turn, ended with its reason, questionnaire saved) is
one INFO line of this module's logger; :meth:`Study.progress` is the researcher's view.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.base import Assistant
from eval.human.assistants import build_assistant, check_assistants, split_assistant_name
from eval.human.conversation import Conversation
from eval.human.protocol import (
    PAPER_SEED,
    PAPER_TASK_COUNT,
    PAPER_TASKS_PER_PARTICIPANT,
    participant_plan,
    sample_tasks,
)
from eval.human.storage import StudyFiles, token_hash
from eval.human.wording import outcome_text
from eval.judge import DIMENSIONS
from situ_gym.records import EpisodeRecord
from situ_gym.scene.loader import load_task_bank

__all__ = ["StudyConfig", "Study", "PROFILE_CHOICES", "MAX_NOTE", "QUESTIONS", "UserError"]

logger = logging.getLogger(__name__)

MAX_NOTE = 300  # characters of the free-text profile note
PROFILE_CHOICES = {
    "age_group": ("18-24", "25-34", "35-44", "45-54", "55-64", "65+", "prefer not to say"),
    "shopping_frequency": ("daily", "weekly", "monthly", "rarely", "prefer not to say"),
}

# The questionnaire: App. C.1's anchored dimensions, asked of the participant (1-5).
QUESTIONS = {
    "Informativeness": "When you needed information or guidance, did the assistant give specific and "
    "relevant content that supported a decision or next action rather than vague statements?",
    "Naturalness": "Were the assistant's wording, tone and pacing natural, concise and coherent, like a "
    "real shopping assistant, without system jargon or formulaic phrasing?",
    "Groundedness": "Were the assistant's claims consistent with the scene, the products, your situation "
    "and the dialogue, without unsupported assertions or contradictions?",
    "Preference Alignment": "Did the assistant respect your stated needs, budget, preferences and "
    "constraints, and adapt after a rejection or hesitation?",
    "Proactiveness": "Did its questions, guidance, comparisons, recommendations or confirmations move you "
    "closer to finishing the shopping task rather than causing stalls or aimless actions?",
    "Non-repetition": "Did the assistant avoid repeating the same question, route, product or wording "
    "without new reason, and change strategy when progress stalled?",
    "Overall": "Considering need fulfilment, efficiency, trustworthiness and the whole experience, how "
    "satisfied are you with the assistant?",
}


class UserError(ValueError):
    """A participant's request that cannot be done; the message is shown to them as is."""


APOLOGY = ("We are sorry: {label} stopped working, so that conversation has ended. Nothing you did "
           "caused this. {next}")


class _FailedAssistant(Assistant):
    """Stands in for an assistant that could not be built: its ``reset`` raises why, so
    the conversation ends like any other assistant failure."""

    name = "failed"

    def __init__(self, exc: BaseException):
        self.exc = exc

    def reset(self, observation, info, *, seed=None):
        raise self.exc

    def act(self, observation):  # pragma: no cover - reset always raised first
        raise self.exc


@dataclass(frozen=True)
class StudyConfig:
    assistants: tuple[str, ...]
    out: str
    env: str = "SituRec-Supermarket-v0"
    seed: int = PAPER_SEED
    task_count: int = PAPER_TASK_COUNT
    tasks_per_participant: int = PAPER_TASKS_PER_PARTICIPANT  # C.2's adjacent pairs
    max_turns: int = 20
    max_participants: int | None = None  # joining is refused beyond this (None: no limit)
    max_live: int = 32  # conversations kept in memory; the rest are rebuilt by replay when needed
    # Extra constructor arguments per assistant name, e.g. {"openai:NAME": {"base_url": URL}};
    # not part of the study's identity (an endpoint may move between restarts).
    assistant_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self):
        import situ_gym

        if self.env not in situ_gym.STORE_OF_ENV:
            raise ValueError(f"unknown env {self.env!r}; choose one of {list(situ_gym.STORE_OF_ENV)}")
        if not 1 <= self.tasks_per_participant <= self.task_count:
            raise ValueError(
                f"tasks_per_participant must be in 1..task_count={self.task_count}, got {self.tasks_per_participant}"
            )
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns!r}")
        if self.max_live < 1:
            raise ValueError(f"max_live must be >= 1, got {self.max_live!r}")
        unknown = sorted(set(self.assistant_options) - set(self.assistants))
        if unknown:
            raise ValueError(f"assistant options for {unknown}, which are not in the study's assistants")


class Study:
    """Participants' sessions over one study directory.

    ``check=True`` builds every assistant and resets it on the first task before anything
    is written (``python -m eval.human serve`` does): a failure is a ValueError naming the
    assistant and the cause, so a study cannot start with an assistant that cannot play.
    """

    def __init__(self, config: StudyConfig, *, check: bool = False):
        import situ_gym

        self.config = config
        self.store = situ_gym.STORE_OF_ENV[config.env]
        bank = load_task_bank(self.store)
        self.tasks = {t.id: t for t in bank.tasks}
        self.profiles = {p.id: p for p in bank.profiles}
        self.task_ids = sample_tasks([t.id for t in bank.tasks], seed=config.seed, count=config.task_count)
        if check:
            check_assistants(config.assistants, env_id=config.env, task_id=self.task_ids[0], seed=config.seed,
                             options=config.assistant_options)
        self.files = StudyFiles(config.out)
        self.files.init(
            {
                "assistants": list(config.assistants),
                "env": config.env,
                "seed": config.seed,
                "tasks": self.task_ids,
                "tasks_per_participant": config.tasks_per_participant,
                "max_turns": config.max_turns,
            }
        )
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._by_token: dict[str, str] = {}
        self._live: OrderedDict[str, Conversation] = OrderedDict()
        for state in self.files.load_participants():
            self._remember(state)
        logger.info("study %s: %d participants, tasks %s", Path(config.out), len(self._states), self.task_ids)

    def _remember(self, state: dict[str, Any]) -> None:
        pid = state["participant_id"]
        self._states[pid] = state
        self._by_token[state["token_hash"]] = pid
        self._locks.setdefault(pid, threading.Lock())

    # ------------------------------------------------------------------ participants
    def join(self, profile: dict[str, Any]) -> tuple[str, str]:
        """Register a participant; returns ``(participant_id, token)``."""
        clean = self._check_profile(profile)
        token = secrets.token_urlsafe(24)
        with self._lock:
            ordinal = len(self._states)
            if self.config.max_participants is not None and ordinal >= self.config.max_participants:
                raise UserError("the study is full; thank you for your interest")
            pid = f"P{ordinal + 1:03d}"
            plan = participant_plan(
                self.task_ids, list(self.config.assistants), ordinal, self.config.tasks_per_participant,
                seed=self.config.seed,
            )
            state = {
                "participant_id": pid,
                "ordinal": ordinal,
                "token_hash": token_hash(token),
                "env": self.config.env,
                "seed": self.config.seed,
                "profile": clean,
                "plan": [p.to_dict() for p in plan],
                "index": 0,
                "stage": "briefing",
                "log": [],
                "done": [],
            }
            self.files.save_participant(state)
            self._remember(state)
        logger.info("participant %s joined", pid)
        return pid, token

    def participant(self, token: str | None) -> str | None:
        """The participant id of a session token, or None."""
        if not token:
            return None
        return self._by_token.get(token_hash(token))

    def _check_profile(self, profile: dict[str, Any]) -> dict[str, str]:
        clean = {}
        for key, choices in PROFILE_CHOICES.items():
            value = profile.get(key)
            if value not in choices:
                raise UserError(f"please choose your {key.replace('_', ' ')}")
            clean[key] = value
        note = profile.get("note") or ""
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            raise UserError(f"the note is limited to {MAX_NOTE} characters")
        clean["note"] = note.strip()
        return clean

    # ------------------------------------------------------------------ views
    def state(self, pid: str) -> dict[str, Any]:
        """What the participant's page shows now."""
        with self._locks[pid], self._failures(pid):
            return self._state(pid)

    @contextlib.contextmanager
    def _failures(self, pid: str):
        """Turn a crash of the env or the server into a message; the saved log stays replayable
        (an assistant's failure never gets here: it ends its conversation, see the module docstring).

        The live conversation is dropped, so the next request rebuilds it from the log and
        asks the assistant again (a flaky endpoint gets another chance; nothing typed is lost).
        """
        try:
            yield
        except UserError:
            raise
        except Exception as exc:
            logger.exception("participant %s: the conversation failed", pid)
            with self._lock:
                self._live.pop(pid, None)
            self.files.save_participant(self._states[pid])
            raise UserError(
                f"something went wrong on our side ({type(exc).__name__}); reload the page to try again"
            ) from exc

    def _state(self, pid: str) -> dict[str, Any]:
        s = self._states[pid]
        base = {"participant_id": pid, "stage": s["stage"], "total": len(s["plan"]), "index": s["index"]}
        if s.get("notice") and s["stage"] in ("briefing", "done"):
            base["notice"] = s["notice"]
        if s["stage"] == "done":
            return base
        planned = s["plan"][s["index"]]
        base["assistant_label"] = f"Assistant {planned['label']}"
        base["briefing"] = self._briefing(planned["task_id"])
        if s["stage"] == "chat":
            conv = self._conversation(pid)
            if conv.done:  # the server stopped between the last turn and its questionnaire
                self._finish_if_done(pid, conv)
                return self._state(pid)
            base.update(conv.view_state())
        if s["stage"] == "rating":
            base["questions"] = [{"dimension": d, "question": QUESTIONS[d]} for d in DIMENSIONS]
            base["termination"] = s.get("termination")
            base["transcript"] = s.get("transcript", [])
            base["outcome"] = s.get("outcome") or outcome_text(s.get("termination"), bought=[], gave_up=False,
                                                               max_turns=self.config.max_turns)
        return base

    def _briefing(self, task_id: str) -> dict[str, Any]:
        task = self.tasks[task_id]
        profile = self.profiles[task.profile_id]
        return {
            "persona": f"{profile.name}. {profile.persona}",
            "request": task.request,
            "budget": task.budget,
            "details": [d.text for d in task.disclosure],
            "store": self.store.replace("_", " "),
        }

    # ------------------------------------------------------------------ actions
    def start(self, pid: str) -> dict[str, Any]:
        with self._locks[pid], self._failures(pid):
            s = self._states[pid]
            if s["stage"] != "briefing":
                raise UserError("there is no conversation waiting to start")
            s["stage"] = "chat"
            s["log"] = []
            s.pop("notice", None)
            planned = s["plan"][s["index"]]
            logger.info("%s %s started: task %s, Assistant %s (%s)", pid, self._which(s), planned["task_id"],
                        planned["label"], planned["assistant"])
            conv = self._conversation(pid)  # the assistant speaks first; saved with the log
            self._finish_if_done(pid, conv)  # an assistant that fails at once ends it here
            return self._state(pid)

    @staticmethod
    def _which(s: dict[str, Any]) -> str:
        return f"conversation {s['index'] + 1}/{len(s['plan'])}"

    def turn(self, pid: str, utterance: str, tool_call: Any, gave_up: bool = False,
             silent: bool = False) -> dict[str, Any]:
        with self._locks[pid], self._failures(pid):
            s = self._states[pid]
            if s["stage"] != "chat":
                raise UserError("there is no conversation in progress")
            conv = self._conversation(pid)
            error = conv.submit(utterance, tool_call, gave_up, silent)
            if error is not None:
                raise UserError(error)
            self.files.save_participant(s)  # the log first: a crash now replays to the same end
            last = conv.turns[-1]
            logger.info("%s %s turn %d: %s (%s)", pid, self._which(s), len(conv.turns),
                        last.user_action.name if last.user_action else "-",
                        "done" if last.result is not None and last.result.ok else "refused by the store")
            self._finish_if_done(pid, conv)
            return self._state(pid)

    def _finish_if_done(self, pid: str, conv: Conversation) -> None:
        """Save a finished conversation's episode (once) and move on to its questionnaire."""
        if not conv.done:
            return
        s = self._states[pid]
        planned = s["plan"][s["index"]]
        episode = self._episode(pid, planned, conv)
        self.files.save_episode(planned["assistant"], episode)
        which = self._which(s)
        if conv.termination == "error":
            logger.info("%s %s ended: error after %d turns (%s: %s)", pid, which, len(conv.turns),
                        conv.error_cause, conv.error_line)
            s["done"].append({**planned, "episode_id": episode.episode_id, "log": s["log"], "ratings": None,
                              "termination": "error", "error": conv.error_line})
            s["log"] = []
            s["index"] += 1
            s["stage"] = "done" if s["index"] >= len(s["plan"]) else "briefing"
            nxt = "You have no more conversations to do." if s["stage"] == "done" else \
                "Please go on with your next conversation."
            s["notice"] = APOLOGY.format(label=f"Assistant {planned['label']}", next=nxt)
        else:
            last_user = s["log"][-1]["user"] if s["log"] and s["log"][-1].get("user") else {}
            outcome = outcome_text(conv.termination, bought=[conv.core.index.name(p) for p in episode.cart],
                                   gave_up=bool(last_user.get("gave_up")), max_turns=self.config.max_turns)
            logger.info("%s %s ended: %s after %d turns%s", pid, which, conv.termination, len(conv.turns),
                        f" (bought {', '.join(episode.cart)})" if episode.cart else "")
            s["stage"] = "rating"
            s["episode_id"] = episode.episode_id
            s["termination"] = conv.termination
            s["transcript"] = conv.transcript()
            s["outcome"] = outcome
        self.files.save_participant(s)
        with self._lock:
            self._live.pop(pid, None)
        conv.close()

    def rate(self, pid: str, ratings: Any) -> dict[str, Any]:
        with self._locks[pid]:
            s = self._states[pid]
            if s["stage"] != "rating":
                raise UserError("there is no conversation to rate")
            clean = self._check_ratings(ratings)
            planned = s["plan"][s["index"]]
            self.files.save_ratings(planned["assistant"], s["episode_id"], clean)
            s["done"].append({**planned, "episode_id": s["episode_id"], "log": s["log"], "ratings": clean,
                              "termination": s.get("termination")})
            logger.info("%s %s questionnaire saved (Assistant %s, %s)", pid, self._which(s), planned["label"],
                        planned["assistant"])
            s["log"] = []
            s["index"] += 1
            s["stage"] = "done" if s["index"] >= len(s["plan"]) else "briefing"
            for key in ("episode_id", "termination", "transcript", "outcome"):
                s.pop(key, None)
            self.files.save_participant(s)
            return self._state(pid)

    @staticmethod
    def _check_ratings(ratings: Any) -> dict[str, int]:
        if not isinstance(ratings, dict):
            raise UserError("ratings must be given for every question")
        missing = [d for d in DIMENSIONS if d not in ratings]
        if missing:
            raise UserError(f"please answer every question (missing: {', '.join(missing)})")
        extra = [k for k in ratings if k not in DIMENSIONS]
        if extra:
            raise UserError(f"unknown questions: {', '.join(map(str, extra))[:200]}")
        clean = {}
        for d in DIMENSIONS:
            v = ratings[d]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 5:
                raise UserError(f"{d} must be rated 1 to 5")
            clean[d] = v
        return clean

    # ------------------------------------------------------------------ internals
    def _conversation(self, pid: str) -> Conversation:
        """The live conversation of ``pid``, rebuilt from the replay log when not in memory."""
        with self._lock:
            conv = self._live.get(pid)
            if conv is not None:
                self._live.move_to_end(pid)
                return conv
        s = self._states[pid]
        planned = s["plan"][s["index"]]
        try:
            assistant = build_assistant(planned["assistant"], **self.config.assistant_options.get(planned["assistant"], {}))
        except Exception as exc:  # noqa: BLE001 - e.g. an endpoint gone since the start: this conversation ends
            assistant = _FailedAssistant(exc)
        conv = Conversation(
            env_id=self.config.env,
            task_id=planned["task_id"],
            seed=self.config.seed,
            assistant=assistant,
            log=s["log"],
            max_turns=self.config.max_turns,
        )
        s["log"] = conv.log
        self.files.save_participant(s)
        with self._lock:
            self._live[pid] = conv
            while len(self._live) > self.config.max_live:
                # Only dropped, not closed: its owner may be using it right now; an idle
                # participant's next request rebuilds it from the saved log.
                self._live.popitem(last=False)
        return conv

    def _episode(self, pid: str, planned: dict[str, str], conv: Conversation) -> EpisodeRecord:
        task = self.tasks[planned["task_id"]]
        return EpisodeRecord(
            episode_id=f"{pid}/{task.id}",
            env_id=self.config.env,
            store=self.store,
            task_id=task.id,
            profile_id=task.profile_id,
            subset=task.subset,
            seed=self.config.seed,
            agent=split_assistant_name(planned["assistant"])[0],  # as eval.rollout records it
            user="human",
            target_id=task.target_product_id,
            reference_set=list(task.reference_set),
            budget=float(task.budget),
            turns=conv.turns,
            cart=list(conv.turns[-1].cart) if conv.turns else [],
            termination=conv.termination or "turn_limit",
            error=conv.error,
            error_cause=conv.error_cause,
        )

    # ------------------------------------------------------------------ researcher
    def progress(self) -> dict[str, Any]:
        """The researcher's view: per participant and per assistant, conversations planned,
        done (finished normally), errored and questionnaires filled; nothing a participant typed."""
        with self._lock:
            states = [dict(s) for s in self._states.values()]
        per_assistant = {a: {"assistant": a, "planned": 0, "done": 0, "errored": 0, "rated": 0, "in_progress": 0}
                         for a in self.config.assistants}
        people = []
        for s in sorted(states, key=lambda x: x["participant_id"]):
            done = [d for d in s["done"] if d.get("termination") != "error"]
            errored = [d for d in s["done"] if d.get("termination") == "error"]
            rated = [d for d in s["done"] if d.get("ratings")]
            finished_now = s["stage"] == "rating"  # played, questionnaire not filled yet
            current = s["plan"][s["index"]] if s["index"] < len(s["plan"]) else None
            people.append({
                "participant_id": s["participant_id"],
                "stage": s["stage"],
                "planned": len(s["plan"]),
                "done": len(done) + (1 if finished_now else 0),
                "errored": len(errored),
                "rated": len(rated),
                "current": None if current is None else
                f"{s['index'] + 1}/{len(s['plan'])}: Assistant {current['label']} ({current['assistant']}), "
                f"task {current['task_id']}",
                "turns": sum(1 for e in s.get("log", []) if e.get("user")) if s["stage"] == "chat" else None,
            })
            for p in s["plan"]:
                per_assistant[p["assistant"]]["planned"] += 1
            for d in done:
                per_assistant[d["assistant"]]["done"] += 1
            for d in errored:
                per_assistant[d["assistant"]]["errored"] += 1
            for d in rated:
                per_assistant[d["assistant"]]["rated"] += 1
            if current is not None and s["stage"] in ("chat", "rating"):
                key = "done" if finished_now else "in_progress"
                per_assistant[current["assistant"]][key] += 1
        return {"participants": people, "assistants": list(per_assistant.values()), "tasks": self.task_ids,
                "env": self.config.env}

    def config_dict(self) -> dict[str, Any]:
        return asdict(self.config)

    def close(self) -> None:
        with self._lock:
            for conv in self._live.values():
                conv.close()
            self._live.clear()
