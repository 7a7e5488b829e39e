"""ChatGPT's and Claude's data exports (``conversations.json``) → an ingest message list.

These are conversations, not memories: each becomes a thread of turns (``stratagate
ingest``), sealed and derived like any other, never candidates for the import preview.
Only what was finally said is kept: in ChatGPT's tree the branch that leads to
``current_node`` (an edited or regenerated sibling was replaced), in Claude's the branch
of ``parent_message_uuid`` links that leads to the newest message, and of either export
only the user's and the assistant's visible text (system, tool, hidden, code, images,
thinking and the assistant's calls to a tool are left out). Each conversation's title
(ChatGPT's ``title``, Claude's ``name``) is kept as its thread's. Pure: the decoded JSON
in, ``{thread, role, content, at}`` and titles out.

``sniff_kind`` tells an export from its first bytes, so a 60 MB ``conversations.json`` is
routed to the chat-history reader (and its 64 MB cap) without being read whole first.
"""

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...errors import InvalidInput
from ...text.clean import valid_text
from .json_text import try_json, unfenced

CHATGPT = "ChatGPT"
CLAUDE = "Claude"
CHATGPT_TEXT_TYPES = ("text", "multimodal_text")
CHATGPT_ROLES = {"user": "user", "assistant": "assistant"}
CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}
TITLE_LIMIT = 200
SNIFF_BYTES = 256 * 1024
"""How much of a file ``sniff_kind`` is given: far more than the keys before a first
conversation's ``mapping`` or ``chat_messages``."""
_KIND_OF_VALUE = {("mapping", "{"): CHATGPT, ("chat_messages", "["): CLAUDE}
_TOKEN = re.compile(r'\s*("[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s"\[\]{}:,]+)', re.S)


@dataclass
class ChatExport:
    """An export read conversation by conversation: what ingest records, and what it
    says about the file."""

    kind: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    conversations: int = 0
    skipped: int = 0
    """Conversations with nothing a user said (left out: a thread needs a user message)."""
    titles: dict[str, str] = field(default_factory=dict)
    """Each recorded thread's title as the product named the conversation."""

    def add(self, conversation: Any) -> None:
        """One conversation of the export, read as the first one's product writes it."""
        if not isinstance(conversation, dict):
            raise InvalidInput(f"conversation {self.conversations}: must be a JSON object")
        reader = _chatgpt_conversation if self.kind == CHATGPT else _claude_conversation
        found = [
            {key: valid_text(value) for key, value in message.items()}
            for message in reader(conversation, self.conversations)
        ]
        self.conversations += 1
        if any(message["role"] == "user" for message in found):
            self.messages += found
            title = conversation.get("title" if self.kind == CHATGPT else "name")
            if isinstance(title, str) and (
                title := valid_text(" ".join(title.split()))[:TITLE_LIMIT]
            ):
                self.titles[found[0]["thread"]] = title
        else:
            self.skipped += 1


def sniff_kind(head: bytes) -> str | None:
    """``ChatGPT`` or ``Claude`` when the first bytes of a file open a list whose first
    object has a ``mapping`` object or a ``chat_messages`` list (``export_kind``'s test),
    found by reading that object's keys as tokens; None for another shape, or when
    ``head`` ends before the object says."""
    tokens = _tokens(head.decode("utf-8", "replace").lstrip("\ufeff"))
    if next(tokens, None) != "[" or next(tokens, None) != "{":
        return None
    depth, last, key = 1, "", None
    for token in tokens:
        if key is not None and (found := _KIND_OF_VALUE.get((key, token))):
            return found
        key = _key(last) if token == ":" and depth == 1 else None
        depth += (token in ("[", "{")) - (token in ("]", "}"))
        if depth == 0:
            return None
        last = token
    return None


def _tokens(text: str) -> Iterator[str]:
    """JSON's strings and punctuation, and runs of anything else; stops at the first
    string the text cuts off."""
    position = 0
    while match := _TOKEN.match(text, position):
        yield match.group(1)
        position = match.end()


def _key(token: str) -> str | None:
    if not token.startswith('"'):
        return None
    try:
        key = json.loads(token)
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def export_kind(value: Any) -> str | None:
    """``ChatGPT`` or ``Claude`` when ``value`` is that product's conversation list."""
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return None
    first = value[0]
    if isinstance(first.get("mapping"), dict):
        return CHATGPT
    if isinstance(first.get("chat_messages"), list):
        return CLAUDE
    return None


def hint(kind: str) -> str:
    """What the import says when given a chat history instead of memories."""
    return (
        f"this is a chat history ({kind} export), not memories: "
        "use `stratagate ingest FILE` (or 'chat history' on the web import page)"
    )


def refuse(text: str) -> dict[str, Any]:
    """The memory import's converter for chat histories: one line pointing to ingest."""
    _, value = try_json(unfenced(text))
    raise InvalidInput(hint(export_kind(value) or "chat"))


