"""One scenario's world: a fresh home and database, the real host with the memory plugin and
the offline agent, sessions on chosen days, and plain reads of what memory then holds.

Turn times come from the harness's clock; the world sets it to the scenario's day (the
agent module's ``utc_now`` and the plugin runtime's idle clock) so a scenario is
multi-day without waiting. Reads go straight to the file with ``sqlite3`` (read-only
checks of state, as the tests' ``plain`` connection does).
"""

import asyncio
import contextlib
import io
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from stratagate_plugin.cli.main import main as cli_main
from stratagate_plugin.harness import agent as agent_module
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.harness.types import Session
from stratagate_plugin.memory_plugin import hooks as plugin
from stratagate_plugin.memory_plugin.offline_agent import OfflineAgent
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime

FIRST_DAY = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)  # a Monday; day N is FIRST_DAY + N - 1
BLOCK_TURN_SIZE = 12  # sessions are sealed when they end, not mid-way


@dataclass
class Event:
    """An event as stored, with its sources' roles and texts."""

    id: str
    status: str
    superseded_by: str | None
    mention_count: int
    text: str  # title, summary and quotes: what the card says
    sources: list[tuple[str, str, str]] = field(default_factory=list)  # (id, role, content)

    @property
    def user_sources(self) -> list[str]:
        return [content for _, role, content in self.sources if role == "user"]

    def says(self, *terms: str) -> bool:
        lowered = self.text.lower()
        return all(term.lower() in lowered for term in terms)


class Clock:
    """The moment the harness and the plugin see; each turn advances it by a minute."""

    def __init__(self) -> None:
        self.now = FIRST_DAY

    def day(self, number: int) -> None:
        self.now = FIRST_DAY + timedelta(days=number - 1)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=30)
        return self.now


@contextlib.contextmanager
def harness_clock(clock: Clock) -> Iterator[None]:
    names = vars(agent_module)  # the agent stamps each turn with its module's utc_now
    saved = names["utc_now"]
    names["utc_now"] = clock
    try:
        yield
    finally:
        names["utc_now"] = saved


class World:
    """``async with World(tmp) as world``: say, end sessions, derive, ask, read events."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.db = root / "memory.db"
        self.cwd = root / "project"
        self.clock = Clock()
        self.sessions: dict[str, Session] = {}
        self._stack = contextlib.ExitStack()
        self.host: Host | None = None
        self.problems: list[str] = []  # what the world itself found wrong (CLI outputs)

    async def __aenter__(self) -> "World":
        self.cwd.mkdir(parents=True, exist_ok=True)
        self._stack.enter_context(home(self.root / "home"))
        self._stack.enter_context(harness_clock(self.clock))
        settings = {"database": str(self.db), "block_turn_size": BLOCK_TURN_SIZE}
        profile = Profile(
            name="truth", plugins=["stratagate-memory"], settings={"stratagate-memory": settings}
        )
        pm = make_plugin_manager([("stratagate-memory", plugin.MemoryPlugin())])
        self.host = Host(pm, profile, cwd=self.cwd)
        await self.host.__aenter__()
        self.runtime.clock = self.clock
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            if self.host is not None:
                await self.host.__aexit__(*exc)
        finally:
            self._stack.close()

    @property
    def runtime(self) -> MemoryRuntime:
        assert self.host is not None
        memory_plugin = self.host.pm.get_plugin("stratagate-memory")
        assert isinstance(memory_plugin, plugin.MemoryPlugin)
        return memory_plugin.runtime

    @property
    def namespace(self) -> str:
        return self.runtime.session_space(self.session("probe"))

    def session(self, name: str) -> Session:
        if name not in self.sessions:
            self.sessions[name] = open_session(name, "truth", self.cwd)
        return self.sessions[name]

    async def say(self, session: str, text: str, day: int | None = None) -> str:
        """One turn of the offline agent; its answer."""
        assert self.host is not None
        if day is not None:
            self.clock.day(day)
        result = await Agent(self.host, OfflineAgent()).run_turn(self.session(session), text)
        if not result.ok:
            raise RuntimeError(f"turn failed: {result.error}")
        return result.answer

    async def end(self, session: str) -> None:
        """The session ends (its tail is sealed), and derivation runs to the end."""
        assert self.host is not None
        await Agent(self.host, OfflineAgent()).end(self.session(session))
        await self.derive()

    async def derive(self) -> None:
        """Every job done: the plugin's worker (kicked by the session's end) finishes its
        pass first, so no job is still in its hands when memory is read."""
        await asyncio.wait_for(self.runtime.idle.wait(), timeout=60)
        await self.runtime.memory.derivation.process_pending()

    async def events(self) -> list[Event]:
        """Every visible event of the space (active and superseded), with its sources."""
        with contextlib.closing(sqlite3.connect(self.db)) as raw:
            rows = raw.execute(
                "SELECT id, status, superseded_by, mention_count, title, summary, quotes_json "
                "FROM events WHERE status IN ('active', 'superseded') ORDER BY pk"
            ).fetchall()
            found = []
            for event_id, status, by, mentions, title, summary, quotes in rows:
                sources = raw.execute(
                    "SELECT m.id, m.role, m.content FROM event_sources s "
                    "JOIN messages m ON m.id = s.message_id WHERE s.event_id = ? "
                    "ORDER BY s.position",
                    (event_id,),
                ).fetchall()
                text = " ".join([title, summary, quotes])
                found.append(Event(event_id, status, by, mentions, text, list(sources)))
        return found

    async def import_text(self, text: str, fmt: str = "auto") -> Any:
        """Preview, analyse and commit an import as the wizard's "commit" does."""
        memory = self.runtime.memory
        job = await memory.imports.preview(self.namespace, text, fmt)
        job = await memory.imports.advance(job.id)
        return await memory.imports.commit(job.id)


