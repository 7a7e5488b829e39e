"""Host hooks: docs, specs and plugin.yml agree, and each hook is exercised by a tiny plugin."""

import inspect
import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import pluggy
import pytest
import yaml
from pydantic import Field

from stratagate_plugin.harness import hookspecs
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.chat import ChatMessage, ScriptedChatModel, tool_reply
from stratagate_plugin.harness.errors import HostError
from stratagate_plugin.harness.hookspecs import hookimpl
from stratagate_plugin.harness.pm import call_hook, make_plugin_manager
from stratagate_plugin.harness.profiles import Profile, load_profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session, session_path
from stratagate_plugin.harness.types import (
    ContextSection,
    HostTurn,
    Session,
    SettingsSection,
    StopDecision,
    ToolCallContext,
    TurnState,
)

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^## `(\w+)\((.*)\)`$", re.MULTILINE)


def spec_signatures() -> dict[str, str]:
    specs = {
        name: fn
        for name, fn in vars(hookspecs).items()
        if inspect.isfunction(fn) and hasattr(fn, "stratagate_spec")
    }
    return {name: ", ".join(inspect.signature(fn).parameters) for name, fn in specs.items()}


def make_host(tmp_path: Path, *plugins: object) -> Host:
    """A fresh plugin manager with only the default plugins and ``plugins``."""
    pm = make_plugin_manager((f"test-plugin-{i}", plugin) for i, plugin in enumerate(plugins))
    return Host(pm, Profile(name="test"), cwd=tmp_path)


def session(tmp_path: Path) -> Session:
    return open_session("s1", "test", tmp_path)


# -- docs, specs, manifest -------------------------------------------------------------


