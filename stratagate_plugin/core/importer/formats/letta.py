"""A Letta agent file (``.af``) → v2 candidates from its core memory blocks.

Two generations of the schema (docs/import-formats.md names the files):

* current (``letta/schemas/agent_file.py``, ``AgentFileSchema``): ``{"agents": [...],
  "blocks": [{"id", "label", "value", "limit", "description", ...}], "groups", "tools",
  ...}``; an agent names its blocks by ``block_ids`` and may carry ``memory_blocks`` too.
* earlier (``letta/serialize_schemas/pydantic_agent_schema.py``, ``AgentSchema``): one
  agent object with ``core_memory: [{"label", "value", "limit", "created_at",
  "updated_at", ...}]``.

Some exports are the JSON text of that object inside a JSON string; it is unwrapped once.

What becomes memory: each line of a block's ``value`` (a prose line cut into sentences),
with the block's label as the category clue. The ``human`` block is the agent's notes on
the user: that is exactly what is wanted. A ``persona`` block (any label naming a persona)
is the *agent's* character ("I am Sam. My voice is soft"), not something the user said or
asked for; turning it into the user's instructions would invent them, so it is left out
and the coverage note says so. Placeholder lines (``Last name: ?``) and the starter
sentence Letta's default human block opens with are left out too.
"""

import json
from typing import Any

from ...errors import InvalidInput
from .candidates import Draft, Skipped, document, read_time
from .json_text import load_json, unfenced
from .lines import read_drafts

CONFIDENCE = 0.9
STARTER_LINES = ("this is what i know so far about the user",)
"""Letta's shipped starter text for the human block: the agent talking about its notes."""


def convert(text: str) -> dict[str, Any]:
    """An ``.af`` file's JSON → a v2 document."""
    agent_file = _agent_file(load_json(unfenced(text), "Letta agent file"))
    skipped = Skipped()
    drafts: list[Draft] = []
    for where, block in _blocks(agent_file):
        drafts.extend(_block_drafts(block, where, skipped))
    exported = read_time(agent_file.get("created_at"), skipped)
    return document("letta", drafts, skipped, confidence=CONFIDENCE, exported_at=exported)


def _agent_file(value: Any) -> dict[str, Any]:
    """The agent file object, unwrapping a JSON string that holds it."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        value = load_json(value, "Letta agent file (inside its JSON string)")
    if not isinstance(value, dict):
        raise InvalidInput("Letta agent file: expected a JSON object")
    return value


def _blocks(agent_file: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every memory block with where it stands, each block once (shared blocks are listed
    once under ``blocks``; an agent's inline ``memory_blocks`` and ``core_memory`` follow)."""
    found = [(f"blocks[{i}]", block) for i, block in enumerate(_list(agent_file, "blocks"))]
    found += [(f"core_memory[{i}]", b) for i, b in enumerate(_list(agent_file, "core_memory"))]
    for a, agent in enumerate(_list(agent_file, "agents")):
        if not isinstance(agent, dict):
            raise InvalidInput(f"Letta agent file agents[{a}]: expected an object")
        for key in ("memory_blocks", "core_memory"):
            found += [(f"agents[{a}].{key}[{i}]", b) for i, b in enumerate(_list(agent, key))]
    if not found:
        raise InvalidInput("Letta agent file has no memory blocks (blocks or core_memory)")
    return found


def _list(value: dict[str, Any], key: str) -> list[Any]:
    items = value.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise InvalidInput(f"Letta agent file: {key} must be a list")
    return items


def _block_drafts(block: Any, where: str, skipped: Skipped) -> list[Draft]:
    if not isinstance(block, dict):
        raise InvalidInput(f"Letta agent file {where}: expected a block object")
    label, value = block.get("label"), block.get("value")
    if not isinstance(label, str) or not isinstance(value, str):
        raise InvalidInput(f"Letta agent file {where}: label and value must be text")
    if "persona" in label.lower():
        skipped.add("persona blocks (the agent's own character, not a memory of the user)")
        return []
    hint = "" if label.lower() in ("human", "user") else label.replace("_", " ")
    moment = read_time(block.get("updated_at") or block.get("created_at"), skipped)
    drafts = []
    for draft in read_drafts(value, skipped, hint=hint):
        if draft.summary.lower().startswith(STARTER_LINES):
            skipped.add("Letta starter lines")
            continue
        draft.tags, draft.mentioned_at = (label,), moment
        drafts.append(draft)
    return drafts


def is_agent_file(value: Any) -> bool:
    """Whether a parsed JSON value looks like an agent file (for format detection)."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return False
    if not isinstance(value, dict):
        return False
    agents = value.get("agents")
    return isinstance(value.get("core_memory"), list) or (
        isinstance(agents, list) and isinstance(value.get("blocks"), list)
    )
