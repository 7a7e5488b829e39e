"""The agent loop: one user message in, model steps with tools, a finish step, one turn out.

Every model call gets: the system message (system context sections joined, in order), the
session's history, the user-role context sections, then this turn's messages. When the model
stops, plugins decide (``turn_stopping``); the turn is recorded durably and only then handed
to ``turn_completed``. Its number is reserved under the session's lock as it starts, so
another writer of the session (the web app, a second ``chat --session``) never reuses it.
Plugin failures in context or turn hooks are logged, never fatal; texts ``session_started``,
``session_ended`` and ``turn_completed`` return are warnings
shown to the user, those of ``describe_session`` plain notes.
The human's text and every tool result pass the U+FFFD rule (``core.text.clean``), so
nothing they contain can keep the turn from being written.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .chat import ChatMessage, ChatModel, ChatModelError, ToolCall, ToolSpec
from .clock import utc_now
from .finish import (
    RECOVERY_ATTEMPTS,
    TurnFailed,
    merge_decisions,
    recovery_failure,
    recovery_problem,
    recovery_request,
)
from .folding import fold_turn, join, message_text
from .pm import call_hook
from .runtime import Host
from .sessions import TurnRecord, begin_turn, record_turn
from .text import valid_text
from .tools import ToolArgumentsError, parse_arguments, result_text
from .types import ContextSection, HostTurn, Session, ToolCallContext, TurnState

logger = logging.getLogger(__name__)

MAX_STEPS = 24


@dataclass(frozen=True)
class TurnResult:
    """What the user sees: the answer, or the reason the turn failed."""

    turn: int
    answer: str
    error: str | None
    folded: HostTurn | None
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


class Agent:
    """Runs turns for one host with one chat model."""

    def __init__(self, host: Host, model: ChatModel, *, max_steps: int = MAX_STEPS) -> None:
        self.host = host
        self.model = model
        self.max_steps = max_steps

    async def start(self, session: Session) -> list[str]:
        """Tell the plugins a session is open (new or continued); their warnings."""
        return await self._session_hook("session_started", session)

    async def describe(self, session: Session) -> list[str]:
        """What the plugins say about the opened session, one line each."""
        return await self._session_hook("describe_session", session)

    async def end(self, session: Session) -> list[str]:
        """Tell the plugins an interactive session ended; their warnings."""
        return await self._session_hook("session_ended", session)

    async def _session_hook(self, name: str, session: Session) -> list[str]:
        hook_args = {"host": self.host, "session": session}
        return _texts(await call_hook(self.host.pm, name, isolate=True, **hook_args))

    async def run_turn(self, session: Session, user_text: str) -> TurnResult:
        """Run one turn to its end, record it, then tell the plugins."""
        started = utc_now()
        user_text = valid_text(user_text)
        human = ChatMessage(role="user", content=user_text, source="user")
        number = begin_turn(session)  # reserved under the session's lock: no writer reuses it
        state = TurnState(turn=number, user_message=user_text, messages=[human])
        error = await self._run_steps(session, state)
        folded = self._record(session, state, started, error)
        warnings: list[str] = []
        if folded is not None:
            hook_args = {"host": self.host, "session": session, "turn": folded}
            results = await call_hook(self.host.pm, "turn_completed", isolate=True, **hook_args)
            warnings = _texts(results)
        answer = "" if error else message_text_of(state)
        return TurnResult(state.turn, answer, error, folded, tuple(warnings))

    def _record(
        self, session: Session, state: TurnState, started: datetime, error: str | None
    ) -> HostTurn | None:
        """Append the turn to the session file (fsynced); the folded turn, if any."""
        ended = utc_now()
        folded = fold_turn(session.id, state.turn, state.messages, started, ended, error)
        outcome: Literal["completed", "failed"] = "failed" if error else "completed"
        record = TurnRecord(
            turn=state.turn, outcome=outcome, error=error, started_at=started, ended_at=ended,
            folded=folded,
        )  # fmt: skip
        record_turn(session, state.messages, record)
        return folded

    async def _run_steps(self, session: Session, state: TurnState) -> str | None:
        """None when the turn completed, else the reason it failed."""
        try:
            await self._loop(session, state)
        except TurnFailed as failure:
            return str(failure)
        except ChatModelError as error:
            return f"model call failed: {error}"
        return None

    async def _loop(self, session: Session, state: TurnState) -> None:
        tools = [tool.spec() for tool in self.host.tools.values()]
        while True:
            if state.step >= self.max_steps:
                raise TurnFailed(f"stopped after {self.max_steps} model steps without an answer")
            state.step += 1
            reply = await self._call_model(session, state, tools)
            state.messages.append(reply)
            if reply.tool_calls:
                await self._run_tools(session, state, reply.tool_calls)
            elif await self._finish(session, state):
                return

    async def _finish(self, session: Session, state: TurnState) -> bool:
        """The finish step: True when the turn is done, False to let the model continue."""
        answers = await call_hook(
            self.host.pm,
            "turn_stopping",
            isolate=True,
            host=self.host,
            session=session,
            state=state,
        )
        state.stops += 1
        decision = merge_decisions(answers)
        if decision.kind == "fail":
            raise TurnFailed(decision.text or "a plugin stopped the turn")
        if decision.kind == "steer":
            state.messages.append(ChatMessage(role="user", content=decision.text, source="plugin"))
            return False
        if decision.kind == "recover":
            await self._recover(session, state, decision.text)
        return True

    async def _recover(self, session: Session, state: TurnState, instructions: str) -> None:
        """The answer-recovery step: no tools, up to three tries for a complete answer."""
        problem: str | None = None
        for attempt in range(1, RECOVERY_ATTEMPTS + 1):
            request = recovery_request(instructions, problem)
            reply = await self._call_model(session, state, [], extra=request)
            problem = recovery_problem(reply)
            if problem is None:
                state.messages.append(reply)
                return
            logger.warning("answer recovery attempt %d refused: %s", attempt, problem)
        raise recovery_failure(problem or "no answer")

    async def _call_model(
        self, session: Session, state: TurnState, tools: list[ToolSpec], extra: str | None = None
    ) -> ChatMessage:
        sections = await self._context(session, state)
        history = await self._history(session)
        messages = assemble(sections, history, state.messages, extra)
        return await self.model.chat(messages, tools)

    async def _history(self, session: Session) -> list[ChatMessage]:
        """The native history, or the first replacement a plugin offers (e.g. block views)."""
        results = await call_hook(
            self.host.pm,
            "build_history",
            isolate=True,
            host=self.host,
            session=session,
            history=list(session.history),
        )
        for result in results:
            if isinstance(result, list) and all(isinstance(m, ChatMessage) for m in result):
                return result
        return list(session.history)

    async def _context(self, session: Session, state: TurnState) -> list[ContextSection]:
        results = await call_hook(
            self.host.pm,
            "build_context",
            isolate=True,
            host=self.host,
            session=session,
            user_message=state.user_message,
            state=state,
        )
        return [section for result in results for section in _sections(result)]

    async def _run_tools(
        self, session: Session, state: TurnState, calls: Sequence[ToolCall]
    ) -> None:
        for call in calls:
            text = await self._run_tool(ToolCallContext(session, state.turn, call.id), call)
            result = ChatMessage(role="tool", content=text, tool_call_id=call.id, name=call.name)
            state.messages.append(result)

    async def _run_tool(self, context: ToolCallContext, call: ToolCall) -> str:
        """The result text; every error becomes text for the model to read."""
        tool = self.host.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.host.tools)) or "none"
            return f"Error: unknown tool {call.name!r} (available tools: {known})"
        try:
            return valid_text(
                result_text(await tool.implementation(parse_arguments(call), context))
            )
        except ToolArgumentsError as error:
            return f"Error: invalid arguments for {call.name}: {error}"
        except Exception as error:
            logger.warning("tool %s failed: %s", call.name, error)
            logger.debug("tool %s traceback", call.name, exc_info=True)
            return f"Error: {call.name} failed: {error}"


def assemble(
    sections: Sequence[ContextSection],
    history: Sequence[ChatMessage],
    turn: Sequence[ChatMessage],
    extra: str | None = None,
) -> list[ChatMessage]:
    """The messages for one model call (behaviour spec §9 order within each role)."""
    ordered = sorted(sections, key=lambda section: (section.order, section.id))
    system = join(section.text for section in ordered if section.role == "system")
    messages = [ChatMessage(role="system", content=system)] if system else []
    messages += history
    messages += [_host_user(section.text) for section in ordered if section.role == "user"]
    messages += turn
    if extra:
        messages.append(_host_user(extra))
    return messages


def _texts(results: list[object]) -> list[str]:
    """The non-blank texts hooks returned (warnings, or a session's description)."""
    return [result for result in results if isinstance(result, str) and result.strip()]


def _host_user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text, source="host")


def _sections(result: object) -> list[ContextSection]:
    items = result if isinstance(result, list | tuple) else [result]
    valid = [item for item in items if isinstance(item, ContextSection)]
    if len(valid) < len(items):
        logger.warning("build_context returned something other than ContextSection; ignored")
    return valid


def message_text_of(state: TurnState) -> str:
    """The visible text of the turn's last assistant message."""
    replies = [message for message in state.messages if message.role == "assistant"]
    return message_text(replies[-1]).strip() if replies else ""