class CliWorld(World):
    """The same world driven through the CLI's commands, in this process (a thread each, as
    ``asyncio.run`` needs): ``chat --session S --message``, ``process``, ``import --commit``.
    The database is the home's default; a session's tail is sealed by ``process`` once it
    is idle (its turns are days old by the real clock)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.db = root / "home" / "memory.db"

    async def __aenter__(self) -> "World":
        self.cwd.mkdir(parents=True, exist_ok=True)
        self._stack.enter_context(home(self.root / "home"))
        self._stack.enter_context(harness_clock(self.clock))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._stack.close()

    @property
    def namespace(self) -> str:
        return f"sg:project:{self.cwd.resolve()}"

    async def say(self, session: str, text: str, day: int | None = None) -> str:
        if day is not None:
            self.clock.day(day)
        return await self.cli("chat", "--session", session, "--message", text)

    async def end(self, session: str) -> None:
        await self.derive()

    async def derive(self) -> None:
        await self.cli("process")

    async def events(self) -> list[Event]:
        """The events as ``stratagate events --json`` lists them, each with the sources
        ``stratagate show ID --json`` gives; a card whose ``show`` names other sources than
        its ``source_message_ids`` is a problem."""
        found = []
        for card in json.loads(await self.cli("events", "--json")):
            shown = json.loads(await self.cli("show", card["id"], "--json"))
            sources = [
                (m["id"], m["role"], m["content"])
                for m in (source["message"] for source in shown["sources"])
            ]
            if [source_id for source_id, _, _ in sources] != card["source_message_ids"]:
                self.problems.append(f"`show {card['id']}` lists other sources than the card")
            text = " ".join(
                [card["title"], card["summary"], json.dumps(card["quotes"], ensure_ascii=False)]
            )
            found.append(
                Event(
                    card["id"],
                    card["status"],
                    card["superseded_by"],
                    card["mention_count"],
                    text,
                    sources,
                )
            )
        return found

    async def import_text(self, text: str, fmt: str = "auto") -> Any:
        path = self.root / "import.txt"
        path.write_text(text, encoding="utf-8")
        return await self.cli("import", str(path), "--format", fmt, "--commit")

    async def cli(self, *argv: str) -> str:
        """Run one command; its stdout (a failing command raises with its stderr)."""
        return await asyncio.to_thread(self._cli, list(argv))

    def _cli(self, argv: list[str]) -> str:
        out, err = io.StringIO(), io.StringIO()
        saved = Path.cwd()
        os.chdir(self.cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli_main(argv)
        finally:
            os.chdir(saved)
        if code != 0:
            why = self._failed_jobs() if argv[0] == "process" else ""
            raise RuntimeError(f"stratagate {argv[0]} exited {code}: {err.getvalue().strip()}{why}")
        return out.getvalue().strip()

    def _failed_jobs(self) -> str:
        """Why ``process`` left jobs failed (``jobs --failed``): a rare failure under load
        must say its cause the first time it is seen."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            cli_main(["jobs", "--failed"])
        return f"\n`stratagate jobs --failed`:\n{out.getvalue().strip()}"


@contextlib.contextmanager
def home(path: Path) -> Iterator[None]:
    saved = os.environ.get("STRATAGATE_HOME")
    os.environ["STRATAGATE_HOME"] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("STRATAGATE_HOME", None)
        else:
            os.environ["STRATAGATE_HOME"] = saved
