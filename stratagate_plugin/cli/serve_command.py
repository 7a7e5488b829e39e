"""``stratagate serve``: the reference harness as a local web app (chat and plugin pages).

One process: the host with its plugins (the memory plugin's background worker included),
and uvicorn serving the app on 127.0.0.1 unless told otherwise. Any other address needs an
access token, and the URL printed carries it once (it is then kept in a cookie). The app
answers to the names the server is reached by (for ``0.0.0.0``, the machine's own name and
addresses and loopback) and to each ``--allowed-host``; any other Host is refused.
"""

import argparse
import os
import socket
import sys
from typing import Any

import uvicorn

from ..harness.errors import HostError
from ..harness.pm import await_me_maybe
from ..harness.profiles import DEFAULT_PROFILE, load_profile
from ..harness.runtime import Host
from ..web.shell.app import build_app
from ..web.shell.security import WILDCARD_BINDS, policy_for
from .chat_command import chat_model

DEFAULT_PORT = 8377


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
    parser.set_defaults(handler=run_serve)


async def run_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("STRATAGATE_WEB_TOKEN") or None
    try:
        policy = policy_for(args.host, token, args.allowed_hosts)
    except ValueError as error:
        raise HostError(str(error)) from error
    listener = bind(args.host, args.port)
    profile = load_profile(args.profile)
    say(f"loading the plugins of profile {profile.name!r}")
    host = Host.from_profile(profile)
    say("starting the plugins (opening and migrating the memory database)")
    async with host:
        model = await chat_model(host)
        try:
            say("building the web app")
            app = await build_app(host, model, policy)
            config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
            port = listener.getsockname()[1]
            shown = f"[{args.host}]" if ":" in args.host else args.host
            suffix = f"?token={token}" if token else ""
            print(f"StrataGate is serving on http://{shown}:{port}/{suffix}", flush=True)
            if args.host in WILDCARD_BINDS:
                names = ", ".join(sorted(policy.hosts))
                print(f"Answering to the Host names {names}", file=sys.stderr, flush=True)
            print("Press Ctrl-C to stop.", file=sys.stderr, flush=True)
            await uvicorn.Server(config).serve(sockets=[listener])
        finally:
            await await_me_maybe(getattr(model, "aclose", lambda: None)())
    return 0


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
