"""Load: 32 sessions open at once on loopback, each playing short heuristic episodes, with no
error; sessions that play the same (task, seed) get the same episode (no state crosses sessions)."""

from __future__ import annotations

import threading

from situ_gym import ENV_IDS, STORE_OF_ENV
from situ_gym.scene.loader import load_task_bank
from situ_gym.serve import RemoteEnv
from tests.serve.conftest import running_server
from tests.serve.play import play

SESSIONS = 32
EPISODES = 2  # per session
SHORT = dict(image_size=(64, 48), max_turns=3)  # the load is in sessions and messages, not in long episodes


def test_32_concurrent_sessions_play_heuristic_episodes_without_error():
    pairs = SESSIONS // 2  # session i and i + pairs play the same episodes
    plan = [(ENV_IDS[i % 2], load_task_bank(STORE_OF_ENV[ENV_IDS[i % 2]]).tasks[i].id) for i in range(pairs)]
    opened = threading.Barrier(SESSIONS, timeout=120)
    results: list = [None] * SESSIONS
    with running_server(max_sessions=SESSIONS, session_timeout=600) as running:
        open_at_once: list[int] = []

        def session(i: int) -> None:
            env_id, task_id = plan[i % pairs]
            env = None
            try:
                env = RemoteEnv(running.url, env_id, **SHORT)
                env.reset(seed=i % pairs, options={"task_id": task_id})
                if opened.wait() == 0:  # every session is open now
                    open_at_once.append(running.sessions())
                results[i] = [play(env, seed=i % pairs + k, options={"task_id": task_id})[0] for k in range(EPISODES)]
            except Exception as exc:  # counted below
                results[i] = exc
                opened.abort()
            finally:
                if env is not None:
                    env.close()

        threads = [threading.Thread(target=session, args=(i,)) for i in range(SESSIONS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        errors = [f"session {i}: {r!r}" for i, r in enumerate(results) if not isinstance(r, list)]
        assert not errors, errors
        assert open_at_once == [SESSIONS]
        assert all(results[i] == results[i + pairs] for i in range(pairs))
        assert sum(len(episode) - 1 for r in results for episode in r) >= SESSIONS * EPISODES
