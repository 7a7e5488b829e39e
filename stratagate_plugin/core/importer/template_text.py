"""Template text in another system's memory: proposed IGNORE, with the reason said.

An agent framework ships its memory blocks with starter text ("(populated through
interaction)", "Things they like: [not yet learned]", "Haven't learned their preferences
yet") and with notes from the agent to itself ("I apply these without announcing"). Read
as lines, each looks like a memory and would be written at full confidence; none says
anything about the user. The rules are general, not a list of one vendor's strings:

* a placeholder: the value (after a ``Label:``) is only a bracketed or parenthesised
  phrase, or empty, ``?``, ``unknown``, ``TBD``, ``N/A``…;
* nothing known yet: "not yet learned", "haven't learned their …", "尚未了解";
* the agent speaking: first person about how it keeps or applies its memory ("I apply",
  "I will update"), or an imperative to the agent about its block ("Update this section
  as you learn"). First person is the agent only in an agent's own store (Letta, an MCP
  graph, mem0); in a pasted list "I" is the user, so that rule is not applied there.

Only a proposal: the wizard shows it as IGNORE with its reason and the user may take it.
"""

import re

from .jobs import Decision

AGENT_SOURCES = frozenset({"letta", "mcp-memory", "mem0", "openmemory"})
PLACEHOLDER = "template text, not a memory: a placeholder with no value"
NOT_YET = "template text, not a memory: says nothing is known yet"
TO_AGENT = "template text, not a memory: an instruction to the agent about its memory"

_LABEL = re.compile(r"^[^:：]{1,60}[:：]\s*")
_BRACKETED = re.compile(
    r"^\s*(\[[^\[\]]*\]|\([^()]*\)|（[^（）]*）|【[^【】]*】|<[^<>]*>|\{[^{}]*\})\s*[.。]?\s*$"
)
_EMPTY_VALUES = frozenset(
    {
        "",
        "?",
        "??",
        "-",
        "—",
        "…",
        "...",
        "n/a",
        "na",
        "none",
        "unknown",
        "tbd",
        "todo",
        "none yet",
        "not set",
        "not known",
        "empty",
        "未知",
        "暂无",
        "待定",
        "无",
        "待补充",
    }
)
_NOT_YET = re.compile(
    r"\b(?:not yet|haven'?t|have not|hasn'?t|has not|nothing|no \w+)\b(?: \w+)? (?:been )?"
    r"(?:learn(?:ed|t)|known|shared|recorded|discovered|gathered|collected|populated|"
    r"provided|specified|mentioned)\b"
    r"(?:\s*$|\s+(?:yet|so far|about|their|his|her|the user'?s?|any|anything|much|preferences|"
    r"details|info|information|this)\b)",
    re.IGNORECASE,
)
_NOT_YET_ZH = re.compile(r"(尚未|还没有?|还未|暂未|暂无)(了解|得知|知道|学到|记录|填写|获取|收集)")
_AGENT_FIRST_PERSON = re.compile(
    r"^(?:i|i'll|i will|i should|i must|i always|i never)\s+"
    r"(?:\w+\s+){0,2}?(?:apply|use|update|keep|track|record|store|note|expand|remember|"
    r"follow|announce|mention|reference|consult|check|save|learn)\b",
    re.IGNORECASE,
)
_AGENT_FIRST_PERSON_ZH = re.compile(r"^我(会|将|应该|应当|要)(更新|记录|使用|应用|遵循|记住|补充)")
_TO_BLOCK = re.compile(
    r"^(?:update|use|fill(?: in)?|replace|add|record|store|keep|expand|edit|track|write)\b.*"
    r"\b(?:this (?:block|section|field|memory|list)|here|as you (?:learn|go)|when you learn)\b",
    re.IGNORECASE,
)


def template_reason(summary: str, source_system: str) -> str | None:
    """Why ``summary`` is template text rather than a memory, or None when it is a memory."""
    text = " ".join(summary.split())
    value = _LABEL.sub("", text, count=1)
    if value.lower().rstrip(".。") in _EMPTY_VALUES or _BRACKETED.match(value):
        return PLACEHOLDER
    if _NOT_YET.search(text) or _NOT_YET_ZH.search(text):
        return NOT_YET
    if _TO_BLOCK.search(text):
        return TO_AGENT
    agent_store = source_system in AGENT_SOURCES
    if agent_store and (_AGENT_FIRST_PERSON.search(text) or _AGENT_FIRST_PERSON_ZH.search(text)):
        return TO_AGENT
    return None


def template_ignore(reason: str) -> Decision:
    """The proposal for template text: IGNORE, not asked about (the user may still add it)."""
    return Decision(
        action="IGNORE",
        reason=reason,
        confidence=0.9,
        requires_confirmation=False,
        gate="template",
    )
