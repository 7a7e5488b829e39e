"""The chat pages: a list of conversations, a conversation, and sending a message.

A message runs one agent turn in this process (the same ``Agent`` as ``stratagate chat``);
an htmx request gets the new turn as a fragment, a plain form post a redirect. Below each
turn the plugins' notes (``chat_annotations``: the memory plugin's citation tail and
block status rows) are shown, escaped like everything else.

A new conversation may choose its memory space among those the plugins offer
(``session_spaces``); anything else is a 404 and creates nothing. The choice is kept in the
session file, so a conversation's space never changes once it has begun.
"""

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.text.clean import valid_text
from ...harness.agent import Agent
from ...harness.errors import HostError
from ...harness.pm import call_hook
from ...harness.sessions import (
    announce_session,
    begun_session,
    list_sessions,
    new_session_id,
    open_session,
    refresh_session,
    session_path,
)
from ...harness.types import ChatNote, Session, SpaceChoice
from .templating import render, web_state

MAX_MESSAGE_CHARS = 20_000


@dataclass
class ChatRooms:
    """The sessions this app has open, each turned by one request at a time."""

    agent: Agent
    sessions: dict[str, Session] = field(default_factory=dict)
    locks: defaultdict[str, asyncio.Lock] = field(default_factory=lambda: defaultdict(asyncio.Lock))
    warnings: dict[str, list[str]] = field(default_factory=dict)

    async def open(
        self, session_id: str, *, create: bool = False, space: str | None = None
    ) -> Session:
        """The session (first opened here: plugins hear ``session_started``); unknown → 404.
        One already open is refreshed from its file: a ``chat --session`` run may have
        added turns since. A session created here uses memory ``space`` (None: default)."""
        if session_id in self.sessions:
            session = self.sessions[session_id]
            refresh_session(session)
            return session
        try:
            exists = session_path(session_id).exists()
        except HostError as error:
            raise HTTPException(404, str(error)) from error
        begun = None if exists or create else begun_session(session_id)
        if not exists and not create and begun is None:
            raise HTTPException(404, f"no conversation {session_id!r}")
        host = self.agent.host
        session = begun or open_session(session_id, host.profile.name, host.cwd)
        if create and not exists:
            session.memory_space = space
            announce_session(session)  # another web process may answer its next request
        self.sessions[session_id] = session
        self.warnings[session_id] = await self.agent.start(session)
        return session


def rooms(request: Request) -> ChatRooms:
    chat: ChatRooms = request.app.state.chat
    return chat


async def chat_index(request: Request) -> Response:
    """The list, and a message box whose first message starts a conversation."""
    host = rooms(request).agent.host
    unsaved = open_session(None, host.profile.name, host.cwd)  # written only with a turn
    context = {
        "sessions": list_sessions(),
        "session": None,
        "space": await rooms(request).agent.describe(unsaved),
        "space_choices": await space_choices(request),
    }
    return render(request, "shell/chat.html", context)


async def space_choices(request: Request) -> list[SpaceChoice]:
    """The memory spaces a new conversation may use, from every plugin that offers some."""
    host: Any = web_state(request).host
    results = await call_hook(host.pm, "session_spaces", isolate=True, host=host)
    return [choice for batch in results for choice in batch]


async def chosen_space(request: Request, form: FormData) -> str | None:
    """The posted ``space`` if a plugin offers it (None: the default); else a 404, before
    anything is created."""
    posted = form.get("space")
    asked = posted.strip() if isinstance(posted, str) else ""
    if not asked:
        return None
    if asked not in {choice.value for choice in await space_choices(request)}:
        raise HTTPException(
            404, f"no memory space called {asked!r} (`stratagate spaces` lists them)"
        )
    return asked


async def new_chat(request: Request) -> Response:
    space = await chosen_space(request, await request.form())
    session = await rooms(request).open(new_session_id(), create=True, space=space)
    return RedirectResponse(f"/chat/{session.id}", status_code=303)


async def start_chat(request: Request) -> Response:
    """The first page's message: a new conversation with it as its first turn."""
    chat = rooms(request)
    text = await message_text(request)
    space = await chosen_space(request, await request.form())
    session = await chat.open(new_session_id(), create=True, space=space)
    async with chat.locks[session.id]:
        await chat.agent.run_turn(session, text)
    return RedirectResponse(f"/chat/{session.id}", status_code=303)


async def chat_page(request: Request) -> Response:
    session = await rooms(request).open(request.path_params["session_id"])
    notes = await session_notes(request, session)
    context = {
        "sessions": list_sessions(),
        "session": session,
        "turns": [(turn, notes.get(turn.turn, [])) for turn in session.completed],
        "warnings": rooms(request).warnings.get(session.id, []),
        "title": title_of(session),
        "space": await rooms(request).agent.describe(session),
        "space_choices": await space_choices(request),
    }
    return render(request, "shell/chat.html", context)


def title_of(session: Session) -> str:
    """A conversation is named by its first message (its id means nothing to a person)."""
    first = session.completed[0].user if session.completed else ""
    return " ".join(first.split())[:80]


async def send_message(request: Request) -> Response:
    chat = rooms(request)
    session = await chat.open(request.path_params["session_id"])
    text = await message_text(request)
    async with chat.locks[session.id]:
        result = await chat.agent.run_turn(session, text)
    if request.headers.get("hx-request") != "true":
        return RedirectResponse(f"/chat/{session.id}", status_code=303)
    notes = await session_notes(request, session)
    context = {
        "session": session,
        "result": result,
        "user_text": text,
        "notes": notes.get(result.turn, []),
        "sessions": list_sessions(),  # swapped in out of band: the sidebar follows along
        "title": title_of(session),
    }
    return render(request, "shell/turn.html", context)


async def message_text(request: Request) -> str:
    form = await request.form()
    text = form.get("text")
    if not isinstance(text, str) or not text.strip():
        raise HTTPException(400, "the message is empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise HTTPException(413, f"the message is over {MAX_MESSAGE_CHARS} characters")
    return valid_text(text.strip())


async def session_notes(request: Request, session: Session) -> dict[int, list[ChatNote]]:
    """The plugins' notes by turn (a failing plugin is logged and skipped)."""
    host: Any = web_state(request).host
    results = await call_hook(host.pm, "chat_annotations", isolate=True, host=host, session=session)
    notes: dict[int, list[ChatNote]] = defaultdict(list)
    for batch in results:
        for note in batch:
            notes[note.turn].append(note)
    return notes


ROUTES = [
    Route("/chat", chat_index),
    Route("/chat/new", new_chat, methods=["POST"]),
    Route("/chat/start", start_chat, methods=["POST"]),
    Route("/chat/{session_id}", chat_page),
    Route("/chat/{session_id}/messages", send_message, methods=["POST"]),
]
