"""The parsers and entrances the fuzz targets call: looked up here and nowhere else.

Each entrance names the errors it may raise, read from the code that calls it:

* ingest file → ``parse_message_list`` + ``group_turns``: ``StrataGateError`` (they wrap
  pydantic's errors in ``InvalidInput`` naming the entry) or a ``ValueError`` with a
  message, which the CLI prints as such; a pydantic ``ValidationError`` leaking out is a
  crash (the CLI would print pages).
* ingest command → ``stratagate ingest FILE`` (``cli.main.main``, in this process) on raw
  file bytes, LoCoMo-shaped files included: it must return 0 or 2; anything it raises
  would be a traceback for the user.
* structured-task reply → ``HttpModel.complete`` over an in-memory transport (so the
  private reply parser can move): ``ModelError`` (invalid output becomes
  ``ModelOutputError`` after the retry); the deriver catches only that as a model failure.
* chat reply → ``HttpChatModel.chat`` over an in-memory transport: ``ModelError`` (the
  agent turns it into a failed turn; anything else escapes ``run_turn``).
* tool arguments → ``harness.tools.parse_arguments``: ``ToolArgumentsError``, which the
  agent reports to the model as "invalid arguments".
* profile YAML → ``load_profile``: ``HostError``, or a one-line ``ValueError`` the CLI prints.
* time expressions → ``find_time_expressions`` / ``resolve_time``: nothing (no match is
  ``UNKNOWN``, never an error; the deriver calls it on every message).

An error of an allowed type still crashes when its message is empty or cannot be printed
as UTF-8 (a lone surrogate in it would make the CLI's ``print`` itself fail).
"""

import asyncio
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from stratagate_plugin.cli.main import main as cli_main
from stratagate_plugin.core.errors import StrataGateError
from stratagate_plugin.core.importer.message_list import group_turns, parse_message_list
from stratagate_plugin.core.llm.base import ModelError, StructuredTask
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.tasks import (
    EXTRACT_EVENT_CARDS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventExtraction,
)
from stratagate_plugin.core.store.db import stratagate_home
from stratagate_plugin.core.text.temporal.resolve import find_time_expressions, resolve_time
from stratagate_plugin.harness.chat import ChatMessage, ToolCall
from stratagate_plugin.harness.errors import HostError
from stratagate_plugin.harness.profiles import load_profile, profiles_dir
from stratagate_plugin.harness.tools import ToolArgumentsError, parse_arguments
from stratagate_plugin.memory_plugin.chat_model import HttpChatModel

CONFIG = HttpModelConfig(  # one attempt: retries (tested on their own) would only sleep
    base_url="http://fuzz.invalid/v1", model="fuzz", timeout_s=5, max_attempts=1
)
TASKS: dict[str, StructuredTask[Any]] = {
    SUMMARIZE_BLOCK: StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "summarize", {"block": {}}),
    EXTRACT_EVENT_CARDS: StructuredTask(EXTRACT_EVENT_CARDS, EventExtraction, "extract", {}),
}


def allowed(error: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """``error`` is one of ``kinds`` and says, printably, what went wrong."""
    if not isinstance(error, kinds):
        return False
    text = str(error).strip()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(text)


def has_surrogate(value: Any) -> bool:
    """A lone surrogate anywhere in ``value``: the U+FFFD rule says none gets through."""
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(has_surrogate(item) for item in value)
    return False


# --- ingest files ----------------------------------------------------------------------


def ingest_entries(entries: Any) -> str | None:
    """Parse like ``stratagate ingest``; a problem with a *successful* result, if any."""
    turns = group_turns(parse_message_list(entries))
    for _, messages in turns:
        if any(has_surrogate(m.model_dump(mode="python", exclude={"at"})) for m in messages):
            return "a lone surrogate passed into a turn"
    return None


def ingest_allowed(error: BaseException) -> bool:
    return not isinstance(error, ValidationError) and allowed(error, (StrataGateError, ValueError))


def ingest_command(data: bytes) -> str | None:
    """``stratagate ingest`` of a file holding ``data``, into one database per run."""
    home = stratagate_home()
    file, db = home / "fuzz.json", home / "fuzz.db"
    home.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = cli_main(["ingest", str(file), "--db", str(db)])
    return None if code in (0, 2) else f"exit status {code}"


# --- model replies ----------------------------------------------------------------------


class Replies:
    """An in-memory OpenAI-compatible server: every request gets the current reply."""

    def __init__(self) -> None:
        self.status, self.body = 200, b"{}"
        self.loop = asyncio.new_event_loop()
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self._answer))

    def _answer(self, request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        return httpx.Response(self.status, content=self.body, headers=headers)

    def set(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        self.run(self.client.aclose())
        self.loop.close()


def structured_reply(replies: Replies, task_name: str, message: Any) -> str | None:
    """One structured task answered with ``message`` (wrapped in a valid envelope)."""
    replies.set(200, json.dumps({"choices": [{"message": message}]}).encode())
    model = HttpModel(CONFIG, client=replies.client)
    result = replies.run(model.complete(TASKS[task_name]))
    return "a lone surrogate passed into the result" if has_surrogate(result.model_dump()) else None


def chat_reply(replies: Replies, status: int, body: bytes) -> str | None:
    """One chat call answered with ``status`` and the raw ``body``."""
    replies.set(status, body)
    model = HttpChatModel(CONFIG, client=replies.client)
    hello = [ChatMessage(role="user", content="hello", source="user")]
    reply = replies.run(model.chat(hello, []))
    return None if isinstance(reply, ChatMessage) else f"chat returned {type(reply).__name__}"


MODEL_ERRORS: tuple[type[BaseException], ...] = (ModelError,)


# --- tool arguments, profiles, time expressions ---------------------------------------------


def tool_arguments(text: str) -> str | None:
    values = parse_arguments(ToolCall(id="call_1", name="memory_search_raw", arguments=text))
    return None if isinstance(values, dict) else "arguments are not a dict"


TOOL_ERRORS: tuple[type[BaseException], ...] = (ToolArgumentsError,)


def profile_file(data: bytes) -> str | None:
    """Load a profile whose file holds ``data`` (under ``$STRATAGATE_HOME/profiles``)."""
    path: Path = profiles_dir() / "fuzz.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    load_profile("fuzz")
    return None


def profile_allowed(error: BaseException) -> bool:
    return allowed(error, (HostError, ValueError))


def time_expressions(text: str, reference: datetime) -> str | None:
    find_time_expressions(text, reference)
    resolve_time(text, reference, future=True)
    return None


def nothing_allowed(error: BaseException) -> bool:
    return False
