"""What a purge needs from storage (the contract a database implements).

The purge decides (which words, which events are forgotten, what a receipt says, when to
compact); the storage applies the words it is handed (``Words``: the matching, scrubbing
and excerpt rules of ``words.py``) to every copy it keeps. Its guarantees are the purge's:
rows erased with their receipt and a journal entry in one transaction, old text zeroed in
freed space while ``secure_deletion`` holds, the log cut (``checkpoint``), the file
rewritten (``compact``), backups purged on a copy that replaces them. SQLite does this with
``secure_delete``, ``wal_checkpoint(TRUNCATE)`` and ``VACUUM``; another database with its
own (a PostgreSQL backend: ``VACUUM`` of the tables touched).
"""

import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime
from ..curation.records import Actor, MemoryAction
from ..curation.storage import PurgeRules
from ..events.cards import EventCard
from ..topics.storage import TopicsTransaction

TOMBSTONE = "[purged]"
"""What purged words are replaced by wherever they were stored."""

__all__ = [
    "TOMBSTONE",
    "Done",
    "PlanItem",
    "PlanReceipt",
    "PurgeStorage",
    "ReceiptDraft",
    "SpaceContents",
    "SpaceReceipt",
    "TextPurgePlan",
    "TopicsSync",
    "Words",
]


class Words(Protocol):
    """The words to erase as the storage applies them (``words.Needles``)."""

    @property
    def index_terms(self) -> list[str]:
        """The search index's encoded term of each one-token word."""
        ...

    @property
    def byte_pattern(self) -> "re.Pattern[bytes]":
        """Every stored form of the words in raw bytes (a page, a log, a backup)."""
        ...

    def holds(self, text: object) -> bool: ...

    def scrub_cell(self, value: Any) -> Any:
        """A cell's value with the words tombstoned (a JSON cell stays valid JSON)."""
        ...

    def scrub_key(self, value: Any) -> Any:
        """A unique key's value replaced by a tombstone made unique."""
        ...

    def excerpt(self, text: str) -> str:
        """Where the words are in ``text``, without showing them."""
        ...

    def forgets(self, quotes: list[str], stated: list[str]) -> bool:
        """Whether an event with these quotes (or, without quotes, this title and summary)
        is forgotten by the purge rather than edited."""
        ...

    def hashes(self) -> list[str]: ...


TopicsSync = Callable[[TopicsTransaction, str, datetime], None]
"""The topics' rule keeping a space's chapters in step with its events
(``topics.sync.sync_space``), which the erase runs for each space it touched, inside its
transaction, over a ``TopicsTransaction`` on the same unit."""


class PlanItem(BaseModel):
    """One row the purge changes: its id, when it was written, a redacted excerpt."""

    model_config = ConfigDict(frozen=True)

    kind: str
    id: str
    namespace: str = ""
    at: UtcDatetime | None = None
    excerpt: str = ""
    outcome: str = ""  # events: "forgotten" or "edited"; blocks: "re-derived"


class TextPurgePlan(BaseModel):
    """What a purge of some words erases: rows by kind, other stored copies by column,
    and the files (backups, sessions) holding them. Nothing in it repeats the words."""

    model_config = ConfigDict(frozen=True)

    hashes: list[str]
    messages: list[PlanItem] = Field(default_factory=list)
    blocks: list[PlanItem] = Field(default_factory=list)
    events: list[PlanItem] = Field(default_factory=list)
    cells: dict[str, int] = Field(default_factory=dict)  # "table.column": rows holding them
    files: dict[str, int] = Field(default_factory=dict)  # backup or session path: hits

    @property
    def empty(self) -> bool:
        return not (self.messages or self.blocks or self.events or self.cells or self.files)

    def forgotten_events(self) -> list[str]:
        return [item.id for item in self.events if item.outcome == "forgotten"]

    def spaces(self) -> list[str]:
        found = [item.namespace for item in (*self.messages, *self.events) if item.namespace]
        return list(dict.fromkeys(found))


class ReceiptDraft(NamedTuple):
    """The ``purge`` receipt a purge's transaction writes."""

    namespace: str
    target: str
    actor: Actor
    detail: dict[str, Any]


