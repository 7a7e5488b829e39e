"""``serve``'s other processes: more web processes on the same socket, and the worker.

One Python process holds one GIL: every page's template, its rows turned into records and
the redaction, and the derivation worker's graph and topic jobs, all queued for it, so 8
clients waited on one core however many the machine had (issue 29). ``serve`` therefore
starts, once its own host has opened and migrated the database:

- ``--processes`` − 1 more web processes, each accepting on the inherited listening socket
  (as uvicorn's own ``--workers`` do): each has its own host and engine over the same file
  (SQLite WAL: readers in parallel, writes serialised on the file);
- one derivation process at lower CPU priority (``os.nice``), which runs the plugin's worker.
  The web processes run none: a kick (a turn recorded, a retry) is a byte on a pipe the
  worker process reads (``MemoryRuntime.kick_pipe``), so a turn is derived at once, not at
  the next poll.

A child is the same ``stratagate serve`` command with a hidden ``--child`` role, started
the way this process was (``sys.orig_argv``: a launcher script, ``-m``, or the installed
executable). Each reads its stdin, a pipe from this process, and stops when it closes: a
child dies with the parent however the parent ends. A child that dies is started again
(said on stderr, backing off when it keeps dying); one that ends itself with status 0 (a
profile without the memory plugin has no worker to run) is left ended.
"""

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

WORKER_NICENESS = 10
SUPERVISE_EVERY_S = 0.25
STOP_GRACE_S = 8.0
MAX_RESTART_DELAY_S = 30.0
STEADY_S = 60.0  # a child up this long has stopped dying: its next restart is immediate
MAX_PROCESSES = 64  # web processes at most (each takes a slot on the database's board)
CHILD_DATABASE = "STRATAGATE_SERVE_DATABASE"  # serve's --db, as its children receive it


@dataclass
class Child:
    """One child process: its role (``web`` or ``worker``), how to start it, and when."""

    role: str
    command: list[str]
    fds: tuple[int, ...]
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    failures: int = 0
    due: float = 0.0  # not before (monotonic): the back-off of a child that keeps dying

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            pass_fds=self.fds,
            env=self.env,
            start_new_session=True,  # the parent stops it: a Ctrl-C reaches the parent only
        )
        self.started = time.monotonic()

    def ended(self) -> int | None:
        """Its exit status once it ended (a negative signal number when killed), else None."""
        return None if self.process is None else self.process.poll()


@dataclass
class Children:
    """The children of one ``serve``, kept running until ``stop``."""

    children: list[Child]
    say: Callable[[str], None] = field(default=lambda line: None)
    stopping: bool = False

    def start(self) -> None:
        for child in self.children:
            child.start()

    async def supervise(self) -> None:
        """Restart each child that died, until ``stop``; a wait on the children's status,
        polled (a few system calls a second), never a sleep a test has to race."""
        while not self.stopping:
            for child in self.children:
                self._restart_if_dead(child)
            await asyncio.sleep(SUPERVISE_EVERY_S)

    def _restart_if_dead(self, child: Child) -> None:
        status = child.ended()
        if status is None or self.stopping or (status == 0 and child.role == "worker"):
            return
        now = time.monotonic()
        if child.due == 0.0:
            steady = now - child.started >= STEADY_S
            child.failures = 0 if steady else child.failures + 1
            child.due = now + min(MAX_RESTART_DELAY_S, 2.0**child.failures - 1)
            self.say(f"the {describe(child.role)} exited ({exit_text(status)}); starting it again")
        if now >= child.due:
            child.due = 0.0
            child.start()

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Close every child's stdin (its signal to stop) and wait; kill what is left."""
        self.stopping = True
        running = [c.process for c in self.children if c.process and c.process.poll() is None]
        for process in running:
            with contextlib.suppress(OSError):
                process.stdin.close() if process.stdin else None
        deadline = time.monotonic() + grace_s
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def pids(self, role: str) -> list[int]:
        """The running children of ``role`` (a test kills one to see it restarted)."""
        return [c.process.pid for c in self.children if c.role == role and c.process]


def describe(role: str) -> str:
    return "derivation worker process" if role == "worker" else "web process"


def exit_text(status: int) -> str:
    return f"signal {-status}" if status < 0 else f"status {status}"


def spawn_children(
    args: argparse.Namespace, listener: socket.socket, kick_read: int | None, kick_write: int
) -> Children:
    """The worker (when ``kick_read`` is given) and ``args.processes`` − 1 web processes."""
    env = dict(os.environ)
    if args.token:
        env["STRATAGATE_WEB_TOKEN"] = args.token  # never on a command line others can read
    if args.db is not None:
        env[CHILD_DATABASE] = str(args.db)  # nor a database's password
    children = []
    if kick_read is not None:
        children.append(
            Child("worker", child_command(args, f"worker:{kick_read}"), (kick_read,), env)
        )
    for _ in range(1, args.processes):
        web = f"web:{listener.fileno()}:{kick_write}"
        children.append(
            Child("web", child_command(args, web), (listener.fileno(), kick_write), env)
        )
    return Children(
        children, say=lambda line: print(f"stratagate serve: {line}", file=sys.stderr, flush=True)
    )


def child_command(args: argparse.Namespace, role: str) -> list[str]:
    """``serve`` in the given role, started as this process was (the interpreter and its
    options, then ``-m module``, a script or the installed executable)."""
    launcher = sys.orig_argv[: len(sys.orig_argv) - len(sys.argv) + 1]
    command = [*launcher, "serve", "--profile", args.profile, "--host", args.host]
    command += ["--processes", str(args.processes)]
    for name in args.allowed_hosts:
        command += ["--allowed-host", name]
    if args.shared is not None:
        command += ["--shared", str(args.shared)]
    return [*command, "--child", role]


def parse_role(role: str) -> tuple[str, list[int]]:
    """``web:LISTEN:KICK`` or ``worker:KICK``: the role and its inherited descriptors."""
    name, *numbers = role.split(":")
    if name not in ("web", "worker") or len(numbers) != (2 if name == "web" else 1):
        raise ValueError(f"not a serve child role: {role!r}")
    return name, [int(number) for number in numbers]


def lower_priority() -> None:
    """The worker yields the CPU to the web processes (best effort: a container may refuse)."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
