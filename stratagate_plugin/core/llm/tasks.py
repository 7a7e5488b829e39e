"""Structured model tasks: their names and output schemas (spec §3, §14).

Temporal fields arrive as a loose dict and are normalised by the event rules, so one
malformed field never loses an event; ``scope`` is strict so an invalid one triggers
the bounded retry. Relation lists name timeline ids; a later card may also name an earlier
card of the same answer as ``card:<n>`` (``n`` its index in ``events``, from 0), so a
correction within one block ("we moved the launch to May") can supersede the plan it
corrects, which has no id yet.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..graph.shapes import GraphProjection

SUMMARIZE_BLOCK = "summarize_block"
EXTRACT_EVENT_CARDS = "extract_event_cards"
PROJECT_GRAPH = "project_graph"
__all__ = ["GraphProjection"]  # PROJECT_GRAPH's output type (spec §4), shaped in core.graph

Scope = Literal["user", "project", "session"]
Criticality = Literal["routine", "preference", "identity", "safety"]


class BlockSummary(BaseModel):
    """L0 title + tags, L1 narrative, L2 atomic key points, and the extraction pre-screen."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=120)
    tags: list[str] = Field(default_factory=list, max_length=12)
    summary: str = Field(min_length=1, max_length=2000)
    keypoints: list[str] = Field(default_factory=list, max_length=20)
    should_extract: bool = True


class EventCardDraft(BaseModel):
    """An event card as a model proposes it (spec §3.1); ids are validated against the block."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=1000)
    source_message_ids: list[str] = Field(min_length=1)
    scope: Scope
    criticality: Criticality = "routine"
    tags: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)
    catalog_hints: list[str] = Field(default_factory=list)
    temporal: dict[str, Any] | None = None


class EventExtraction(BaseModel):
    """The extractor's answer for one target block."""

    model_config = ConfigDict(extra="ignore")

    should_extract: bool
    events: list[EventCardDraft] = Field(default_factory=list)


TEMPORAL_FIELDS_DOC = {
    "mentioned_at": "ISO-8601 with offset: when it was said (the source message time)",
    "happened_start": "ISO-8601 with offset: when it happened or is planned to start",
    "happened_end": "ISO-8601 with offset: when it ended or is planned to end",
    "original_text": "the words that state the time, verbatim",
    "precision": "instant | day | month | year | range | unknown",
    "basis": "explicit | relative | inferred | unknown",
    "status": "occurred | planned | cancelled | ongoing | unknown",
    "participants": "canonical names of the people/organisations involved",
    "event_type": "decision | release | task_completed | plan | change | cancellation | "
    "incident | meeting | collaboration | migration | other",
    "same_event_id": "timeline id this continues",
    "before_event_ids": "timeline ids this happened before",
    "after_event_ids": "timeline ids this happened after",
    "supersedes_event_ids": "timeline ids (or card:<n>) this explicitly replaces/corrects",
    "conflicts_with_event_ids": "timeline ids this contradicts without replacing",
    "related_event_ids": "other related timeline ids",
}


# Payload shapes (what every model implementation receives in ``StructuredTask.payload``):
#
# message  = {"id", "role", "content", "created_at" (ISO-8601 UTC), "thread_id",
#             "tool_calls": [{"name", "arguments", "result"}]}   (derivation view of L5)
# SUMMARIZE_BLOCK     payload = {"block": {"id", "sequence", "start_turn", "end_turn",
#                                          "messages": [message, ...]}}
# EXTRACT_EVENT_CARDS payload = {"target": {"block_id", "sequence", "start_turn", "end_turn",
#                                           "created_at", "messages": [message, ...]},
#                                "neighbors": {"previous": [keypoint, ...], "next": [...]},
#                                "allowed_source_message_ids": [id, ...],
#                                "timeline": [{"id", "title", "summary", "scope", "status",
#                                              "mentioned_at", "happened_start",
#                                              "happened_end", "participants",
#                                              "event_type"}, ...]}


PROJECT_MEMORY_TOPICS = "project_memory_topics"
ParagraphKind = Literal["history", "decision", "change", "open-question", "scope"]


class TopicParagraph(BaseModel):
    """An overview paragraph of a chapter (§5.1): what its 1–12 cited events say together."""

    model_config = ConfigDict(extra="ignore")

    kind: ParagraphKind
    title: str | None = Field(default=None, max_length=80)
    text: str = Field(min_length=1, max_length=600)
    event_ids: list[str] = Field(min_length=1, max_length=12)


class TopicSection(BaseModel):
    """A lasting category inside a chapter and its member events."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=80)
    event_ids: list[str] = Field(default_factory=list)


class ProjectedTopic(BaseModel):
    """One chapter of a projection: an exposed candidate (``topic_id``) or a new one; its
    ``event_ids`` are the batch events it takes."""

    model_config = ConfigDict(extra="ignore")

    topic_id: str | None = None
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=400)
    event_ids: list[str] = Field(min_length=1)
    sections: list[TopicSection] = Field(default_factory=list)
    overview: list[TopicParagraph] = Field(default_factory=list)


class TopicProjection(BaseModel):
    """The topic projector's answer for one batch of events."""

    model_config = ConfigDict(extra="ignore")

    topics: list[ProjectedTopic] = Field(default_factory=list)


# PROJECT_MEMORY_TOPICS payload = {"events": [compact event, ...], "truncated_event_ids": [...],
#   "candidates": [{"topic_id", "title", "description", "sections": [title, ...],
#                   "overview": [paragraph, ...] (≤ 4), "keywords": [...],
#                   "continued_event_ids": [batch event ids already its members]}, ...]}
# compact event = {"id", "title", "summary", "tags", "participants", "event_type",
#                  "criticality", "catalog_hints", "status", "time"}
# PROJECT_GRAPH       payload = {"batch_id", "events": [{"id", "title", "summary", "tags",
#                                "quotes", "participants", "event_type", "status",
#                                "criticality", "mentioned_at", "happened_start",
#                                "created_at"}, ...],
#                                "nodes": [{"id", "name", "type", "aliases"}, ...]}
