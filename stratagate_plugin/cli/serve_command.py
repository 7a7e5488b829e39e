"""``stratagate serve``: the reference harness as a local web app (chat and plugin pages).

This process opens the host with its plugins (migrating the database) and serves the app
with uvicorn on 127.0.0.1 unless told otherwise; then it starts ``--processes`` − 1 more
web processes on the same socket and the memory plugin's derivation worker in a process of
its own, and keeps them running (``cli/serve_processes.py``). Any other address needs an
access token, and the URL printed carries it once (it is then kept in a cookie). The app
answers to the names the server is reached by (for ``0.0.0.0``, the machine's own name and
addresses and loopback) and to each ``--allowed-host``; any other Host is refused.

An open that builds the search indexes (a file of older code: minutes at 500k messages)
says so on stderr (``core/rebuilds.py``, printed by ``progress.print_rebuild``). The socket
is bound before it and served only after: a browser that connects meanwhile waits in the
listen queue and gets its page when the engine can read it, where a "preparing" page would
need an app without the engine every page reads. The URL is printed once it answers.
"""

import argparse
import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

from ..harness.errors import HostError
from ..harness.pm import await_me_maybe
from ..harness.profiles import DEFAULT_PROFILE, load_profile
from ..harness.runtime import Host
from ..memory_plugin.runtime import MemoryRuntime
from ..web.shell.app import build_app
from ..web.shell.handoff import private_folder, remove_folder
from ..web.shell.security import WILDCARD_BINDS, GuardPolicy, policy_for
from .chat_command import chat_model
from .common import add_db_option, database_location, plugin_database
from .serve_child import handoff_folder, run_child, serve_app
from .serve_processes import CHILD_DATABASE, MAX_PROCESSES, Children, spawn_children

DEFAULT_PORT = 8377
MAX_DEFAULT_PROCESSES = 4


def register(commands: Any) -> None:
    parser = commands.add_parser("serve", help="the web app: chat and memory pages in a browser")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="profile (default: %(default)s)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)"
    )
    parser.add_argument(
        "--token",
        default=None,
        help="access token, required off 127.0.0.1 (or STRATAGATE_WEB_TOKEN)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        dest="allowed_hosts",
        help="another Host name the app answers to, e.g. a DNS name or a proxy's (repeatable)",
    )
    parser.add_argument(
        "--processes",
        type=positive,
        default=default_processes(),
        metavar="N",
        help="web processes answering on the port (default: the cores, at most "
        f"{MAX_DEFAULT_PROCESSES}: %(default)s)",
    )
    parser.add_argument(
        "--worker",
        choices=("process", "inline"),
        default="process",
        help="where the memory worker derives: a process of its own at lower priority "
        "(default), or inline in the one web process (needs --processes 1)",
    )
    add_db_option(parser)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--shared", type=Path, default=None, help=argparse.SUPPRESS)
    parser.set_defaults(handler=run_serve)


def default_processes() -> int:
    """One web process per core, up to ``MAX_DEFAULT_PROCESSES`` (each holds an engine)."""
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_PROCESSES))


def positive(text: str) -> int:
    number = int(text)
    if not 1 <= number <= MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PROCESSES}")
    return number


async def run_serve(args: argparse.Namespace) -> int:
    args.token = args.token or os.environ.get("STRATAGATE_WEB_TOKEN") or None
    try:
        policy = policy_for(args.host, args.token, args.allowed_hosts)
    except ValueError as error:
        raise HostError(str(error)) from error
    if args.child:
        with plugin_database(child_database()):
            return await run_child(args, policy)
    if args.worker == "inline" and args.processes > 1:
        raise HostError("--worker inline derives in the one web process: use --processes 1")
    with plugin_database(args.db):
        return await run_parent(args, policy)


async def run_parent(args: argparse.Namespace, policy: GuardPolicy) -> int:
    """The first web process, and the parent of the others and of the worker."""
    listener = bind(args.host, args.port)
    kick_read, kick_write = os.pipe()
    if args.worker == "process":
        MemoryRuntime.kick_pipe = kick_write
        os.set_blocking(kick_write, False)
    args.shared = private_folder() if args.processes > 1 else None
    try:
        return await serve_parent(args, policy, listener, kick_read, kick_write)
    finally:
        MemoryRuntime.kick_pipe = None
        if args.shared is not None:
            remove_folder(args.shared)


async def serve_parent(
    args: argparse.Namespace,
    policy: GuardPolicy,
    listener: socket.socket,
    kick_read: int,
    kick_write: int,
) -> int:
    profile = load_profile(args.profile)
    say(f"loading the plugins of profile {profile.name!r}")
    host = Host.from_profile(profile)
    say("starting the plugins (opening and migrating the memory database)")
    async with host:
        model = await chat_model(host)
        try:
            say("building the web app")
            app = await build_app(host, model, policy, handoff_folder(args))
            announce(args, policy, listener.getsockname()[1])
            worker_end = kick_read if args.worker == "process" else None
            await serve_with(spawn_children(args, listener, worker_end, kick_write), app, listener)
        finally:
            await await_me_maybe(getattr(model, "aclose", lambda: None)())
    return 0


def announce(args: argparse.Namespace, policy: GuardPolicy, port: int) -> None:
    """The URL on stdout (with the token, once), the rest on stderr."""
    shown = f"[{args.host}]" if ":" in args.host else args.host
    suffix = f"?token={args.token}" if args.token else ""
    print(f"StrataGate is serving on http://{shown}:{port}/{suffix}", flush=True)
    if args.host in WILDCARD_BINDS:
        names = ", ".join(sorted(policy.hosts))
        print(f"Answering to the Host names {names}", file=sys.stderr, flush=True)
    print("Press Ctrl-C to stop.", file=sys.stderr, flush=True)


async def serve_with(children: Children, app: Any, listener: socket.socket) -> None:
    """Serve here while the children run (restarted if they die); stop them after."""
    children.start()
    supervisor = asyncio.create_task(children.supervise())
    try:
        await serve_app(app, listener)
    finally:
        children.stop()
        supervisor.cancel()


def say(step: str) -> None:
    """One stderr line per slow start-up step: a cold first start takes seconds, and
    silence looks like a hang."""
    print(f"{step}…", file=sys.stderr, flush=True)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, opened first so a taken port is one line and port 0 works."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise HostError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    listener.listen(128)
    listener.setblocking(False)
    return listener


def child_database() -> Path | str | None:
    """The parent's ``--db``, handed down in the environment (a URL's password is never
    on a command line others can read)."""
    given = os.environ.get(CHILD_DATABASE)
    return database_location(given) if given else None
