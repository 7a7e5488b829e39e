"""mem0's ``get_all`` JSON and an OpenMemory export → v2 candidates.

Shapes (docs/import-formats.md names the source files they were read from):

* mem0 ``Memory.get_all`` / ``MemoryClient.get_all``: a bare list of memory items (v1), or
  ``{"results": [...], "relations": [...]}`` (v1.1 and later; the platform's paginated
  form adds ``count``/``next``). An item: ``id``, ``memory`` (the text), ``hash``,
  ``metadata``, ``categories`` (platform), ``created_at``, ``updated_at``, ``user_id`` …
  A graph relation: ``source``, ``relationship``, ``target`` (or ``destination``).
* OpenMemory's export (``POST /api/v1/backup/export``) is a zip holding ``memories.json``
  (``{"user", "apps", "categories": [{id, name}], "memories": [{id, content, state,
  created_at, updated_at, category_ids, ...}], "export_meta": {generated_at}, ...}``) and
  ``memories.jsonl.gz``, one ``{id, content, state, created_at, updated_at, app,
  categories: [names]}`` per line. Either file's content (unzipped) is accepted.

A memory's time is when its current text was written (``updated_at``, else
``created_at``): that is ``mentionedAt``. Deleted and archived OpenMemory memories are
left out (counted in the coverage note): the user removed them there.
"""

from typing import Any

from ...errors import InvalidInput
from .candidates import Draft, Skipped, document, read_time, text_list
from .json_text import json_records, unfenced

CONFIDENCE = 0.9
"""Memories another system stored and the user kept; converted field by field."""
REMOVED_STATES = frozenset({"deleted", "archived"})


def convert(text: str) -> dict[str, Any]:
    """mem0 or OpenMemory JSON (or JSON lines) → a v2 document."""
    records = json_records(unfenced(text), "mem0 export")
    if len(records) == 1 and isinstance(records[0][1], dict):
        return _convert_object(records[0][1])
    first = records[0][1] if records else None
    return _convert_items(records, _system_of(first) if isinstance(first, dict) else "mem0", {})


def _convert_object(value: dict[str, Any]) -> dict[str, Any]:
    """One JSON object: a ``get_all`` result, an OpenMemory ``memories.json``, or a single
    memory item (a one-line JSON lines file)."""
    if isinstance(value.get("memories"), list):
        names = _category_names(value.get("categories"))
        items = [(f"memories[{i}]", item) for i, item in enumerate(value["memories"])]
        meta = value.get("export_meta")
        exported = meta.get("generated_at") if isinstance(meta, dict) else None
        return _convert_items(items, "openmemory", names, exported)
    if isinstance(value.get("results"), list):
        items = [(f"results[{i}]", item) for i, item in enumerate(value["results"])]
        relations = value.get("relations")
        paged = isinstance(value.get("next"), str) and bool(value["next"].strip())
        return _convert_items(items, "mem0", {}, relations=relations, paged=paged)
    if "memory" in value or "content" in value:
        return _convert_items([("item 1", value)], _system_of(value), {})
    raise InvalidInput(
        'mem0 export: expected a list of memories, {"results": [...]} or an OpenMemory '
        '{"memories": [...]}'
    )


def _convert_items(
    items: list[tuple[str, Any]],
    system: str,
    category_names: dict[str, str],
    exported: Any = None,
    relations: Any = None,
    paged: bool = False,
) -> dict[str, Any]:
    skipped = Skipped()
    if paged:  # the platform's paginated answer: only this page is in the text
        skipped.add("later pages of the paginated answer (export each page)")
    drafts = []
    for where, item in items:
        if not isinstance(item, dict):
            raise InvalidInput(f"mem0 export {where}: expected an object with the memory text")
        if draft := _draft(item, where, category_names, skipped):
            drafts.append(draft)
    drafts.extend(_relation_drafts(relations, skipped))
    if not drafts and not skipped.reasons:
        raise InvalidInput("mem0 export holds no memories")
    return document(system, drafts, skipped, confidence=CONFIDENCE, exported_at=_time(exported))


def _draft(
    item: dict[str, Any], where: str, category_names: dict[str, str], skipped: Skipped
) -> Draft | None:
    key = "memory" if "memory" in item else "content"
    text = item.get(key)
    if not isinstance(text, str):
        raise InvalidInput(f"mem0 export {where}.{key}: expected the memory's text")
    state = item.get("state")
    if isinstance(state, str) and state in REMOVED_STATES:
        skipped.add(f"{state} memories")
        return None
    if not text.strip():
        skipped.add("empty memories")
        return None
    categories = text_list(item.get("categories")) or [
        category_names[c] for c in text_list(item.get("category_ids")) if c in category_names
    ]
    metadata = item.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("category"), str):
        categories.append(metadata["category"])
    moment = item.get("updated_at") or item.get("created_at")
    return Draft(
        summary=text,
        hint=" ".join(categories),
        tags=tuple(categories),
        mentioned_at=read_time(moment, skipped),
    )


def _relation_drafts(relations: Any, skipped: Skipped) -> list[Draft]:
    """mem0 graph relations (``source``, ``relationship``, ``target``) as one memory each."""
    drafts = []
    for relation in relations if isinstance(relations, list) else []:
        parts = _relation_parts(relation)
        if parts is None:
            skipped.add("relations without source, relationship and target")
            continue
        drafts.append(Draft(summary=" ".join(parts), hint=parts[1], tags=("relation",)))
    return drafts


def _relation_parts(relation: Any) -> tuple[str, str, str] | None:
    if not isinstance(relation, dict):
        return None
    target = relation.get("target", relation.get("destination"))
    parts = (relation.get("source"), relation.get("relationship"), target)
    if not all(isinstance(part, str) and part.strip() for part in parts):
        return None
    return str(parts[0]), str(parts[1]), str(parts[2])


def _category_names(categories: Any) -> dict[str, str]:
    """OpenMemory's category table: id → name."""
    rows = categories if isinstance(categories, list) else []
    return {
        row["id"]: row["name"]
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("id"), str)
        if isinstance(row.get("name"), str)
    }


def _system_of(item: dict[str, Any]) -> str:
    """OpenMemory writes ``content``; mem0 itself writes ``memory``."""
    return "openmemory" if "content" in item and "memory" not in item else "mem0"


def _time(value: Any) -> str | None:
    return read_time(value, Skipped())
