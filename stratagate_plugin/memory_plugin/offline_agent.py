"""The offline agent: a deterministic chat model that really uses the memory tools.

Used when no model endpoint is configured. For a question it searches events and raw
memory, assesses both batches, records what it adopts (or ``[]``), and answers only from
adopted evidence — or says it cannot confirm. Statements are acknowledged; "remember …"
goes to memory_remember and "call me …" to the profile tool. With no memory tools (the
memory plugin disabled) it says so instead of pretending to note anything.

Its own earlier answers are not evidence: a raw hit that is an assistant message is the
agent repeating what the user said (the user's words it came from are found anyway), and
an earlier question says nothing is true; one fact found both as an event and as a raw
line is one line of the answer.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.text.search_terms import tokenize
from ..harness.chat import ChatMessage, ToolSpec, text_reply, tool_reply
from .question_terms import coverage, covers, key_terms

_QUESTION = re.compile(
    r"[?？]|^\s*(what|when|where|who|which|why|how|do|does|did|is|are|was|were|can|could|"
    r"have|has|tell me|remind me)\b|吗|什么|哪|谁|几|多少|怎么|为什么|是否",
    re.IGNORECASE,
)
_REMEMBER = re.compile(
    r"^\s*(?:(?:can|could|would|will) you\s+)?(?:please\s+)?(?:remember|note|make a note"
    r"|keep in mind|don't let me forget)(?: of)?(?: that)?\s*[:,]?\s*"
    r"(?!\s*(?:where|what|when|who|whom|which|how|if|whether|why)\b)(?P<fact>.+?)[?？]?$"
    r"|^\s*(?:请|麻烦|帮我)?(?:记住|记一下|记下)[：:，,]?\s*(?P<zh>.+?)[?？]?$",
    re.I,
)
_CALL_ME = re.compile(
    r"\b(call me|my name is)\s+(?P<name>[^\s.,!?]+)|叫我(?P<zh>\S+?)[。!！]?$", re.I
)
_STEER = re.compile(r"batches still open: (?P<ids>[^.]+)\.")
_SAID = re.compile(r"^(The user said: |用户说：)")


@dataclass
class _Turn:
    """What happened so far in the current turn, read back from the messages."""

    question: str
    results: dict[str, Any] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    steer: str | None = None
    step: int = 0


class OfflineAgent:
    name = "offline-agent"

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        turn = _read_turn(messages)
        available = {tool.name for tool in tools}
        if not available and not turn.order and not turn.steer:
            return text_reply(_memory_off(turn))
        if not available:
            return text_reply(_answer(turn))
        if turn.steer:
            return _close_listed(turn)
        if not _QUESTION.search(turn.question) or _REMEMBER.match(turn.question):
            return _statement(turn, available)
        return _question_step(turn, available)


def create_chat_model(host: object) -> OfflineAgent:
    return OfflineAgent()


def _read_turn(messages: Sequence[ChatMessage]) -> _Turn:
    start = max(
        (i for i, m in enumerate(messages) if m.role == "user" and m.source in (None, "user")),
        default=0,
    )
    turn = _Turn(question=messages[start].text if messages else "")
    names: dict[str, str] = {}
    for message in messages[start + 1 :]:
        turn.step += message.role == "assistant"
        for call in message.tool_calls:
            names[call.id] = call.name
            _note_gate_call(turn, call.name, call.arguments)
        if message.role == "tool" and message.tool_call_id in names:
            name = names[message.tool_call_id]
            turn.results[name] = _json(message.text)
            turn.order.append(name)
        if message.role == "user" and message.source == "plugin":
            turn.steer = message.text
        elif message.role == "tool":
            turn.steer = None
    return turn


def _note_gate_call(turn: _Turn, name: str, arguments: str) -> None:
    """Remember which batches this turn already assessed or recorded."""
    kind = {"memory_assess": "assess", "memory_record_use": "record"}.get(name)
    batch = _json(arguments).get("batch_id") if kind else None
    if kind and batch:
        turn.results[f"{kind}:{batch}"] = True


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"error": text}


def _call(turn: _Turn, name: str, arguments: dict[str, Any]) -> ChatMessage:
    return tool_reply(name, arguments, call_id=f"offline_{turn.step}_{name}")


def _statement(turn: _Turn, available: set[str]) -> ChatMessage:
    if turn.order:
        return text_reply(_say(turn, "kept"))
    name = _CALL_ME.search(turn.question)
    if name and "memory_profile_update" in available:
        value = name.group("name") or name.group("zh")
        return _call(
            turn, "memory_profile_update", {"field": "user_preferred_name", "value": value}
        )
    fact = _REMEMBER.match(turn.question)
    if fact and "memory_remember" in available:
        return _call(turn, "memory_remember", {"content": fact.group("fact") or fact.group("zh")})
    return text_reply(_say(turn, "noted"))


def _question_step(turn: _Turn, available: set[str]) -> ChatMessage:
    query = turn.question.strip()
    for search in ("memory_search_events", "memory_search_raw"):
        if search not in turn.results and search in available:
            return _call(turn, search, {"query": query, "limit": 6})
    for search in ("memory_search_events", "memory_search_raw"):
        batch = _batch_of(turn, search)
        if batch is None:
            continue
        assessed, recorded = f"assess:{batch}", f"record:{batch}"
        if assessed not in turn.results:
            return _call(turn, "memory_assess", _assessment(turn, search, batch))
        if recorded not in turn.results:
            return _call(
                turn,
                "memory_record_use",
                {"batch_id": batch, "evidence_refs": _adopted(turn, search)},
            )
    return text_reply(_answer(turn))


def _batch_of(turn: _Turn, search: str) -> str | None:
    result = turn.results.get(search)
    batch = result.get("batchId") if isinstance(result, dict) else None
    return str(batch) if batch else None


def _assessment(turn: _Turn, search: str, batch: str) -> dict[str, Any]:
    adopted = _adopted(turn, search)
    verdict = "sufficient" if adopted else "wrong"
    return {
        "batch_id": batch,
        "verdict": verdict,
        "evidence_refs": adopted,
        "fit": "direct match on the question's key terms" if adopted else "",
        "missing": "" if adopted else "nothing found that answers the question",
        "next_strategy": "answer" if adopted else "search_raw_memory",
    }


def _adopted(turn: _Turn, search: str) -> list[str]:
    return [found.ref for found in _evidence(turn, search)]


@dataclass(frozen=True)
class _Found:
    """A result that covers the question: its ref, answer line, how much of the question
    it covers and when it was said."""

    ref: str
    text: str
    coverage: float
    said_at: str


def _evidence(turn: _Turn, search: str) -> list[_Found]:
    """The results covering the question's key terms, best two (``_best``).

    A card is matched with the versions it replaced (the question may use the old words),
    and answered with its current value first."""
    result = turn.results.get(search)
    if not isinstance(result, dict):
        return []
    wanted = key_terms(turn.question)
    refs, items = result.get("evidenceRefs") or [], result.get("results") or []
    found = []
    for ref, item in zip(refs, items, strict=False):
        if _is_own_answer(item):
            continue
        matched = " ".join([_item_text(item), *_history(item)])
        if covers(wanted, matched):
            share = coverage(wanted, matched)
            found.append(_Found(str(ref), _answer_line(item), share, _said_at(item)))
    return _best(found)[:2]


def _best(found: list[_Found]) -> list[_Found]:
    """Most of the question covered first; of lines covering alike, the one said last (the
    more likely current value), else in the search's order."""
    newest = sorted(found, key=lambda line: line.said_at, reverse=True)
    return sorted(newest, key=lambda line: -line.coverage)


