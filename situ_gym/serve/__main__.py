"""Serve SituRec envs over OpenEnv: ``python -m situ_gym.serve --port 8000 --max-sessions 32``.

Clients open OpenEnv WebSocket sessions at ``ws://HOST:PORT/ws`` (``situ_gym.serve.RemoteEnv``,
or any OpenEnv ``EnvClient``); ``/health``, ``/schema`` and ``/metadata`` answer over HTTP.
Every registered store is served (the paper's two, the folders of ``$SITUREC_STORES``), and
the store folders named by ``--store PATH`` (``docs/stores.md``), each under its env id.
"""

from __future__ import annotations

import argparse

from situ_gym import cli


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m situ_gym.serve", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (0: any free port, printed at start)")
    parser.add_argument("--max-sessions", type=int, default=8,
                        help="sessions open at once (one env each); the next connection is refused with CAPACITY_REACHED")
    parser.add_argument("--session-timeout", type=float, default=600.0,
                        help="seconds a session may stay idle before the server closes it and reclaims its slot "
                             "(0: never); make it longer than the policy's slowest turn")
    parser.add_argument("--store", action="append", metavar="PATH",
                        help="a store folder to register and serve under its store.json env_id (repeat for "
                             "several; docs/stores.md)")
    parser.add_argument("--env", action="append", metavar="ID",
                        help="a registered store's env id to serve (repeat for several; the first is the default "
                             "of a reset that names none); default: every registered store's (the paper's "
                             "SituRec-Supermarket-v0 and SituRec-HomeFurnishings-v0, $SITUREC_STORES, --store)")
    parser.add_argument("--reward", default="recrm.wrapper:RecRMReward",
                        help="the reward wrapper put around every env, as an entry point module:Class ('none': the "
                             "env's own reward)")
    parser.add_argument("--max-snapshots", type=int, default=64, help="snapshots one session may keep at once")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)
    if args.max_sessions < 1:
        cli.fail(parser, f"--max-sessions must be at least 1, got {args.max_sessions}")
    if args.session_timeout < 0:
        cli.fail(parser, f"--session-timeout must be 0 or more seconds, got {args.session_timeout}")
    if not 0 <= args.port <= 65535:
        cli.fail(parser, f"--port must be in 0..65535, got {args.port}")
    from situ_gym.stores import StoreError, register_store_folder, registered_stores, store_spec

    for folder in args.store or ():
        try:
            register_store_folder(folder)
        except StoreError as exc:
            cli.fail(parser, f"--store {folder}: {exc}")
    known = tuple(store_spec(store).env_id for store in registered_stores())  # messages.registered_env_ids
    for env_id in args.env or ():
        if env_id not in known:
            cli.fail(parser, f"--env {env_id}: not a registered store's env id; choose from {', '.join(known)} "
                             "(a store folder's with --store PATH)")
    args.env = tuple(args.env or known)
    args.parser = parser
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cli.setup_logging(args.verbose)
    import socket

    import uvicorn

    from situ_gym.serve.server import create_app

    try:
        app = create_app(max_sessions=args.max_sessions, session_timeout=args.session_timeout or None,
                         env_ids=args.env,
                         reward=None if args.reward.lower() == "none" else args.reward,
                         max_snapshots=args.max_snapshots)
    except (ValueError, ImportError, AttributeError) as exc:
        cli.fail(args.parser, f"--reward {args.reward}: {exc}")
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
        # listening before the address is printed: a client that connects at once waits in the
        # backlog until uvicorn accepts, instead of being refused (a bound socket refuses)
        sock.listen(128)
    except OSError as exc:
        cli.fail(args.parser, f"cannot listen on {args.host}:{args.port}: {exc}")
    host, port = sock.getsockname()[:2]
    print(f"serving {', '.join(args.env)} on ws://{host}:{port}/ws "
          f"(max {args.max_sessions} sessions, idle timeout {args.session_timeout or 'none'} s)", flush=True)
    config = uvicorn.Config(app, log_level="info" if args.verbose else "warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
