"""The purge's storage contract (``core/purge/storage.py``) on SQLite: rows through
``Database`` units, the file's own copies through ``purge_files`` (``secure_delete``,
``wal_checkpoint(TRUNCATE)``, ``VACUUM``, backups rewritten on a copy)."""

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

from ...clock import iso
from ...curation.records import MemoryAction
from ...curation.storage import PurgeRules
from ...events.cards import EventCard
from ...events.storage import EventRules
from ...purge.storage import (
    Done,
    PlanReceipt,
    ReceiptDraft,
    SpaceContents,
    SpaceReceipt,
    TextPurgePlan,
    TopicsSync,
    Words,
)
from .. import curation_rows, event_rows
from .. import purge_files as files
from .. import purge_rows as rows
from .. import space_purge_rows as space_rows
from ..event_documents import ParsedDocuments
from ..units import UnitDatabase
from .topics import SqliteTopicsTransaction


class SqlitePurgeStorage:
    """``documents``: the events' parsed documents of this process, emptied by every erase
    (a purged word's counts leave memory with it)."""

    def __init__(self, db: UnitDatabase, events: EventRules, documents: ParsedDocuments) -> None:
        self.db = db
        self.events = events
        self.documents = documents

    async def event_card(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))

    async def message_content(self, message_id: str) -> str | None:
        found = await self.db.read(lambda raw: curation_rows.message_cards(raw, [message_id]))
        return found[0].message.content if found else None

    async def profile_values(self, field: str) -> list[str]:
        return await self.db.read(lambda raw: rows.profile_values(raw, field))

    async def event_titles(self, event_ids: list[str]) -> list[str]:
        found = await self.db.read(lambda raw: curation_rows.briefs(raw, event_ids))
        return [brief.title for brief in found.values()]

    async def plan(self, words: Words) -> TextPurgePlan:
        return await self.db.read(lambda raw: rows.plan_words(raw, words))

    async def erase(
        self,
        words: Words,
        now: datetime,
        receipt: PlanReceipt,
        rules: PurgeRules,
        topics: TopicsSync,
    ) -> Done:
        rederive = self._rederivers(rules, topics)

        def unit(raw: sqlite3.Connection) -> Done:
            fresh = rows.plan_words(raw, words)
            erased = rows.erase_words(raw, words, fresh, now, rederive)
            return _receipted(raw, receipt(fresh, erased), iso(now)), erased

        try:
            return await self.db.write(unit)
        finally:
            self.documents.forget_all()

    async def leftovers(self, words: Words) -> dict[str, int]:
        """On the writer: the check reads the index through temp ``fts5vocab`` tables, which
        a read-only reader cannot create."""
        return await self.db.exclusive(lambda raw: rows.leftovers(raw, words))

    async def journal(self) -> str | None:
        return await self.db.read(rows.journal)

    async def clear_journal(self) -> None:
        await self.db.write(rows.clear_journal)

    @asynccontextmanager
    async def secure_deletion(self) -> AsyncIterator[None]:
        await self.db.exclusive(lambda raw: files.set_secure_delete(raw, True))
        try:
            yield
        finally:
            await self.db.exclusive(lambda raw: files.set_secure_delete(raw, False))

    async def checkpoint(self) -> None:
        await self.db.exclusive(files.checkpoint)

    async def compact(self) -> None:
        await self.db.exclusive(files.compact)

    async def file_holds(self, words: Words) -> bool:
        return any(files.byte_hits(p, words) for p in files.database_files(self.db.path))

    async def scan(self, words: Words) -> dict[str, int]:
        return files.scan(self.db.path, words)

    async def remove_stale_copies(self) -> list[str]:
        return files.remove_stale_copies(self.db.path)

    async def backups_holding(self, words: Words) -> dict[str, int]:
        return files.backups_holding(self.db.path, words)

    async def purge_backup(
        self, path: str, words: Words, now: datetime, rules: PurgeRules, topics: TopicsSync
    ) -> str:
        return files.scrub_backup(Path(path), words, now, self._rederivers(rules, topics))

    def _rederivers(self, rules: PurgeRules, topics: TopicsSync) -> rows.Rederivers:
        """The rules an erase re-derives by, the topics' sync over the erasing connection."""

        def sync(raw: sqlite3.Connection, space: str, now: datetime) -> None:
            topics(SqliteTopicsTransaction(raw), space, now)

        return rows.Rederivers(rules, self.events, sync)

    async def space_contents(self, space: str) -> SpaceContents:
        def read(raw: sqlite3.Connection) -> SpaceContents:
            return SpaceContents(
                space_rows.space_rows(raw, space), space_rows.space_threads(raw, space)
            )

        return await self.db.read(read)

    async def space_in_backups(self, space: str) -> dict[str, int]:
        return files.space_in_backups(self.db.path, space)

    async def delete_space_in_backup(self, path: str, space: str) -> str:
        return files.delete_space_in_backup(Path(path), space)

    async def delete_space(self, space: str, receipt: SpaceReceipt, now: str) -> Done:
        def unit(raw: sqlite3.Connection) -> Done:
            deleted = space_rows.delete_space(raw, space)
            return _receipted(raw, receipt(deleted), now), deleted

        try:
            return await self.db.write(unit)
        finally:
            self.documents.forget_all()

    async def actions(self, limit: int) -> list[MemoryAction]:
        return await self.db.read(lambda raw: curation_rows.list_actions(raw, limit=limit))


def _receipted(raw: sqlite3.Connection, draft: ReceiptDraft, now: str) -> MemoryAction:
    """The purge's receipt, and the journal entry naming it until the file is compacted."""
    action = curation_rows.insert_action(
        raw, draft.namespace, "purge", draft.target, draft.actor, draft.detail, now
    )
    rows.write_journal(raw, action.id)
    return action