def test_hooks_docs_match_the_specs_exactly() -> None:
    documented = dict(HEADING.findall((ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")))
    assert documented == spec_signatures()


def test_hooks_manifest_names_only_real_hooks() -> None:
    manifest = yaml.safe_load((ROOT / "plugin.yml").read_text(encoding="utf-8"))
    assert set(manifest["hooks"]) <= set(spec_signatures())


def test_hooks_every_hook_has_a_test() -> None:
    source = "".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py"))
    for name in spec_signatures():
        assert re.search(rf"def test_hook_{name}_\w+", source), f"no test_hook_{name}_* test"


def test_hooks_specs_have_one_line_docstrings() -> None:
    for name in spec_signatures():
        doc = getattr(hookspecs, name).__doc__
        assert doc and "\n" not in doc.strip(), name


def test_hooks_unknown_implementation_is_caught_by_check_pending() -> None:
    class Typo:
        @hookimpl
        def turn_complete(self, turn: HostTurn) -> None: ...

    pm = make_plugin_manager()
    pm.register(Typo())
    with pytest.raises(pluggy.PluginValidationError):
        pm.check_pending()


async def test_hooks_wrappers_are_refused() -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def startup(self, host: Host) -> Any:
            return (yield)

    with pytest.raises(TypeError, match="wrappers"):
        await call_hook(make_plugin_manager([("w", Wrapper())]), "startup", host=None)


# -- one test (at least) per hook ------------------------------------------------------


async def test_hook_register_settings_defaults_overlaid_by_profile(tmp_path: Path) -> None:
    class Settings:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(SettingsSection("demo", "Demo", defaults={"size": 6, "mode": "project"}))

    host = make_host(tmp_path, Settings())
    host.profile = load_profile("test")
    host.profile.settings["demo"] = {"size": 3}
    async with host:
        assert host.settings("demo") == {"size": 3, "mode": "project"}
        assert host.save_settings("demo", {"mode": "global"})["mode"] == "global"
    assert load_profile("test").settings == {"demo": {"size": 3, "mode": "global"}}


async def test_hook_startup_async_is_awaited_and_failures_shut_down(tmp_path: Path) -> None:
    events: list[str] = []

    class Good:
        @hookimpl(tryfirst=True)
        async def startup(self) -> None:
            events.append("good up")

        @hookimpl
        async def shutdown(self) -> None:
            events.append("good down")

    class Broken:
        @hookimpl(trylast=True)
        def startup(self) -> None:
            raise RuntimeError("no database")

    host = make_host(tmp_path, Good(), Broken())
    with pytest.raises(RuntimeError, match="no database"):
        await host.start()
    assert events == ["good up", "good down"]


async def test_hook_register_tools_typed_function_becomes_a_tool(tmp_path: Path) -> None:
    seen: list[ToolCallContext] = []

    async def lookup(
        query: str,
        call: ToolCallContext,
        limit: Annotated[int, Field(ge=1, le=20, description="how many")] = 5,
        scope: Literal["session", "namespace"] = "session",
    ) -> dict[str, Any]:
        """Find things."""
        seen.append(call)
        return {"query": query, "limit": limit, "scope": scope}

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(lookup)

    async with make_host(tmp_path, Tools()) as host:
        tool = host.tools["lookup"]
        assert tool.description == "Find things."
        assert tool.parameters["required"] == ["query"]
        assert tool.parameters["properties"]["limit"]["maximum"] == 20
        assert tool.parameters["properties"]["scope"]["enum"] == ["session", "namespace"]
        assert "call" not in tool.parameters["properties"]
        model = ScriptedChatModel.of(tool_reply("lookup", {"query": "kiln"}, "c9"), "done")
        await Agent(host, model).run_turn(session(tmp_path), "find kiln")
    assert (seen[0].call_id, seen[0].turn, seen[0].session.id) == ("c9", 1, "s1")
    assert json.loads(model.requests[1].messages[-1].text)["limit"] == 5


async def test_hook_register_tools_duplicate_names_are_an_error(tmp_path: Path) -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(ping)

    with pytest.raises(HostError, match="ping"):
        await make_host(tmp_path, Tools(), Tools()).start()


async def test_hook_build_context_sections_ordered_and_placed(tmp_path: Path) -> None:
    class Context:
        @hookimpl
        async def build_context(self, user_message: str) -> list[ContextSection]:
            return [
                ContextSection(id="b:memory", text=f"memory for {user_message}", order=113),
                ContextSection(id="a:profile", text="profile", order=50),
                ContextSection(id="c:note", text="user note", role="user", order=1),
            ]

    class Broken:
        @hookimpl
        def build_context(self) -> None:
            raise RuntimeError("index missing")

    model = ScriptedChatModel.of("ok")
    async with make_host(tmp_path, Context(), Broken()) as host:
        result = await Agent(host, model).run_turn(session(tmp_path), "hi")
    assert result.ok
    system, note, user = model.requests[0].messages
    assert system.text.split("\n\n")[1:] == ["profile", "memory for hi"]
    assert (note.text, note.source, user.text, user.source) == ("user note", "host", "hi", "user")


async def test_hook_build_history_replacement_is_sent_instead(tmp_path: Path) -> None:
    class Compact:
        @hookimpl
        def build_history(self, history: list[ChatMessage]) -> list[ChatMessage] | None:
            if not history:
                return None
            return [ChatMessage(role="user", content="[summary of earlier turns]", source="plugin")]

    model = ScriptedChatModel.of("first", "second")
    async with make_host(tmp_path, Compact()) as host:
        await Agent(host, model).run_turn(session(tmp_path), "one")
        await Agent(host, model).run_turn(session(tmp_path), "two")
    first, second = (request.messages for request in model.requests)
    assert [m.text for m in first if m.role != "system"] == ["one"]
    assert [m.text for m in second if m.role != "system"] == ["[summary of earlier turns]", "two"]
    stored = session(tmp_path).history
    assert [m.text for m in stored] == ["one", "first", "two", "second"]  # file unchanged


async def test_hook_turn_stopping_steer_then_allow(tmp_path: Path) -> None:
    class Finish:
        @hookimpl
        def turn_stopping(self, state: TurnState) -> StopDecision | None:
            return StopDecision.steer("close batch_1 first") if state.stops == 0 else None

    model = ScriptedChatModel.of("draft", "final")
    async with make_host(tmp_path, Finish()) as host:
        result = await Agent(host, model).run_turn(session(tmp_path), "q")
    assert result.answer == "final"
    steer = model.requests[1].messages[-1]
    assert (steer.role, steer.source, steer.text) == ("user", "plugin", "close batch_1 first")


async def test_hook_turn_completed_after_the_turn_is_on_disk(tmp_path: Path) -> None:
    received: list[tuple[HostTurn, int]] = []

    class Recorder:
        @hookimpl
        async def turn_completed(self, session: Session, turn: HostTurn) -> None:
            lines = session_path(session.id).read_text(encoding="utf-8").splitlines()
            received.append((turn, len(lines)))

    class Broken:
        @hookimpl(tryfirst=True)
        def turn_completed(self) -> None:
            raise RuntimeError("ingest failed")

    async with make_host(tmp_path, Recorder(), Broken()) as host:
        result = await Agent(host, ScriptedChatModel.of("hello")).run_turn(session(tmp_path), "hi")
    [(turn, lines)] = received
    assert result.ok and lines == 4
    assert (turn.user, turn.assistant, turn.turn, turn.session_id) == ("hi", "hello", 1, "s1")


async def test_hook_turn_completed_returned_text_is_a_warning_for_the_user(
    tmp_path: Path,
) -> None:
    class Warner:
        @hookimpl
        async def turn_completed(self, turn: HostTurn) -> str:
            return f"turn {turn.turn} waits"

    async with make_host(tmp_path, Warner()) as host:
        result = await Agent(host, ScriptedChatModel.of("hello")).run_turn(session(tmp_path), "hi")
    assert result.ok and result.warnings == ("turn 1 waits",)


async def test_hook_session_started_sees_the_turns_of_the_session_file(tmp_path: Path) -> None:
    seen: list[list[tuple[int, str]]] = []

    class Watcher:
        @hookimpl
        def session_started(self, session: Session) -> str | None:
            seen.append([(turn.turn, turn.user) for turn in session.completed])
            return "memory is behind" if session.completed else None

    async with make_host(tmp_path, Watcher()) as host:
        agent = Agent(host, ScriptedChatModel.of("one", "two"))
        assert await agent.start(session(tmp_path)) == []
        first = session(tmp_path)
        await agent.run_turn(first, "hi")
        await agent.run_turn(first, "again")
        assert await agent.start(session(tmp_path)) == ["memory is behind"]
    assert seen == [[], [(1, "hi"), (2, "again")]]


async def test_hook_describe_session_lines_are_notes_and_failures_are_skipped(
    tmp_path: Path,
) -> None:
    class Describer:
        @hookimpl
        async def describe_session(self, session: Session) -> str:
            return f"{session.id} uses space x"

    class Broken:
        @hookimpl(tryfirst=True)
        def describe_session(self) -> str:
            raise RuntimeError("no database")

    class Silent:
        @hookimpl
        def describe_session(self) -> None:
            return None

    async with make_host(tmp_path, Describer(), Broken(), Silent()) as host:
        agent = Agent(host, ScriptedChatModel.of())
        assert await agent.describe(session(tmp_path)) == ["s1 uses space x"]


async def test_hook_session_ended_only_when_the_agent_ends_the_session(tmp_path: Path) -> None:
    ended: list[tuple[str, int]] = []

    class Watcher:
        @hookimpl
        def session_ended(self, session: Session) -> str:
            ended.append((session.id, len(session.completed)))
            return "tail sealed later"

    async with make_host(tmp_path, Watcher()) as host:
        agent = Agent(host, ScriptedChatModel.of("one"))
        first = session(tmp_path)
        await agent.start(first)
        await agent.run_turn(first, "hi")
        assert ended == []  # a turn, even the last one, does not end the session
        assert await agent.end(session(tmp_path)) == ["tail sealed later"]
    assert ended == [("s1", 1)]


async def test_hook_shutdown_every_plugin_runs_despite_failures(tmp_path: Path) -> None:
    closed: list[str] = []

    class Broken:
        @hookimpl(tryfirst=True)
        def shutdown(self) -> None:
            raise RuntimeError("close failed")

    class Closer:
        @hookimpl
        async def shutdown(self, host: Host) -> None:
            closed.append(host.name)

    async with make_host(tmp_path, Broken(), Closer()):
        pass
    assert closed == ["stratagate-harness"]
