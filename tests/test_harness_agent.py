"""The agent loop driven by a scripted model: tools, step bound, finish step, folding."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.harness.agent import Agent, assemble
from stratagate_plugin.harness.chat import (
    ChatMessage,
    ChatModelError,
    ScriptedChatModel,
    ToolCall,
    text_reply,
    tool_reply,
)
from stratagate_plugin.harness.folding import fold_turn
from stratagate_plugin.harness.hookspecs import hookimpl
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session, read_session, session_path
from stratagate_plugin.harness.types import ContextSection, StopDecision, ToolTrace, TurnState

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
T1 = datetime(2026, 1, 1, 9, 1, tzinfo=UTC)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def explode() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)
        register(explode)


class Stopper:
    """Answers ``turn_stopping`` from a list of decisions, one per stop."""

    def __init__(self, *decisions: StopDecision) -> None:
        self.decisions = list(decisions)

    @hookimpl
    def turn_stopping(self, state: TurnState) -> StopDecision | None:
        return self.decisions.pop(0) if self.decisions else None


async def run(
    tmp_path: Path, model: ScriptedChatModel, *plugins: object, max_steps: int = 24
) -> tuple[Any, Host]:
    pm = make_plugin_manager((f"p{i}", plugin) for i, plugin in enumerate((Tools(), *plugins)))
    async with Host(pm, Profile(name="t"), cwd=tmp_path) as host:
        session = open_session("s1", "t", tmp_path)
        result = await Agent(host, model, max_steps=max_steps).run_turn(session, "question")
    return result, host


async def test_agent_dispatches_tool_calls_and_feeds_results_back(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(tool_reply("add", {"a": 2, "b": 3}, "c1"), "It is 5.")
    result, _ = await run(tmp_path, model)
    assert result.answer == "It is 5." and result.ok
    assert {t.name for t in model.requests[0].tools} == {"add", "explode"}
    tool_message = model.requests[1].messages[-1]
    assert (tool_message.role, tool_message.tool_call_id, tool_message.text) == ("tool", "c1", "5")
    assert result.folded.tool_calls == (
        ToolTrace(name="add", arguments={"a": 2, "b": 3}, result=5),
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (tool_reply("explode", {}), "Error: explode failed: disk on fire"),
        (tool_reply("nope", {}), "Error: unknown tool 'nope' (available tools: add, explode)"),
        (tool_reply("add", {"a": 1}), "Error: invalid arguments for add: b: Field required"),
        (tool_reply("add", "{not json"), "Error: invalid arguments for add: arguments are not"),
        (tool_reply("add", {"a": 1, "b": 2, "c": 3}), "c: Extra inputs are not permitted"),
    ],
)
async def test_agent_tool_errors_go_back_to_the_model_as_text(
    tmp_path: Path, reply: ChatMessage, expected: str
) -> None:
    model = ScriptedChatModel.of(reply, "sorry")
    result, _ = await run(tmp_path, model)
    assert result.ok and result.answer == "sorry"
    assert expected in model.requests[1].messages[-1].text


async def test_agent_bounds_the_number_of_steps(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(*[tool_reply("add", {"a": 1, "b": 1}, f"c{i}") for i in range(9)])
    result, _ = await run(tmp_path, model, max_steps=3)
    assert result.error == "stopped after 3 model steps without an answer"
    assert len(model.requests) == 3
    assert result.folded is not None and result.folded.outcome == "failed"


async def test_agent_model_error_fails_the_turn_but_records_it(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(ChatModelError("no answer within 5 s"))
    result, _ = await run(tmp_path, model)
    assert result.error == "model call failed: no answer within 5 s"
    assert result.folded is not None and result.folded.assistant.startswith("Turn ended: model")
    assert read_session(session_path("s1")).turns == 1


async def test_agent_fail_decision_ends_the_turn(tmp_path: Path) -> None:
    stopper = Stopper(StopDecision.fail("StrataGate retrieval cleanup made no progress"))
    result, _ = await run(tmp_path, ScriptedChatModel.of("answer"), stopper)
    assert result.error == "StrataGate retrieval cleanup made no progress"


async def test_agent_strictest_decision_wins(tmp_path: Path) -> None:
    plugins = (Stopper(StopDecision.steer("close batches")), Stopper(StopDecision.fail("stuck")))
    result, _ = await run(tmp_path, ScriptedChatModel.of("answer"), *plugins)
    assert result.error == "stuck"


async def test_agent_recovery_step_has_no_tools_and_retries(tmp_path: Path) -> None:
    stopper = Stopper(StopDecision.steer("record use of batch_1"), StopDecision.recover("Restate."))
    model = ScriptedChatModel.of(
        "Looking.",
        tool_reply("add", {"a": 1, "b": 1}, "c1"),
        "Closed.",
        text_reply(""),
        ChatMessage(role="assistant", content="The full ans", finish_reason="length"),
        "The full answer.",
    )
    result, _ = await run(tmp_path, model, stopper)
    assert result.ok and result.answer == "The full answer."
    recovery = model.requests[3:]
    assert [request.tools for request in recovery] == [[], [], []]
    assert recovery[0].messages[-1].text == "Restate."
    assert (
        "previous attempt was not accepted: the answer was empty" in recovery[1].messages[-1].text
    )
    assert "cut off" in recovery[2].messages[-1].text
    assert "The full ans\n" not in result.folded.assistant


async def test_agent_recovery_fails_after_three_attempts(tmp_path: Path) -> None:
    stopper = Stopper(StopDecision.recover("Restate."))
    model = ScriptedChatModel.of("draft", "", tool_reply("add", {}), "   ")
    result, _ = await run(tmp_path, model, stopper)
    assert result.error == "final answer recovery failed after 3 attempts: the answer was empty"
    assert len(model.requests) == 4


async def test_agent_recovery_is_turn_local(tmp_path: Path) -> None:
    stopper = Stopper(StopDecision.recover("Restate."))
    model = ScriptedChatModel.of("draft", "full", "next")
    pm = make_plugin_manager([("tools", Tools()), ("stop", stopper)])
    async with Host(pm, Profile(name="t"), cwd=tmp_path) as host:
        session = open_session("s1", "t", tmp_path)
        agent = Agent(host, model)
        await agent.run_turn(session, "one")
        second = await agent.run_turn(session, "two")
    assert second.answer == "next" and model.requests[-1].tools
    assert [m.text for m in model.requests[-1].messages[1:]] == ["one", "draft", "full", "two"]


async def test_agent_turns_are_durable_and_replayed_as_history(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(tool_reply("add", {"a": 1, "b": 2}, "c1"), "3")
    await run(tmp_path, model)
    stored = read_session(session_path("s1"))
    assert stored.turns == 1
    assert [m.role for m in stored.history] == ["user", "assistant", "tool", "assistant"]
    assert stored.history[1].tool_calls == (
        ToolCall(id="c1", name="add", arguments='{"a": 1, "b": 2}'),
    )


def test_agent_session_file_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = session_path("s2")
    path.parent.mkdir(parents=True)
    header = '{"kind": "session", "id": "s2", "profile": "t", "cwd": "/", '
    path.write_text(header + '"created_at": "2026-01-01T00:00:00Z"}\n{"kind": "mess')
    assert read_session(path).history == []


def test_agent_assemble_puts_context_around_history() -> None:
    sections = [
        ContextSection(id="z", text="late", order=200),
        ContextSection(id="a", text="early", order=10),
        ContextSection(id="u", text="for this turn", role="user"),
    ]
    history = [ChatMessage(role="user", content="old", source="user")]
    turn = [ChatMessage(role="user", content="new", source="user")]
    messages = assemble(sections, history, turn, extra="recover now")
    assert [m.text for m in messages] == [
        "early\n\nlate",
        "old",
        "for this turn",
        "new",
        "recover now",
    ]


def user(content: Any, source: str = "user") -> ChatMessage:
    return ChatMessage(role="user", content=content, source=source)  # type: ignore[arg-type]


def assistant(content: Any = None, *calls: ToolCall, reasoning: str | None = None) -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=calls, reasoning=reasoning)


def tool(call_id: str, text: str) -> ChatMessage:
    return ChatMessage(role="tool", content=text, tool_call_id=call_id)


IMAGE_PART = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
MEMORY_CALL = ToolCall(id="m1", name="memory_search_events", arguments='{"query": "kiln"}')
FILE_CALL = ToolCall(id="f1", name="read_file", arguments="path=kiln.csv")

FOLDING = [
    ("plain", [user("hi"), assistant("hello")], ("hi", "hello", ())),
    (
        "memory tools never kept",
        [user("q"), assistant(None, MEMORY_CALL), tool("m1", '{"events": []}'), assistant("a")],
        ("q", "a", ()),
    ),
    (
        "other tools kept, bad JSON arguments as raw",
        [user("q"), assistant(None, FILE_CALL), tool("f1", '{"rows": 3}'), assistant("a")],
        (
            "q",
            "a",
            (ToolTrace(name="read_file", arguments={"raw": "path=kiln.csv"}, result={"rows": 3}),),
        ),
    ),
    (
        "reasoning dropped",
        [user("q"), assistant("<think>hmm</think>Yes.", reasoning="secret chain")],
        ("q", "Yes.", ()),
    ),
    (
        "images as [image], texts joined with blank lines",
        [user([{"type": "text", "text": "look"}, IMAGE_PART]), user("and this")],
        ("look\n\n[image]\n\nand this", "Turn completed.", ()),
    ),
    (
        "a described image keeps its description (on the part or its image object)",
        [
            user([{"type": "text", "text": "my kiln"}, {**IMAGE_PART, "alt": "a brick kiln"}]),
            user([{"type": "image_url", "image_url": {"url": "x", "caption": " two\n cats "}}]),
            user([{"type": "input_image", "description": "   "}]),
        ],
        ("my kiln\n\n[image: a brick kiln]\n\n[image: two cats]\n\n[image]", "Turn completed.", ()),
    ),
    (
        "several answers joined",
        [user("q"), assistant("one"), assistant("two")],
        ("q", "one\n\ntwo", ()),
    ),
    ("empty answer", [user("q"), assistant("")], ("q", "Turn completed.", ())),
    (
        "steer is not human text",
        [user("q"), assistant("a"), user("close", "plugin")],
        ("q", "a", ()),
    ),
]


@pytest.mark.parametrize(("case", "messages", "expected"), FOLDING, ids=[c[0] for c in FOLDING])
def test_folding_rules(case: str, messages: list[ChatMessage], expected: tuple[Any, ...]) -> None:
    folded = fold_turn("s1", 1, messages, T0, T1)
    assert folded is not None
    assert (folded.user, folded.assistant, folded.tool_calls) == expected


def test_folding_drops_a_turn_without_human_text() -> None:
    assert fold_turn("s1", 1, [user("steer", "plugin"), assistant("a")], T0, T1) is None


def test_folding_failed_turn_without_answer_says_why() -> None:
    folded = fold_turn("s1", 1, [user("q")], T0, T1, error="model call failed.")
    assert folded is not None
    assert (folded.assistant, folded.outcome) == ("Turn ended: model call failed.", "failed")
