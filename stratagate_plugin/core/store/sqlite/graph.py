"""The graph's storage contract (``core/graph/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from ...clock import iso
from ...events.cards import EventCard
from ...graph.shapes import Believed, FactValue, Known, NodeRecords, RecordParts, normalise_key
from ...graph.storage import CurrentFact, GraphTransaction, ProjectionBatch, Stated, Written
from ...records import Job
from .. import derivation_marks, event_rows, graph_jobs, graph_reads, graph_records, jobs
from .. import graph_writes as writes
from ..units import UnitDatabase, alone

T = TypeVar("T")
PROJECTION = "graph projection"  # a space's projections resolve names one at a time


class SqliteGraphStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def search_records(
        self, space: str, terms: Sequence[str], cap: int, as_of: datetime | None
    ) -> NodeRecords:
        def read(raw: sqlite3.Connection) -> NodeRecords:
            ids = graph_reads.candidates(raw, space, terms, cap)
            return _records(raw, ids, as_of, fields=True)

        return await self.db.read(read)

    async def node_records(self, node_id: str, as_of: datetime | None, history: int) -> NodeRecords:
        return await self.db.read(lambda raw: _records(raw, [node_id], as_of, history, True))

    async def top_records(
        self,
        space: str,
        type_: str | None,
        window: tuple[int, int],
        as_of: datetime | None,
        parts: RecordParts = "all",
    ) -> NodeRecords:
        bound = iso(as_of) if as_of else None

        def read(raw: sqlite3.Connection) -> NodeRecords:
            ids = graph_reads.top_node_ids(raw, space, type_, *window, bound)
            return _records(raw, ids, as_of, fields=True, parts=parts)

        return await self.db.read(read)

    async def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        return await self.db.read(lambda raw: event_rows.visible_cards(raw, space, event_ids))

    async def duplicates(self, space: str) -> list[tuple[str, str, str]]:
        rows = await self.db.read(lambda raw: graph_reads.duplicates(raw, space))
        return [(row[0], row[1], row[2]) for row in rows]

    async def backfill_due(self) -> bool:
        return await self.db.read(graph_jobs.backfill_due)

    async def backfill(self, now: str) -> int:
        return await self.db.write(lambda raw: graph_jobs.backfill(raw, now))

    async def batch(
        self, batch_id: str, speaker: str, kin_relations: Iterable[str], context: tuple[int, int]
    ) -> ProjectionBatch:
        relations = list(kin_relations)
        return await self.db.read(lambda raw: _batch(raw, batch_id, speaker, relations, context))

    async def project(self, unit: Callable[[GraphTransaction], T]) -> T:
        return await self.db.write(lambda raw: unit(SqliteGraphTransaction(raw)))


def candidate_records(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], cap: int
) -> NodeRecords:
    """Up to ``cap`` nodes sharing ``terms`` with their records as they stand now, inside a
    caller's read (retrieval reads graph views in the same read as its other channels)."""
    return graph_records.records(raw, graph_reads.candidates(raw, space, terms, cap))


def _batch(
    raw: sqlite3.Connection,
    batch_id: str,
    speaker: str,
    relations: list[str],
    context: tuple[int, int],
) -> ProjectionBatch:
    event_ids = graph_jobs.batch_events(raw, batch_id)
    space = graph_jobs.batch_space(raw, batch_id)
    cards = event_rows.visible_cards(raw, space, event_ids)
    keys = {normalise_key(p) for card in cards for p in card.temporal.get("participants", [])}
    recent, most = context
    named = [k.node_id for k in graph_reads.known_by_keys(raw, space, keys)]
    newest = graph_reads.recent_node_ids(raw, space, recent)
    nodes = graph_reads.nodes(raw, list(dict.fromkeys([*named, *newest]))[:most])
    speakers = graph_reads.known_by_keys(raw, space, keys | {normalise_key(speaker)})
    people = [k.node_id for k in speakers if k.type == "person"]
    kin = graph_reads.kin_edges(raw, people, relations)
    return ProjectionBatch(space, event_ids, cards, nodes, kin)


