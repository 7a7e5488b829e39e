"""MCP memory servers' knowledge graphs → v2 candidates.

``modelcontextprotocol/servers`` ``src/memory/index.ts`` saves ``memory.jsonl``: one JSON
object per line, ``{"type": "entity", "name", "entityType", "observations": [text]}`` or
``{"type": "relation", "from", "to", "relationType"}``. Its ``read_graph`` tool answers
``{"entities": [...], "relations": [...]}`` with the same objects (no ``type``).

Other servers write the same graph in dialects: relations spelled ``from_entity`` /
``to_entity`` (or ``source`` / ``target``, ``relation_type``), lines without a ``type``
key, ``createdAt`` / ``updatedAt`` on a line, observations as ``{"content", "createdAt"}``
objects. So a line is read by its SHAPE, not its ``type``: a name with observations or an
entity type is an entity, two ends and a relation word are a relation. A line that fits
neither is skipped and counted (the coverage note names its lines) rather than refusing the
whole file: one odd line from a third-party server must not cost the other hundred.

Each observation is one memory (the server stores one fact per observation), titled with
its entity; each relation is one memory too. A line's own time (``createdAt``, else
``updatedAt``) is the memory's mentioned time.
"""

from typing import Any

from ...errors import InvalidInput
from .candidates import Draft, Skipped, document, read_time
from .json_text import json_records, unfenced

CONFIDENCE = 0.9
FROM_KEYS = ("from", "from_entity", "fromEntity", "source")
TO_KEYS = ("to", "to_entity", "toEntity", "target")
RELATION_KEYS = ("relationType", "relation_type", "relation")
TYPE_KEYS = ("entityType", "entity_type")
TIME_KEYS = ("createdAt", "created_at", "updatedAt", "updated_at", "timestamp")
SHOWN_LINES = 5
"""How many unrecognised lines the coverage note names before it says "…"."""


def convert(text: str) -> dict[str, Any]:
    """``memory.jsonl`` (any dialect) or a ``read_graph`` result → a v2 document."""
    skipped = Skipped()
    drafts: list[Draft] = []
    records = _records(unfenced(text))
    types = {
        name: _first_text(r, TYPE_KEYS)
        for _, r, kind in records
        if kind == "entity" and (name := _first_text(r, ("name",)))
    }
    unrecognised: list[tuple[str, str]] = []
    for where, record, kind in records:
        try:
            if kind == "entity":
                drafts.extend(_entity_drafts(record, where, skipped))
            elif kind == "relation":
                drafts.append(_relation_draft(record, where, types, skipped))
            else:
                raise InvalidInput(f"MCP memory file {where}: {kind}")
        except InvalidInput as error:
            unrecognised.append((where, str(error)))
    if unrecognised and not drafts:
        raise InvalidInput(unrecognised[0][1])
    _count_unrecognised(unrecognised, skipped)
    if not drafts and not skipped.reasons:
        raise InvalidInput("MCP memory file holds no entities or relations")
    return document("mcp-memory", drafts, skipped, confidence=CONFIDENCE)


def _count_unrecognised(unrecognised: list[tuple[str, str]], skipped: Skipped) -> None:
    if not unrecognised:
        return
    places = [where.removeprefix("line ").removeprefix("item ") for where, _ in unrecognised]
    named = ", ".join(places[:SHOWN_LINES]) + (", …" if len(places) > SHOWN_LINES else "")
    skipped.add(f"lines that are neither an entity nor a relation: {named}", len(places))


def shape_of(record: Any) -> str | None:
    """``entity`` or ``relation`` by a record's keys, else ``None`` (for detection too)."""
    if not isinstance(record, dict):
        return None
    if record.get("type") in ("entity", "relation"):
        return str(record["type"])
    if _has(record, FROM_KEYS) and _has(record, TO_KEYS) and _has(record, RELATION_KEYS):
        return "relation"
    if "name" in record and ("observations" in record or _has(record, TYPE_KEYS)):
        return "entity"
    return None


def _has(record: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return any(key in record for key in keys)


def _records(text: str) -> list[tuple[str, dict[str, Any], str]]:
    """``(where, object, shape)`` for every line, in file order; a line of no known shape
    has as its shape the reason it fits none."""
    rows = json_records(text, "MCP memory file")
    if len(rows) == 1 and isinstance(rows[0][1], dict) and shape_of(rows[0][1]) is None:
        return _graph_records(rows[0][1])
    found = []
    for where, record in rows:
        kind = shape_of(record)
        if kind is None:
            kind = 'expected an object with a "type", or an entity or relation shape'
        found.append((where, record if isinstance(record, dict) else {}, kind))
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
    name = _text(record, ("name",), where)
    kind = _first_text(record, TYPE_KEYS) or "entity"
    observations = record.get("observations", [])
    if not isinstance(observations, list):
        raise InvalidInput(f"MCP memory file {where}: observations must be a list of text")
    line_time = _time(record, skipped)
    drafts = []
    for observation in observations:
        said, moment = _observation(observation, where, skipped)
        if said:
            drafts.append(
                Draft(
                    summary=f"{name} ({kind}): {said}",
                    title=f"{name}: {said}",
                    hint=kind,
                    tags=(kind, name),
                    mentioned_at=moment or line_time,
                )
            )
    if not drafts:
        skipped.add("entities without observations")
    return drafts


def _observation(value: Any, where: str, skipped: Skipped) -> tuple[str, str | None]:
    """An observation's text and own time: plain text, or ``{"content", "createdAt"}``."""
    if isinstance(value, str):
        return value.strip(), None
    if isinstance(value, dict):
        said = _first_text(value, ("content", "text", "observation"))
        if said:
            return said, _time(value, skipped)
    raise InvalidInput(f"MCP memory file {where}: observations must be a list of text")


def _relation_draft(
    record: dict[str, Any], where: str, types: dict[str, Any], skipped: Skipped
) -> Draft:
    """``from relationType to``; the category clue is the relation's words, then the type of
    the entity it points to (``maintains`` → a ``project`` entity)."""
    source, target = _text(record, FROM_KEYS, where), _text(record, TO_KEYS, where)
    relation = _text(record, RELATION_KEYS, where)
    target_type = types.get(target)
    words = relation.replace("_", " ")
    return Draft(
        summary=f"{source} {relation} {target}",
        hint=f"{words} {target_type}" if isinstance(target_type, str) else words,
        tags=("relation", source, target),
        mentioned_at=_time(record, skipped),
    )


def _time(record: dict[str, Any], skipped: Skipped) -> str | None:
    """The record's own time: the first of ``createdAt``, ``updatedAt``, … it carries."""
    for key in TIME_KEYS:
        if record.get(key) not in (None, ""):
            return read_time(record[key], skipped)
    return None


def _first_text(record: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _text(record: dict[str, Any], keys: tuple[str, ...], where: str) -> str:
    value = _first_text(record, keys)
    if not value:
        raise InvalidInput(f"MCP memory file {where}: {keys[0]} must be non-empty text")
    return value