PlanReceipt = Callable[[TextPurgePlan, dict[str, int]], ReceiptDraft]
"""The receipt of an erasure, from the plan made in its transaction and what it erased."""
SpaceReceipt = Callable[[dict[str, int]], ReceiptDraft]
"""The receipt of a space's deletion, from the rows deleted by table."""
Done = tuple[MemoryAction, dict[str, int]]
"""The receipt written, and the rows changed by kind (or table)."""


class SpaceContents(NamedTuple):
    rows: dict[str, int]
    """What deleting the space deletes, rows by table (empty: no such space)."""
    threads: list[str]


class PurgeStorage(Protocol):
    async def event_card(self, event_id: str) -> EventCard:
        """The event whatever its status; ``NotFound`` for an unknown id."""
        ...

    async def message_content(self, message_id: str) -> str | None:
        """The message's text; None for an unknown id."""
        ...

    async def profile_values(self, field: str) -> list[str]:
        """Every value the field has held: now, in its history, in proposals."""
        ...

    async def event_titles(self, event_ids: list[str]) -> list[str]:
        """The titles of those of the events that exist."""
        ...

    async def plan(self, words: Words) -> TextPurgePlan:
        """One read: messages, events (forgotten or edited, as ``words`` decides) and
        blocks holding the words, and every other column's rows holding them."""
        ...

    async def erase(
        self,
        words: Words,
        now: datetime,
        receipt: PlanReceipt,
        rules: PurgeRules,
        topics: TopicsSync,
    ) -> Done:
        """One transaction: the plan made again, every row of it erased and what was built
        on it re-derived by ``rules`` (counts by kind) with each touched space's topics
        synced by ``topics``, the receipt ``receipt`` makes of them and the journal entry
        naming it (a purge whose file is not compacted yet)."""
        ...

    async def leftovers(self, words: Words) -> dict[str, int]:
        """Every cell of every table, and every search index term, still holding them."""
        ...

    async def journal(self) -> str | None:
        """The receipt id of a purge committed but not compacted yet, else None."""
        ...

    async def clear_journal(self) -> None: ...

    def secure_deletion(self) -> AbstractAsyncContextManager[None]:
        """While held, what is deleted or overwritten leaves no old text in free space."""
        ...

    async def checkpoint(self) -> None:
        """The write-ahead log copied back and cut to nothing."""
        ...

    async def compact(self) -> None:
        """The database rewritten without free space (and the log it wrote cut)."""
        ...

    async def file_holds(self, words: Words) -> bool:
        """Whether the database's own files still hold the words in their bytes."""
        ...

    async def scan(self, words: Words) -> dict[str, int]:
        """Byte hits of the words by file: the database's, stale copies, every backup."""
        ...

    async def remove_stale_copies(self) -> list[str]:
        """Copies a purge killed mid-rewrite left beside the backups, deleted."""
        ...

    async def backups_holding(self, words: Words) -> dict[str, int]:
        """Each backup whose bytes hold the words, with its hits."""
        ...

    async def purge_backup(
        self, path: str, words: Words, now: datetime, rules: PurgeRules, topics: TopicsSync
    ) -> str:
        """The purge applied to a copy that replaces the backup (``rewritten``), or the
        backup deleted when its copy cannot be purged clean (``deleted``)."""
        ...

    async def space_contents(self, space: str) -> SpaceContents:
        """What deleting the space deletes, and its threads (one read)."""
        ...

    async def space_in_backups(self, space: str) -> dict[str, int]:
        """Each backup holding rows of the space (an unreadable one counts), with how many."""
        ...

    async def delete_space_in_backup(self, path: str, space: str) -> str:
        """The space deleted from a copy that replaces the backup, else the backup deleted."""
        ...

    async def delete_space(self, space: str, receipt: SpaceReceipt, now: str) -> Done:
        """One transaction: every row of the space deleted (counts by table), the receipt
        ``receipt`` makes of them and the journal entry naming it."""
        ...

    async def actions(self, limit: int) -> list[MemoryAction]:
        """The newest ``limit`` memory actions (receipts), oldest first."""
        ...
