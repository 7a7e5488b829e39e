"""``stratagate chat``: the reference harness's agent loop, interactive or one ``--message``.

With a ``model`` in the profile (or ``STRATAGATE_BASE_URL`` + ``STRATAGATE_MODEL``) the agent
talks to that OpenAI-compatible server; without one it uses the offline agent
(``stratagate_plugin.memory_plugin.offline_agent.create_chat_model``) when that module
exists, else an echo model.

Plugins describe the session as it opens (the memory plugin: which memory space it uses
and how much it holds). Leaving an interactive chat (``/exit``, ``/quit``, Ctrl-D) ends
the session, and plugins hear of it (``session_ended``: memory seals the open tail). A
``--message`` turn does not end its session, which the next ``--session`` run continues;
the memory plugin seals such a tail once it has been idle.
"""

import argparse
import asyncio
import contextlib
import importlib
import os
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from ..core.llm.select import http_config, resolve_model_settings
from ..harness.agent import Agent
from ..harness.chat import ChatModel, EchoChatModel
from ..harness.errors import HostError
from ..harness.pm import await_me_maybe
from ..harness.profiles import DEFAULT_PROFILE, load_profile
from ..harness.runtime import Host
from ..harness.sessions import open_session
from ..harness.types import Session
from ..memory_plugin.chat_model import HttpChatModel
from .common import add_db_option, plugin_database

OFFLINE_AGENT = "stratagate_plugin.memory_plugin.offline_agent"
EXIT_COMMANDS = ("/exit", "/quit")


def register(commands: Any) -> None:
    parser = commands.add_parser("chat", help="talk to the agent (interactive, or one --message)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="profile (default: %(default)s)")
    parser.add_argument("--session", default=None, help="session id to continue (default: new)")
    parser.add_argument("--message", default=None, help="run one turn with this text, then exit")
    add_db_option(parser)
    parser.set_defaults(handler=run_chat)


async def run_chat(args: argparse.Namespace) -> int:
    if args.message is not None and not args.message.strip():
        raise HostError("--message is empty")
    with plugin_database(args.db):
        return await chat(args)


async def chat(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    session = open_session(args.session, profile.name, Path.cwd())
    async with Host.from_profile(profile) as host:
        model = await chat_model(host)
        try:
            print(f"[session {session.id}; model {model.name}]", file=sys.stderr)
            agent = Agent(host, model)
            warn(await agent.start(session))
            for note in await agent.describe(session):
                print(f"[{note}]", file=sys.stderr)
            if args.message is not None:
                return await one_turn(agent, session, args.message)
            code = await interactive(agent, session)
            warn(await agent.end(session))
            return code
        finally:
            await await_me_maybe(getattr(model, "aclose", lambda: None)())


async def chat_model(host: Host) -> ChatModel:
    """The HTTP model the profile (else ``STRATAGATE_BASE_URL``…) names, resolved as every
    other command resolves it; else the offline agent, else the echo fallback."""
    named = host.profile.model.model_dump() if host.profile.model is not None else {}
    values = resolve_model_settings(named, os.environ)
    if values:
        return HttpChatModel(http_config(values))
    try:
        module = importlib.import_module(OFFLINE_AGENT)
    except ModuleNotFoundError as error:
        if error.name != OFFLINE_AGENT:
            raise
        return EchoChatModel()
    return cast(ChatModel, await await_me_maybe(module.create_chat_model(host)))


def warn(warnings: Sequence[str]) -> None:
    for warning in warnings:
        print(f"stratagate: warning: {warning}", file=sys.stderr)


HELP = """\
/help     this list
/space    which memory space this chat uses, and how much it holds
/exit     leave (also /quit or Ctrl-D); the session's last turns are sealed into memory
Anything else is a message to the agent."""
_COMMAND = re.compile(r"/[A-Za-z]+")


def slash_command(text: str) -> str | None:
    """The command a line is (``/help``), or None for a message: a line is a command when it
    is one slash word, so "/etc/hosts is broken" is still a message."""
    return text.lower() if _COMMAND.fullmatch(text) else None


async def run_command(agent: Agent, session: Session, command: str) -> str:
    """What a slash command prints; handled here, so it is never a turn nor remembered."""
    if command == "/help":
        return HELP
    if command == "/space":
        notes = await agent.describe(session)
        return "\n".join(notes) or "no plugin keeps memory in this profile"
    return f"unknown command {command}; /help lists the commands"


async def one_turn(agent: Agent, session: Session, text: str) -> int:
    command = slash_command(text.strip())
    if command is not None and command not in EXIT_COMMANDS:
        print(await run_command(agent, session, command))
        return 0
    if command is not None:
        return 0
    result = await agent.run_turn(session, text)
    warn(result.warnings)
    if not result.ok:
        print(f"stratagate: turn failed: {result.error}", file=sys.stderr)
        return 1
    print(result.answer)
    return 0


async def interactive(agent: Agent, session: Session) -> int:
    _enable_line_editing()
    print(f"Type a message; {' or '.join(EXIT_COMMANDS)} or Ctrl-D to quit.", file=sys.stderr)
    while True:
        try:
            text = (await read_line("you> ")).strip()
        except EOFError:
            print(file=sys.stderr)
            return 0
        command = slash_command(text)
        if command in EXIT_COMMANDS:
            return 0
        if command is not None:
            print(await run_command(agent, session, command))
        elif text:
            result = await agent.run_turn(session, text)
            print(result.answer if result.ok else f"[turn failed: {result.error}]")
            warn(result.warnings)


async def read_line(prompt: str) -> str:
    """``input()`` on a daemon thread, so plugins' background tasks keep running meanwhile
    and Ctrl-C does not leave the process waiting for a line."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(value: str | BaseException) -> None:
        if future.done():
            return
        if isinstance(value, BaseException):
            future.set_exception(value)
        else:
            future.set_result(value)

    def read() -> None:
        try:
            value: str | BaseException = input(prompt)
        except (EOFError, KeyboardInterrupt) as error:
            value = error
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, value)

    threading.Thread(target=read, daemon=True).start()
    return await future


def _enable_line_editing() -> None:
    """Importing ``readline`` gives ``input()`` history and line editing where available."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401
