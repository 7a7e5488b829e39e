"""The MCP reference memory server's knowledge graph → v2 candidates.

``modelcontextprotocol/servers`` ``src/memory/index.ts`` saves ``memory.jsonl``: one JSON
object per line, ``{"type": "entity", "name", "entityType", "observations": [text]}`` or
``{"type": "relation", "from", "to", "relationType"}``. Its ``read_graph`` tool answers
``{"entities": [...], "relations": [...]}`` with the same objects (no ``type``); both are
accepted. Each observation is one memory (the server stores one fact per observation),
titled with its entity; each relation is one memory too. The graph has no times, so no
candidate has a ``temporal``.
"""

from typing import Any

from ...errors import InvalidInput
from .candidates import Draft, Skipped, document
from .json_text import json_records, unfenced

CONFIDENCE = 0.9


def convert(text: str) -> dict[str, Any]:
    """``memory.jsonl`` or a ``read_graph`` result → a v2 document."""
    skipped = Skipped()
    drafts: list[Draft] = []
    records = _records(unfenced(text))
    types = {
        r["name"]: r.get("entityType")
        for _, r, kind in records
        if kind == "entity" and isinstance(r.get("name"), str)
    }
    for where, record, kind in records:
        if kind == "entity":
            drafts.extend(_entity_drafts(record, where, skipped))
        elif kind == "relation":
            drafts.append(_relation_draft(record, where, types))
        else:
            skipped.add("lines of another type")
    if not drafts and not skipped.reasons:
        raise InvalidInput("MCP memory file holds no entities or relations")
    return document("mcp-memory", drafts, skipped, confidence=CONFIDENCE)


def _records(text: str) -> list[tuple[str, dict[str, Any], str]]:
    """``(where, object, type)`` for every entity and relation, in file order."""
    rows = json_records(text, "MCP memory file")
    if len(rows) == 1 and isinstance(rows[0][1], dict) and "type" not in rows[0][1]:
        return _graph_records(rows[0][1])
    found = []
    for where, record in rows:
        if not isinstance(record, dict):
            raise InvalidInput(f'MCP memory file {where}: expected an object with a "type"')
        found.append((where, record, str(record.get("type"))))
    return found


def _graph_records(graph: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """A ``read_graph`` answer: its entities, then its relations."""
    found = []
    for key, kind in (("entities", "entity"), ("relations", "relation")):
        rows = graph.get(key, [])
        if not isinstance(rows, list):
            raise InvalidInput(f"MCP memory graph: {key} must be a list")
        for index, record in enumerate(rows):
            if not isinstance(record, dict):
                raise InvalidInput(f"MCP memory graph {key}[{index}]: expected an object")
            found.append((f"{key}[{index}]", record, kind))
    if not found and not {"entities", "relations"} & graph.keys():
        raise InvalidInput('MCP memory file: expected {"entities": [...], "relations": [...]}')
    return found


def _entity_drafts(record: dict[str, Any], where: str, skipped: Skipped) -> list[Draft]:
    name, kind = _text(record, "name", where), _text(record, "entityType", where)
    observations = record.get("observations")
    if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
        raise InvalidInput(f"MCP memory file {where}: observations must be a list of text")
    kept = [observation for observation in observations if observation.strip()]
    if not kept:
        skipped.add("entities without observations")
    return [
        Draft(
            summary=f"{name} ({kind}): {observation}",
            title=f"{name}: {observation}",
            hint=kind,
            tags=(kind, name),
        )
        for observation in kept
    ]


def _relation_draft(record: dict[str, Any], where: str, types: dict[str, Any]) -> Draft:
    """``from relationType to``; the category clue is the relation's words, then the type of
    the entity it points to (``maintains`` → a ``project`` entity)."""
    source, target = _text(record, "from", where), _text(record, "to", where)
    relation = _text(record, "relationType", where)
    target_type = types.get(record["to"])
    words = relation.replace("_", " ")
    return Draft(
        summary=f"{source} {relation} {target}",
        hint=f"{words} {target_type}" if isinstance(target_type, str) else words,
        tags=("relation", source, target),
    )


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"MCP memory file {where}: {key} must be non-empty text")
    return value.strip()
