"""Any registered store through the server (issue 27): a folder store (the pharmacy) plays as
in-process, byte for byte; env ids are checked against the stores registered on each side."""

from __future__ import annotations

import pytest

from situ_gym import ENV_IDS
from situ_gym.scene.loader import load_task_bank
from situ_gym.serve import RemoteEnv, RequestError, create_app
from tests.serve.conftest import PHARMACY_ENV_ID, running_server
from tests.serve.play import SMALL, local_env, play


def test_a_pharmacy_episode_through_the_server_is_byte_identical(server, pharmacy_folder):
    options = {"task_id": load_task_bank("pharmacy").tasks[5].id}
    remote = RemoteEnv(server.url, store=pharmacy_folder, **SMALL)  # the store's env id by default
    assert remote.env_id == PHARMACY_ENV_ID
    local = local_env(PHARMACY_ENV_ID, **SMALL)
    assert remote.observation_space == local.observation_space and remote.action_space == local.action_space
    expected, _ = play(local, options=options)
    got, _ = play(remote, options=options)
    assert len(expected) >= 3 and got == expected
    assert remote.reset(seed=1)[1]["store"] == "pharmacy"
    remote.close()
    # The tools view of a folder store too.
    tools = dict(SMALL, catalog_view="tools")
    remote = RemoteEnv(server.url, PHARMACY_ENV_ID, **tools)
    expected, _ = play(local_env(PHARMACY_ENV_ID, **tools), options=options, agent="heuristic-tools")
    assert play(remote, options=options, agent="heuristic-tools")[0] == expected
    remote.close()
    local.close()


def test_env_ids_are_checked_against_the_registered_stores(server, pharmacy_folder):
    with pytest.raises(ValueError, match="registered store"):
        RemoteEnv(server.url, "SituRec-Nowhere-v0")
    with pytest.raises(ValueError, match="registered store"):
        RemoteEnv(server.url, "SituRec-Custom-v0")  # its store= is the server's to choose
    with pytest.raises(ValueError, match="not the env id of store 'pharmacy'"):
        RemoteEnv(server.url, ENV_IDS[0], store=pharmacy_folder)
    by_id = RemoteEnv(server.url, store="pharmacy", **SMALL)  # a registered store id does too
    assert by_id.env_id == PHARMACY_ENV_ID
    by_id.close()
    with pytest.raises(ValueError, match="unknown env id 'SituRec-Nowhere-v0'"):
        create_app(env_ids=("SituRec-Nowhere-v0",))
    # A server that serves some stores refuses the others' resets, and goes on.
    with running_server(max_sessions=2, env_ids=(ENV_IDS[1],)) as only:
        env = RemoteEnv(only.url, PHARMACY_ENV_ID, **SMALL)
        with pytest.raises(RequestError, match="not served here"):
            env.reset(seed=0)
        env.close()
        env = RemoteEnv(only.url, ENV_IDS[1], **SMALL)
        assert env.reset(seed=0)[1]["store"] == "home_furnishings"
        env.close()
