"""One line of the stdio wire checked before the SDK sees it: a message, or the JSON-RPC
error that answers it.

The SDK's own reader drops what it cannot validate without a word: a lone surrogate
(``"\\ud800"``, which its JSON parser refuses), malformed JSON, a batch, a non-object, an id
that is neither a string nor an integer (read as a notification, so never answered). A client
then waits forever for a reply. Here every line gets one: text passes the U+FFFD rule
(``core/text/clean``) as it does everywhere else, and anything that is not one JSON-RPC
message is answered ``-32700`` (not JSON) or ``-32600`` (not a valid request) naming what
is wrong, with the request's id when it has a usable one, else ``null``.

Limits: a line (one message) is at most ``MAX_LINE_BYTES`` (8 MB); a longer one is read
past and refused whole, with the id found at its start when there is one.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..core.text.clean import valid_bytes, valid_json_value

MEGABYTE = 1_000_000
MAX_LINE_BYTES = 8 * MEGABYTE
ID_SCAN_BYTES = 64_000  # how much of an over-long line is searched for its id
BATCH_REFUSED = (
    "batches (JSON arrays) are not supported: MCP removed JSON-RPC batching in "
    "protocol 2025-06-18; send one message per line"
)
JSON_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean"}
_SPACE = re.compile(r"[ \t\r\n]*")

RequestId = str | int


@dataclass(frozen=True)
class Refusal:
    """The error that answers a line which is not one valid message."""

    code: int
    message: str
    id: RequestId | None = None

    def reply(self) -> SessionMessage:
        error = types.ErrorData(code=self.code, message=self.message)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.id, error=error))


def check_line(raw: bytes) -> SessionMessage | Refusal | None:
    """The message ``raw`` (one line, newline included or not) carries; a ``Refusal`` to
    send back when it is none; ``None`` for a blank line (nothing was asked)."""
    text, _ = valid_bytes(raw)
    if not text.strip():
        return None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        return Refusal(types.PARSE_ERROR, f"parse error: the line is not JSON ({_reason(error)})")
    try:
        return checked_message(valid_json_value(value))
    except RecursionError:
        return Refusal(types.INVALID_REQUEST, "invalid request: the message is nested too deeply")


def checked_message(value: Any) -> SessionMessage | Refusal:
    """A parsed line (its text already valid) as one JSON-RPC message, or why it is not."""
    if isinstance(value, list):
        return Refusal(types.INVALID_REQUEST, f"invalid request: {BATCH_REFUSED}")
    if not isinstance(value, dict):
        kind = JSON_KINDS.get(type(value), "null")
        return Refusal(
            types.INVALID_REQUEST, f"invalid request: a message is an object, not {kind}"
        )
    if "id" in value and not usable_id(value["id"]):
        return Refusal(
            types.INVALID_REQUEST,
            f"invalid request: id must be a string or an integer, not {json.dumps(value['id'])}",
        )
    request_id = value.get("id")
    if value.get("jsonrpc") != "2.0":
        return Refusal(
            types.INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"', request_id
        )
    if "method" in value and not isinstance(value["method"], str):
        return Refusal(
            types.INVALID_REQUEST, "invalid request: method must be a string", request_id
        )
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError as error:
        return Refusal(types.INVALID_REQUEST, f"invalid request: {_first_error(error)}", request_id)
    return SessionMessage(message)


def too_long(prefix: bytes) -> Refusal:
    """The answer to a line over ``MAX_LINE_BYTES``; ``prefix`` is its start."""
    limit = f"{MAX_LINE_BYTES // MEGABYTE} MB ({MAX_LINE_BYTES:,} bytes)"
    return Refusal(
        types.INVALID_REQUEST,
        f"invalid request: the message is over the {limit} limit of one line; nothing of it "
        "was read",
        leading_id(prefix[:ID_SCAN_BYTES]),
    )


def leading_id(prefix: bytes) -> RequestId | None:
    """The top-level ``id`` of a message cut short, when it comes before the cut (clients
    write ``jsonrpc``, ``id`` and ``method`` before ``params``)."""
    text, _ = valid_bytes(prefix)
    decoder = json.JSONDecoder()
    at = _skip_space(text, 0)
    if not text.startswith("{", at):
        return None
    try:
        while True:
            key, at = decoder.raw_decode(text, _skip_space(text, at + 1))
            at = _skip_space(text, at)
            if not text.startswith(":", at):
                return None
            value, at = decoder.raw_decode(text, _skip_space(text, at + 1))
            if key == "id":
                return value if usable_id(value) else None
            at = _skip_space(text, at)
            if not text.startswith(",", at):
                return None
    except (ValueError, RecursionError):  # the cut fell before the id
        return None


def _skip_space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def usable_id(value: Any) -> bool:
    """MCP's request ids: a string or an integer (a bool is not one, nor is null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reason(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return str(error).splitlines()[0]


def _first_error(error: ValidationError) -> str:
    """Pydantic's first complaint in one line: where, then what."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"][1:]) or "message"
    return f"{where}: {first['msg']}"