class SqliteGraphTransaction:
    """``GraphTransaction``: the row functions over the write transaction's connection."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def holds(self, job: Job) -> bool:
        return jobs.holds(self.raw, job)

    def batch_space(self, batch_id: str) -> str:
        space = graph_jobs.batch_space(self.raw, batch_id)
        alone(self.raw, PROJECTION, space)
        return space

    def event_statuses(self, event_ids: Iterable[str]) -> dict[str, str]:
        return graph_reads.event_statuses(self.raw, event_ids)

    def known_by_keys(self, space: str, keys: Iterable[str]) -> list[Known]:
        return graph_reads.known_by_keys(self.raw, space, keys)

    def near_candidates(self, space: str, letters: Iterable[str]) -> list[Known]:
        return graph_reads.near_candidates(self.raw, space, letters)

    def insert_node(
        self, space: str, name: tuple[str, str], type_: str, tags: Sequence[str], now: str
    ) -> str:
        return writes.insert_node(self.raw, space, name, type_, tags, now)

    def node_tags(self, node_id: str) -> list[str]:
        return writes.node_tags(self.raw, node_id)

    def set_tags(self, node_id: str, tags: Sequence[str], now: str) -> None:
        writes.set_tags(self.raw, node_id, tags, now)

    def name_key(self, node_id: str) -> str:
        return writes.name_key(self.raw, node_id)

    def alias_keys(self, node_id: str) -> list[str]:
        return writes.alias_keys(self.raw, node_id)

    def add_alias(self, space: str, node_id: str, alias: tuple[str, str]) -> None:
        writes.add_alias(self.raw, space, node_id, alias)

    def list_duplicate(
        self, space: str, node_id: str, other_id: str, reason: str, now: str
    ) -> None:
        writes.list_duplicate(self.raw, space, node_id, other_id, reason, now)

    def add_sources(self, kind: str, record_id: str, event_ids: Iterable[str]) -> None:
        writes.add_sources(self.raw, kind, record_id, event_ids)

    def add_field_sources(
        self, node_id: str, field: str, key: str, event_ids: Iterable[str]
    ) -> None:
        writes.add_field_sources(self.raw, node_id, field, key, event_ids)

    def add_terms(self, space: str, node_id: str, texts: Sequence[str]) -> None:
        writes.add_terms(self.raw, space, node_id, texts)

    def current_facts(self, node_id: str, key: str) -> list[CurrentFact]:
        return writes.current_facts(self.raw, node_id, key)

    def current_edges(self, from_id: str, relation: str) -> list[Believed]:
        return writes.current_edges(self.raw, from_id, relation)

    def insert_fact(self, node_id: str, key: str, value: FactValue, made: Stated) -> str:
        return writes.insert_fact(self.raw, node_id, key, value, made)

    def insert_edge(self, space: str, ends: tuple[str, str], relation: str, made: Stated) -> str:
        return writes.insert_edge(self.raw, space, ends, relation, made)

    def mark_history(self, kind: str, record_id: str, valid_to: str | None, now: str) -> None:
        writes.mark_history(self.raw, kind, record_id, valid_to, now)

    def supersede(
        self, kind: str, old_id: str, new_id: str, valid_from: str | None, now: str
    ) -> None:
        writes.supersede(self.raw, kind, old_id, new_id, valid_from, now)

    def recount(self, node_ids: Sequence[str]) -> None:
        writes.recount(self.raw, node_ids)

    def write_back(self, event_ids: Sequence[str]) -> None:
        writes.write_back(self.raw, event_ids)

    def finish(self, job: Job, outcome: tuple[str, str], written: Written, now: datetime) -> None:
        graph_jobs.finish_batch(self.raw, job.target_id, *written)
        jobs.finish(self.raw, job.id, outcome[0], now, outcome[1])

    def mark_job(self, job_id: str, derived_by: str, error: str | None) -> None:
        derivation_marks.mark_job(self.raw, job_id, derived_by, error)


def _records(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    as_of: datetime | None,
    history: int | None = graph_records.HISTORY,
    fields: bool = False,
    parts: RecordParts = "all",
) -> NodeRecords:
    """The nodes' records as learned by ``as_of`` (``graph.views.assemble`` makes views)."""
    bound = iso(as_of) if as_of else None
    return graph_records.records(raw, node_ids, bound, history, fields, parts)