def to_messages(value: Any) -> tuple[list[dict[str, Any]], int]:
    """The export's messages in ingest's shape, and how many conversations had nothing
    a user said (left out: a thread needs a user message)."""
    kind = export_kind(value)
    if kind is None:
        raise InvalidInput("not a ChatGPT or Claude conversations.json export")
    export = collect(kind, value)
    return export.messages, export.skipped


def collect(kind: str, conversations: Iterable[Any]) -> ChatExport:
    """Every conversation of a ``kind`` export (a list, or a stream of its items)."""
    export = ChatExport(kind)
    for conversation in conversations:
        export.add(conversation)
    return export


def _chatgpt_conversation(conversation: dict[str, Any], number: int) -> list[dict[str, Any]]:
    ident = _str(conversation.get("conversation_id")) or _str(conversation.get("id")) or number
    thread = f"chatgpt-{ident}"
    last_time = _utc_iso(conversation.get("create_time"))
    messages = []
    for node in _current_branch(_dict(conversation.get("mapping")), conversation):
        message = node.get("message")
        if not isinstance(message, dict) or not (role := _chatgpt_role(message)):
            continue
        text = _chatgpt_text(message)
        last_time = _utc_iso(message.get("create_time")) or last_time
        if text and last_time:
            messages.append({"thread": thread, "role": role, "content": text, "at": last_time})
    return messages


def _current_branch(mapping: dict[str, Any], conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Root → ``current_node``, walking parents up (a cycle stops the walk); without a
    ``current_node``, the branch that always takes the last child."""
    current = _str(conversation.get("current_node"))
    if current not in mapping:
        current = _last_leaf(mapping)
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        if not isinstance(node, dict):
            break
        branch.append(node)
        current = node.get("parent")
    return branch[::-1]


def _last_leaf(mapping: dict[str, Any]) -> str | None:
    roots = [
        key for key, node in mapping.items() if isinstance(node, dict) and not node.get("parent")
    ]
    current = roots[0] if roots else None
    for _ in range(len(mapping)):
        children = _dict(mapping.get(current or "")).get("children")
        if not isinstance(children, list) or not children or not _str(children[-1]):
            break
        current = children[-1]
    return current


def _chatgpt_role(message: dict[str, Any]) -> str | None:
    if _dict(message.get("metadata")).get("is_visually_hidden_from_conversation"):
        return None
    if message.get("recipient") not in (None, "all"):  # the assistant calling a tool
        return None
    return CHATGPT_ROLES.get(_str(_dict(message.get("author")).get("role")) or "")


def _chatgpt_text(message: dict[str, Any]) -> str:
    content = _dict(message.get("content"))
    if _str(content.get("content_type")) not in CHATGPT_TEXT_TYPES:
        return ""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return ""
    return "\n".join(part for part in parts if isinstance(part, str) and part.strip()).strip()


def _claude_conversation(conversation: dict[str, Any], number: int) -> list[dict[str, Any]]:
    thread = f"claude-{_str(conversation.get('uuid')) or number}"
    last_time = _utc_iso(conversation.get("created_at"))
    messages = []
    found = conversation.get("chat_messages")
    listed = [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []
    for message in _claude_branch(listed):
        if not (role := CLAUDE_ROLES.get(_str(message.get("sender")) or "")):
            continue
        text = _claude_text(message)
        last_time = _utc_iso(message.get("created_at")) or last_time
        if text and last_time:
            messages.append({"thread": thread, "role": role, "content": text, "at": last_time})
    return messages


def _claude_branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Root → the newest message, walking ``parent_message_uuid`` up (a cycle or a parent
    missing from the export ends the walk): an edited question or a regenerated answer
    starts a sibling branch, and only the newest branch is what was said last. An older
    export without these links is taken whole, in its order."""
    if not any(_str(message.get("parent_message_uuid")) for message in messages):
        return messages
    by_id = {uuid: m for m in messages if (uuid := _str(m.get("uuid")))}
    if not by_id:
        return messages
    newest = max(
        (index for index, m in enumerate(messages) if _str(m.get("uuid"))),
        key=lambda index: (_utc_iso(messages[index].get("created_at")) or "", index),
    )
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    current = _str(messages[newest].get("uuid"))
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        branch.append(by_id[current])
        current = _str(by_id[current].get("parent_message_uuid"))
    return branch[::-1]


def _claude_text(message: dict[str, Any]) -> str:
    """The ``text`` blocks of ``content`` (tool use and thinking left out), else ``text``."""
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        texts = [
            block["text"]
            for block in blocks
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
            and block["text"].strip()
        ]
        return "\n\n".join(texts).strip()
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _utc_iso(value: Any) -> str | None:
    """ChatGPT's Unix seconds or Claude's ISO text as UTC ISO-8601 with its offset."""
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC).isoformat()
        if isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip().upper())
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            return moment.astimezone(UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return None
    return None
