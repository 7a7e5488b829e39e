"""What a child of ``serve`` runs (``cli/serve_processes.py`` starts them).

- ``web``: the host and the web app, served on the listening socket the parent opened; its
  plugin runtime derives nothing (kicks go down the pipe to the worker process).
- ``worker``: the host with the plugin's derivation worker and nothing else, at lower CPU
  priority; every byte on the kick pipe is a kick.

Both stop on SIGTERM or SIGINT, or when their stdin (a pipe from the parent) closes: the
parent stopped, or died.
"""

import argparse
import asyncio
import os
import signal
import socket
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from ..harness.pm import await_me_maybe
from ..harness.profiles import load_profile
from ..harness.runtime import Host
from ..memory_plugin.runtime import MemoryRuntime
from ..web.shell.app import build_app
from ..web.shell.security import GuardPolicy
from .chat_command import chat_model
from .common import settle_heap
from .serve_processes import lower_priority, parse_role

MEMORY_PLUGIN = "stratagate-memory"
HANDOFF = "handoff"  # the one-time tokens' folder in it


def handoff_folder(args: argparse.Namespace) -> Path | None:
    """Where the web processes' one-time tokens wait: shared by several, else in process."""
    if args.shared is None or args.processes < 2:
        return None
    folder: Path = args.shared / HANDOFF
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


class Server(uvicorn.Server):
    """uvicorn's server, stopped by whoever runs it: its own signal capture re-raises the
    signal once it has stopped (a SIGTERM then kills the process before the host closes)."""

    @contextmanager
    def capture_signals(self) -> Any:
        yield


@contextmanager
def stopped_by_signals(stop: Callable[[], None]) -> Any:
    """SIGINT and SIGTERM call ``stop`` while the block runs (a second SIGINT: the default)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def watch(fd: int, on_data: Callable[[], None], on_end: Callable[[], None]) -> None:
    """``on_data`` at each read of ``fd`` (a pipe; whatever it held: one call), ``on_end``
    once it reads end-of-file (every writer gone: the parent stopped or died)."""
    loop = asyncio.get_running_loop()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        if data:
            on_data()
        else:
            loop.remove_reader(fd)
            on_end()

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)


def nothing() -> None:
    """What a byte on a child's stdin does (only its end means something)."""


async def serve_app(app: Any, listener: socket.socket, child: bool = False) -> None:
    """uvicorn on ``listener`` until SIGINT/SIGTERM (a second signal: stop at once) or,
    for a ``child``, until its stdin closes."""
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    server = Server(config)

    def stop() -> None:
        server.force_exit = server.should_exit
        server.should_exit = True

    with stopped_by_signals(stop):
        if child:
            watch(0, nothing, stop)
        settle_heap()
        await server.serve(sockets=[listener])


async def run_child(args: argparse.Namespace, policy: GuardPolicy) -> int:
    role, fds = parse_role(args.child)
    if role == "worker":
        return await run_worker(args, fds[0])
    return await run_web(args, policy, fds[0], fds[1])


async def run_web(args: argparse.Namespace, policy: GuardPolicy, listen: int, kick: int) -> int:
    MemoryRuntime.kick_pipe = kick
    host = Host.from_profile(load_profile(args.profile))
    async with host:
        model = await chat_model(host)
        try:
            app = await build_app(host, model, policy, handoff_folder(args))
            await serve_app(app, socket.socket(fileno=listen), child=True)
        finally:
            await await_me_maybe(getattr(model, "aclose", lambda: None)())
    return 0


async def run_worker(args: argparse.Namespace, kick: int) -> int:
    """The plugin's worker until stopped; status 0 at once when the profile has no memory
    plugin (the parent then leaves it ended)."""
    lower_priority()
    host = Host.from_profile(load_profile(args.profile))
    async with host:
        plugin = host.pm.get_plugin(MEMORY_PLUGIN)
        if plugin is None:
            return 0
        runtime: MemoryRuntime = plugin.runtime
        stopped = asyncio.Event()
        watch(kick, runtime.kick, stopped.set)
        watch(0, nothing, stopped.set)
        with stopped_by_signals(stopped.set):
            await stopped.wait()
    return 0
