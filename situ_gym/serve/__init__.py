"""SituRec envs over OpenEnv: a server of sessions, and a client that is a ``gymnasium.Env``.

Serve (``pip install "situ-gym[serve]"``)::

    python -m situ_gym.serve --port 8000 --max-sessions 32 --session-timeout 600

and play remotely with the same observations, actions, infos and RecRM reward as in-process::

    from situ_gym.serve import RemoteEnv
    env = RemoteEnv("http://localhost:8000", "SituRec-Supermarket-v0", image_size=(320, 240))
    obs, info = env.reset(seed=0, options={"task_id": "..."})      # or options={"group_key": "..."}
    obs, reward, terminated, truncated, info = env.step(assistant_json_text)
    handle = env.snapshot(); env.restore(handle)                   # branching, kept on the server
    env = RemoteEnv(url, "SituRec-Supermarket-v0", catalog_view="tools")
    env.call_tool("search_catalog", {"query": "oat milk"})         # or info["tools"](...), as in-process

Any registered store is served (``--store PATH`` adds a store folder, ``docs/stores.md``); a
client names a folder store's env id once it knows the store: ``RemoteEnv(url, store=PATH)``.

Names load lazily: ``python -m situ_gym.serve --help`` imports neither OpenEnv nor the env.
"""

from __future__ import annotations

__all__ = ["RemoteEnv", "RemoteEnvError", "RequestError", "ServerBusy", "SessionLost", "create_app",
           "group_seed", "SituRecEnvironment"]

_LAZY = {
    "RemoteEnv": "situ_gym.serve.client",
    "RemoteEnvError": "situ_gym.serve.client",
    "RequestError": "situ_gym.serve.client",
    "ServerBusy": "situ_gym.serve.client",
    "SessionLost": "situ_gym.serve.client",
    "create_app": "situ_gym.serve.server",
    "SituRecEnvironment": "situ_gym.serve.server",
    "group_seed": "situ_gym.serve.messages",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'situ_gym.serve' has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(_LAZY[name])
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "openenv":
            import gymnasium as gym

            raise gym.error.DependencyNotInstalled(
                'situ_gym.serve needs OpenEnv, which is not installed: pip install "situ-gym[serve]"') from exc
        raise
    return getattr(module, name)
