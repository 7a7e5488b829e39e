"""Graph data shapes (spec §4): a projector's drafts with the §4 limits, and stored records.

A projection names its nodes by a local ``ref`` (edges point at refs); every node, fact
and edge lists the batch events it comes from. Stored facts and edges are bi-temporal:
``valid_from``/``valid_to`` say when it was true in the world, ``learned_at`` when the
projection wrote it and ``superseded_at`` when we stopped believing it.
"""

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..clock import UtcDatetime

NodeType = Literal["person", "project", "organization", "tool", "place", "animal"]
RecordStatus = Literal["active", "superseded", "disputed", "archived"]
FactValue = str | list[str]
NODE_TYPES: tuple[str, ...] = ("person", "project", "organization", "tool", "place", "animal")
MAX_NODES, MAX_EDGES = 24, 32
MAX_ALIASES, MAX_TAGS = 20, 12
NAME_CHARS, KEY_CHARS, VALUE_CHARS, RELATION_CHARS = 160, 160, 1200, 100
VALUE_ITEMS = 40
GRAPH_PROVENANCE_LIMIT = 6
PROJECTOR_VERSION = 1
DEFAULT_CONFIDENCE = 0.8
_STRIP = re.compile(r"[\s_\-]+")


def normalise_key(name: str) -> str:
    """The key a name is stored and matched under (``name_key``, ``alias_key``): NFKC,
    lower-case, whitespace collapsed, then spaces, underscores and hyphens stripped."""
    collapsed = " ".join(unicodedata.normalize("NFKC", name).lower().split())
    return _STRIP.sub("", collapsed)


def value_text(value: "FactValue") -> str:
    """A fact value as one comparable text (arrays joined with ``、`` as the spec renders)."""
    return "、".join(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class Known:
    """An existing node as resolution sees it: its type and every key it answers to."""

    node_id: str
    type: str
    keys: frozenset[str]


@dataclass(frozen=True)
class Believed:
    """A stored current fact or edge as the supersede rules see it."""

    id: str
    target: str  # a fact's value (JSON text) or an edge's ``to`` node
    valid_from: str | None
    stated_at: str | None = None


def _clean_list(values: list[str], limit: int, chars: int) -> list[str]:
    seen = dict.fromkeys(v.strip()[:chars] for v in values if isinstance(v, str) and v.strip())
    return list(seen)[:limit]


class _Draft(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FactDraft(_Draft):
    """``key → value`` on its node; ``valid_from`` defaults to its sources' chronology."""

    key: str = Field(min_length=1, max_length=KEY_CHARS)
    value: FactValue
    source_event_ids: list[str] = Field(default_factory=list)
    valid_from: str | None = None
    confidence: float = Field(default=DEFAULT_CONFIDENCE, ge=0, le=1)

    @field_validator("value")
    @classmethod
    def _bounded(cls, value: FactValue) -> FactValue:
        if isinstance(value, list):
            return _clean_list(value, VALUE_ITEMS, 160)
        return value.strip()[:VALUE_CHARS]


class NodeDraft(_Draft):
    """A proposed node: matched to an existing one by type and normalised name or alias."""

    ref: str = Field(min_length=1, max_length=NAME_CHARS)
    name: str = Field(min_length=1, max_length=NAME_CHARS)
    type: NodeType
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    source_event_ids: list[str] = Field(default_factory=list)
    facts: list[FactDraft] = Field(default_factory=list)
    alias_sources: dict[str, list[str]] = Field(default_factory=dict)
    tag_sources: dict[str, list[str]] = Field(default_factory=dict)

    def field_sources(self, field: str, value: str) -> list[str]:
        """The events that gave one alias or tag (its field provenance); none given → the
        node's own sources, which are the evidence it was proposed from."""
        given = (self.alias_sources if field == "alias" else self.tag_sources).get(value)
        return list(given) if given else list(self.source_event_ids)

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, values: list[str]) -> list[str]:
        return _clean_list(values, MAX_ALIASES, NAME_CHARS)

    @field_validator("tags")
    @classmethod
    def _tags(cls, values: list[str]) -> list[str]:
        return _clean_list(values, MAX_TAGS, 60)


class EdgeDraft(_Draft):
    """A directed relation between two node refs of the same projection. ``exclusive``: one
    target at a time (``lives_in``), so a new target supersedes the old; else (``uses``,
    ``friend``) targets accumulate and only the same target again merges."""

    from_ref: str = Field(min_length=1)
    to_ref: str = Field(min_length=1)
    relation: str = Field(min_length=1, max_length=RELATION_CHARS)
    source_event_ids: list[str] = Field(default_factory=list)
    valid_from: str | None = None
    confidence: float = Field(default=DEFAULT_CONFIDENCE, ge=0, le=1)
    exclusive: bool = True


class GraphProjection(_Draft):
    """A projector's answer for one batch (≤ 24 nodes, ≤ 32 edges)."""

    nodes: list[NodeDraft] = Field(default_factory=list, max_length=MAX_NODES)
    edges: list[EdgeDraft] = Field(default_factory=list, max_length=MAX_EDGES)


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Statement(_Record):
    """What facts and edges share: status, confidence, both times, and the sources."""

    id: str
    status: RecordStatus
    confidence: float
    valid_from: str | None = None
    valid_to: str | None = None
    learned_at: UtcDatetime
    superseded_at: UtcDatetime | None = None
    source_event_ids: tuple[str, ...] = ()


class GraphFact(_Statement):
    node_id: str
    key: str
    value: FactValue


class GraphEdge(_Statement):
    from_node_id: str
    to_node_id: str
    relation: str


class GraphNode(_Record):
    id: str
    namespace: str
    name: str
    type: NodeType
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    status: RecordStatus = "active"
    confidence: float = DEFAULT_CONFIDENCE
    source_event_ids: tuple[str, ...] = ()
    visible_sources: int = 0
    """How many of its sources are visible events (active or superseded): kept by the
    store with every write that changes them, so a listing need not read the sources."""
    created_at: UtcDatetime
    updated_at: UtcDatetime


class PossibleDuplicate(_Record):
    """Two nodes kept apart whose names nearly match: listed for a person, never merged."""

    node_id: str
    other_id: str
    reason: str


RecordParts = Literal["nodes", "edges", "all"]
"""What a listing reads beside its nodes: nothing more (the graph page's list: names and
importance), the edges among them (the canvas), or their sources, facts, edges and fields'
sources (a whole view)."""


class NodeRecords(NamedTuple):
    """Nodes as stored with what their views are made of (``views.assemble``)."""

    nodes: list[GraphNode]
    facts: list[GraphFact]
    edges: list[GraphEdge]
    names: dict[str, str]
    """Node id → name, for every end of those edges."""
    statuses: dict[str, str]
    """Event id → status, for every event those records cite."""
    field_sources: dict[tuple[str, str, str], tuple[str, ...]] | None = None
    """(node id, ``alias`` or ``tag``, value key) → the visible events that gave it, oldest
    first, for the nodes with aliases or tags; ``None``: not read (retrieval's views)."""