def _said_at(item: Any) -> str:
    """When a raw line or a card was said (ISO UTC; "" when unknown)."""
    if not isinstance(item, dict):
        return ""
    message, temporal = item.get("message"), item.get("temporal")
    if isinstance(message, dict):
        return str(message.get("createdAt") or "")
    return str(temporal.get("mentionedAt") or "") if isinstance(temporal, dict) else ""


def _is_own_answer(item: Any) -> bool:
    """An assistant message (the agent's own words) or an earlier question: neither says
    what is true, so neither is evidence for an answer. Nor is a JSON document (an
    imported file kept whole as its source): the events of its items are answered."""
    message = item.get("message") if isinstance(item, dict) else None
    if not isinstance(message, dict):
        return False
    if _is_json_document(str(message.get("content", ""))):
        return True
    asked = message.get("role") == "user" and _QUESTION.search(str(message.get("content", "")))
    return message.get("role") == "assistant" or bool(asked)


def _is_json_document(text: str) -> bool:
    stripped = text.strip()
    if stripped[:1] not in ("[", "{"):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


_WORDS = {
    "en": {
        "kept": "Noted — I'll keep that in mind.",
        "noted": "Noted.",
        "unsure": "I can't confirm that from memory.",
        "recalled": "From what you told me before:",
    },
    "zh": {
        "kept": "好的，我会记住。",
        "noted": "好的，记下了。",
        "unsure": "我无法从记忆中确认这一点。",
        "recalled": "根据你之前告诉我的：",
    },
}
_HAN = re.compile(r"[\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _say(turn: _Turn, what: str) -> str:
    """The agent's own words in the language of the message it answers: Chinese when it
    has more Han characters than Latin words."""
    text = turn.question
    chinese = len(_HAN.findall(text)) > len(_LATIN_WORD.findall(text))
    return _WORDS["zh" if chinese else "en"][what]


def _in(turn: _Turn, line: str) -> str:
    """An answer line with its history note in the answer's language."""
    head, sep, rest = line.partition(" (earlier: ")
    if not sep or _say(turn, "noted") == _WORDS["en"]["noted"]:
        return line
    return f"{head}（之前：{rest.removesuffix(')')}）"


def _memory_off(turn: _Turn) -> str:
    if _QUESTION.search(turn.question):
        return "Memory is off in this profile, so I can't look that up."
    return "Memory is off in this profile, so I won't remember that."


def _fact_key(text: str) -> frozenset[str]:
    """What a line says, without "You said:", its date or its history: the same fact
    found twice."""
    text = text.split(" (earlier: ")[0]
    text = re.sub(
        r"\s*\(\d{4}-\d\d-\d\d\)$", "", text.removeprefix("You said: ").removeprefix("你说：")
    )
    return frozenset(tokenize(text))


def _item_text(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    if "summary" in item:
        summary = _SAID.sub(_you_said, str(item["summary"]), count=1)
        when = str(item.get("sourceTime") or "")[:10]
        return f"{summary} ({when})" if when else summary
    message = item.get("message") or {}
    return str(message.get("content", ""))


def _you_said(said: re.Match[str]) -> str:
    return "你说：" if said.group(0).startswith("用户") else "You said: "


def _history(item: Any) -> list[str]:
    """What the versions a card replaced said, newest first."""
    lines = item.get("history") if isinstance(item, dict) else None
    if not isinstance(lines, list):
        return []
    said = [_SAID.sub("", str(line.get("summary", ""))) for line in lines if isinstance(line, dict)]
    return [text for text in said if text]


def _answer_line(item: Any) -> str:
    """The current value, then what it replaced as history (not when the older version
    says nothing the current one does not: a merge, not a change)."""
    earlier = _history(item)
    text = _item_text(item)
    if not earlier or _fact_key(earlier[0]) <= _fact_key(text):
        return text
    return f"{text} (earlier: {earlier[0]})"


def _answer(turn: _Turn) -> str:
    searches = ("memory_search_events", "memory_search_raw")
    found = [line.text for line in _best([f for s in searches for f in _evidence(turn, s)])]
    if not found:
        if _QUESTION.search(turn.question):
            return _say(turn, "unsure")
        return _say(turn, "noted")
    shown = _distinct(found)[:3]
    return _say(turn, "recalled") + "\n" + "\n".join(f"- {_in(turn, line)}" for line in shown)


def _distinct(found: list[str]) -> list[str]:
    """One line per fact: a line restating what a current card replaced is left out, and
    of two lines saying the same fact the fuller one is kept, in the first one's place."""
    replaced = [_fact_key(old) for text in found for old in _earlier(text)]
    kept: list[tuple[frozenset[str], str]] = []
    for text in found:
        key = _fact_key(text)
        if not _earlier(text) and any(key <= old for old in replaced):
            continue
        if any(key <= seen for seen, _ in kept):
            continue
        fuller = next((i for i, (seen, _) in enumerate(kept) if seen < key), None)
        if fuller is None:
            kept.append((key, text))
        else:
            kept[fuller] = (key, text)
    return [text for _, text in kept]


def _earlier(line: str) -> list[str]:
    """The older version an answer line names as history (a raw line saying it again is
    that history, not a second current value)."""
    _, sep, rest = line.partition(" (earlier: ")
    return [rest.removesuffix(")")] if sep else []


def _close_listed(turn: _Turn) -> ChatMessage:
    match = _STEER.search(turn.steer or "")
    ids = [i.strip() for i in match.group("ids").split(",")] if match else []
    if not ids:
        return text_reply(_answer(turn))
    return _call(turn, "memory_record_use", {"batch_id": ids[0], "evidence_refs": []})
