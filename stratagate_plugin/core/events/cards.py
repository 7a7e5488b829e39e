"""Event-card rules (spec §3): temporal normalisation, event-type aliases, card acceptance.

Pure functions. A card is accepted only when every source message it cites belongs to
the target block; relation ids are kept only when they name timeline events; malformed
temporal fields are dropped one by one and never cost the event itself.
"""

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..clock import UtcDatetime
from ..llm.tasks import Criticality, EventCardDraft, Scope

EventStatus = Literal["active", "superseded", "forgotten", "archived"]
Pool = Literal["conversation", "agent"]
EVENT_TYPES = (
    "decision",
    "release",
    "task_completed",
    "plan",
    "change",
    "cancellation",
    "incident",
    "meeting",
    "collaboration",
    "migration",
    "other",
)
_EVENT_TYPE_ALIASES = {
    "decided": "decision",
    "决定": "decision",
    "决策": "decision",
    "released": "release",
    "发布": "release",
    "上线": "release",
    "launch": "release",
    "completed": "task_completed",
    "done": "task_completed",
    "finished": "task_completed",
    "完成": "task_completed",
    "计划": "plan",
    "planned": "plan",
    "plans": "plan",
    "打算": "plan",
    "changed": "change",
    "变更": "change",
    "修改": "change",
    "更改": "change",
    "canceled": "cancellation",
    "cancelled": "cancellation",
    "cancel": "cancellation",
    "取消": "cancellation",
    "bug": "incident",
    "故障": "incident",
    "事故": "incident",
    "会议": "meeting",
    "开会": "meeting",
    "合作": "collaboration",
    "协作": "collaboration",
    "迁移": "migration",
    "migrated": "migration",
}
PRECISIONS = ("instant", "day", "month", "year", "range", "unknown")
BASES = ("explicit", "relative", "inferred", "unknown")
TEMPORAL_STATUSES = ("occurred", "planned", "cancelled", "ongoing", "unknown")
_SCALARS = (
    "mentioned_at",
    "happened_start",
    "happened_end",
    "original_text",
    "event_type",
    "thread_id",
    "same_event_id",
    "precision",
    "basis",
    "status",
)
RELATION_LISTS = (
    "before_event_ids",
    "after_event_ids",
    "supersedes_event_ids",
    "conflicts_with_event_ids",
    "related_event_ids",
)
_LISTS = ("participants", "participant_node_ids", *RELATION_LISTS)
_ENUMS = {"precision": PRECISIONS, "basis": BASES, "status": TEMPORAL_STATUSES}
_TIMES = ("mentioned_at", "happened_start", "happened_end")
MAX_TAGS, MAX_QUOTES, MAX_HINTS = 12, 12, 2


class EventCard(BaseModel):
    """A stored event (both pools). Weight fields are counters, never confidence."""

    id: str
    namespace: str
    pool: Pool = "conversation"
    title: str
    summary: str
    tags: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)
    source_block_id: str | None
    source_message_ids: list[str]
    formed_turn: int
    temporal: dict[str, Any]
    scope: Scope
    criticality: Criticality = "routine"
    status: EventStatus = "active"
    superseded_by: str | None = None
    mention_count: int = 1
    last_adopted_turn: int
    last_retrieved_at: UtcDatetime | None = None
    pinned: bool = False
    floor_weight: float = 0.0
    forced_cap: float | None = None
    catalog_hints: list[str] = Field(default_factory=list)
    created_at: UtcDatetime
    updated_at: UtcDatetime
    derived_by: str | None = None  # the model's name, "offline" or "offline-fallback"
    derive_error: str | None = None  # the model's error when the offline card was kept


def normalize_event_type(value: str) -> str:
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    if key in EVENT_TYPES:
        return key
    return _EVENT_TYPE_ALIASES.get(key, _EVENT_TYPE_ALIASES.get(value.strip(), "other"))


def normalize_temporal(raw: Any) -> dict[str, Any]:
    """Keep well-formed fields only: strings, all-string lists, known enum values, valid times."""
    if not isinstance(raw, Mapping):
        return {}
    clean: dict[str, Any] = {}
    for key in _SCALARS:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            clean[key] = value.strip()
    for key in _LISTS:
        value = raw.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            clean[key] = list(dict.fromkeys(v.strip() for v in value if v.strip()))
    for key, allowed in _ENUMS.items():
        if key in clean and clean[key] not in allowed:
            del clean[key]
    for key in _TIMES:
        if key in clean and not _is_iso_time(clean[key]):
            del clean[key]
    if "event_type" in clean:
        clean["event_type"] = normalize_event_type(clean["event_type"])
    if clean.get("precision") == "unknown" or clean.get("basis") == "unknown":
        clean.pop("happened_start", None)
        clean.pop("happened_end", None)
    return clean


def _is_iso_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def restrict_relations(temporal: dict[str, Any], allowed_ids: set[str]) -> dict[str, Any]:
    """Relation ids outside ``allowed_ids`` (the extraction timeline) are removed."""
    out = dict(temporal)
    for key in RELATION_LISTS:
        if key in out:
            out[key] = [i for i in out[key] if i in allowed_ids]
            if not out[key]:
                del out[key]
    if out.get("same_event_id") not in allowed_ids:
        out.pop("same_event_id", None)
    return out


def clean_strings(values: Iterable[Any], limit: int, max_chars: int = 400) -> list[str]:
    seen = dict.fromkeys(v.strip()[:max_chars] for v in values if isinstance(v, str) and v.strip())
    return list(seen)[:limit]


def accept_drafts(
    drafts: Iterable[EventCardDraft],
    allowed_message_ids: Iterable[str],
    timeline_ids: Iterable[str],
    default_mentioned_at: str,
) -> list[EventCardDraft]:
    """Valid cards with normalised fields; exact duplicates merged (sources/tags/quotes unioned).

    A relation may name an earlier card of the same answer as ``card:<n>`` (its index in the
    model's list): it is renumbered to that card's place among the accepted cards, and
    dropped when that card was not accepted or is not earlier.
    """
    allowed, timeline = set(allowed_message_ids), set(timeline_ids)
    merged: dict[str, EventCardDraft] = {}
    places: dict[str, str] = {}  # the model's card:<n> → card:<accepted place>
    for index, draft in enumerate(drafts):
        card = _accept_one(draft, allowed, timeline | set(places), default_mentioned_at)
        if card is None:
            continue
        card = card.model_copy(update={"temporal": renamed_relations(card.temporal, places)})
        key = _duplicate_key(card)
        merged[key] = _merge(merged[key], card) if key in merged else card
        places[local_ref(index)] = local_ref(list(merged).index(key))
    return list(merged.values())


def local_ref(place: int) -> str:
    """How a relation names the card at ``place`` of the same extraction answer."""
    return f"card:{place}"


def renamed_relations(temporal: dict[str, Any] | None, names: Mapping[str, str]) -> dict[str, Any]:
    """Relation ids replaced by ``names[id]`` where there is one (local refs → ids)."""
    out = dict(temporal or {})
    for key in RELATION_LISTS:
        if key in out:
            out[key] = list(dict.fromkeys(names.get(i, i) for i in out[key]))
    if out.get("same_event_id") in names:
        out["same_event_id"] = names[out["same_event_id"]]
    return out


def resolve_local_refs(draft: EventCardDraft, earlier_ids: list[str]) -> EventCardDraft:
    """``card:<n>`` relations of an accepted draft → the id given to the n-th card stored."""
    names = {local_ref(place): event_id for place, event_id in enumerate(earlier_ids)}
    return draft.model_copy(update={"temporal": renamed_relations(draft.temporal, names)})


def _accept_one(
    draft: EventCardDraft, allowed: set[str], timeline: set[str], mentioned_at: str
) -> EventCardDraft | None:
    title, summary = draft.title.strip()[:200], draft.summary.strip()[:1000]
    sources = list(dict.fromkeys(draft.source_message_ids))
    if not title or not summary or not sources or not set(sources) <= allowed:
        return None
    temporal = restrict_relations(normalize_temporal(draft.temporal), timeline)
    temporal.setdefault("mentioned_at", mentioned_at)
    return draft.model_copy(
        update={
            "title": title,
            "summary": summary,
            "source_message_ids": sources,
            "tags": clean_strings(draft.tags, 16, 80),
            "quotes": clean_strings(draft.quotes, MAX_QUOTES),
            "catalog_hints": clean_strings(draft.catalog_hints, MAX_HINTS, 64),
            "temporal": temporal,
        }
    )


def _duplicate_key(card: EventCardDraft) -> str:
    return json.dumps(
        [card.title, card.summary, card.scope, card.criticality, card.temporal],
        sort_keys=True,
        ensure_ascii=False,
    )


def _merge(first: EventCardDraft, second: EventCardDraft) -> EventCardDraft:
    return first.model_copy(
        update={
            "source_message_ids": list(
                dict.fromkeys(first.source_message_ids + second.source_message_ids)
            ),
            "tags": clean_strings([*first.tags, *second.tags], 16, 80),
            "quotes": clean_strings([*first.quotes, *second.quotes], MAX_QUOTES),
        }
    )


def chronology_key(temporal: Mapping[str, Any], created_at: str) -> str:
    """happenedStart ?? happenedEnd ?? mentionedAt ?? createdAt."""
    for key in ("happened_start", "happened_end", "mentioned_at"):
        if isinstance(temporal.get(key), str):
            return str(temporal[key])
    return created_at


def happened_label(temporal: Mapping[str, Any]) -> str:
    """When it happened, at its precision: ``2026`` for a year (今年), ``2026-05`` for a month,
    ``2026-04-20``, ``2026-12-02 15:00``, ``a..b`` for a range; "" when unknown."""
    start, end = temporal.get("happened_start"), temporal.get("happened_end") or ""
    if not isinstance(start, str) or not _is_iso_time(start):
        return ""
    widths = {"year": 4, "month": 7, "day": 10, "instant": 16}
    width = widths.get(str(temporal.get("precision", "")))
    if width is not None:
        return start.replace("T", " ")[:width]
    last = end[:10] if isinstance(end, str) and end[:10] != start[:10] else ""
    return f"{start[:10]}..{last}" if last else start[:10]


def event_search_text(
    title: str, summary: str, tags: list[str], quotes: list[str], temporal: Mapping[str, Any]
) -> str:
    """Everything a lexical search may match on an event (for the FTS candidate index)."""
    parts = [title, summary, *tags, *quotes, *temporal.get("participants", [])]
    for key in ("event_type", "original_text", "happened_start", "happened_end"):
        if isinstance(temporal.get(key), str):
            parts.append(temporal[key])
    return "\n".join(parts)
