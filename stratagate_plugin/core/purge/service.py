"""Purging words on the façade: the plan, then the purge, then the proof (issue 25).

Words come from a literal text, an event (its quotes and title: "the event's words and
nothing else", so the messages that merely sat next to them are never touched) or a
message (its content). An event the purge forgets takes its title with it: the plan is
made again with those titles, so an answer quoting the card goes too.

Order, so that an interruption never leaves half of the copies: the backups are purged
first (on copies that replace them); then one transaction erases every row, writes the
receipt and a journal entry (``meta.purge_pending``); then the FTS index is merged, the WAL
checkpointed with TRUNCATE and the file vacuumed when its bytes still hold the words; the
journal entry goes last. ``finish_interrupted_purge`` (run at every open) vacuums a file
whose purge was killed after its commit. The caller (CLI, web) rewrites session files,
which belong to the harness, before calling ``purge``.
"""

import logging
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..clock import iso, utc_now
from ..curation.actions import Actor, MemoryAction
from ..errors import InvalidInput
from ..profile.fields import field_of
from ..service_base import ServiceBase
from ..store import curation_rows, event_rows
from ..store import purge_files as files
from ..store import purge_rows as rows
from ..store import space_purge_rows as space_rows
from ..store.health import StorageError
from .words import MIN_CHARACTERS, TOMBSTONE, Needles, TextPurgePlan

log = logging.getLogger(__name__)


class PurgeOutcome(BaseModel):
    """What a purge did: its receipt, the rows it changed, the files it rewrote."""

    model_config = ConfigDict(frozen=True)

    receipt: MemoryAction
    erased: dict[str, int]
    backups: dict[str, str] = Field(default_factory=dict)  # path: rewritten / deleted
    vacuumed: bool = False
    left: dict[str, int] = Field(default_factory=dict)  # byte hits after, by file


class SpacePlan(BaseModel):
    """What deleting a space deletes: its rows by table, its threads (the session files
    named after them), the backups holding it."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    rows: dict[str, int]
    threads: list[str]
    backups: dict[str, int] = Field(default_factory=dict)


class SpaceDeleted(BaseModel):
    model_config = ConfigDict(frozen=True)

    receipt: MemoryAction
    deleted: dict[str, int]
    backups: dict[str, str] = Field(default_factory=dict)


class PurgeService(ServiceBase):
    """Plan a purge, purge, and check that the words are gone."""

    async def needles(
        self,
        *,
        text: str | None = None,
        event_id: str | None = None,
        message_id: str | None = None,
    ) -> Needles:
        """The words a purge of ``text``, ``event_id`` or ``message_id`` erases."""
        if sum(x is not None for x in (text, event_id, message_id)) != 1:
            raise InvalidInput("purge one thing: an event id, --message ID or --text TEXT")
        if text is not None:
            return Needles([text])
        return await self.db.read(lambda raw: _words_of(raw, event_id, message_id))

    async def profile_field_needles(self, field: str) -> Needles:
        """Every value the profile field has held, as words to purge (a field whose whole
        value is purged is cleared)."""
        field_of(field)
        values = await self.db.read(lambda raw: rows.profile_values(raw, field))
        kept = [v for v in values if len(v.strip()) >= MIN_CHARACTERS]
        if not kept:
            raise InvalidInput(f"the profile field {field} holds nothing to purge")
        return Needles(kept)

    async def words_plan(self, needles: Needles) -> tuple[Needles, TextPurgePlan]:
        """The plan (the needles grown by the titles of the events it forgets) and the
        backups holding the words."""
        needles, plan = await self.db.read(lambda raw: _grown_plan(raw, needles))
        held = files.backups_holding(self.db.path, needles)
        return needles, plan.model_copy(update={"files": {**plan.files, **held}})

    async def words(
        self,
        needles: Needles,
        *,
        target: str = "text",
        actor: Actor = "user",
        sessions: dict[str, int] | None = None,
    ) -> PurgeOutcome:
        """Erase the words everywhere the database and its backups keep them (see module)."""
        now = utc_now()
        needles, plan = await self.words_plan(needles)
        if plan.empty and not sessions:
            raise InvalidInput("the words occur nowhere in memory: nothing was changed")
        files.remove_stale_copies(self.db.path)  # left by a purge killed mid-rewrite
        backups = {p: files.scrub_backup(Path(p), needles, now) for p in plan.files}
        await self.db.exclusive(lambda raw: files.set_secure_delete(raw, True))
        try:

            def unit(raw: sqlite3.Connection) -> tuple[MemoryAction, dict[str, int]]:
                fresh = rows.plan_words(raw, needles)
                erased = rows.erase_words(raw, needles, fresh, now)
                detail = _detail(fresh, erased, backups, sessions or {})
                space = (fresh.namespaces() or plan.namespaces() or [""])[0]
                action = curation_rows.insert_action(
                    raw, space, "purge", target, actor, detail, iso(now)
                )
                rows.write_journal(raw, action.id)
                return action, erased

            action, erased = await self.db.write(unit)
            vacuumed = await self._compact_if_held(needles)
        finally:
            await self.db.exclusive(lambda raw: files.set_secure_delete(raw, False))
        left = {k: v for k, v in files.scan(self.db.path, needles).items() if v}
        return PurgeOutcome(
            receipt=action, erased=erased, backups=backups, vacuumed=vacuumed, left=left
        )

    async def _compact_if_held(self, needles: Needles) -> bool:
        """Checkpoint (TRUNCATE); VACUUM when the file's bytes still hold the words; the
        journal entry cleared. True when it vacuumed."""
        await self.db.exclusive(files.checkpoint)
        held = any(files.byte_hits(p, needles) for p in files.database_files(self.db.path))
        if held:
            await self.db.exclusive(files.compact)
        await self.db.write(rows.clear_journal)
        await self.db.exclusive(files.checkpoint)
        return held

    async def finish_interrupted(self) -> str | None:
        """A purge killed after its commit left the old text in free pages or the WAL:
        vacuum now. The receipt id of the purge finished, else None."""
        receipt = await self.db.read(rows.journal)
        if receipt is None:
            return None
        await self.db.exclusive(lambda raw: files.set_secure_delete(raw, True))
        try:
            await self.db.exclusive(files.compact)
            await self.db.write(rows.clear_journal)
            await self.db.exclusive(files.checkpoint)
        except StorageError as error:  # a read-only copy still opens; the next open retries
            log.warning("purge %s was interrupted and cannot be finished now: %s", receipt, error)
            return None
        finally:
            await self.db.exclusive(lambda raw: files.set_secure_delete(raw, False))
        log.warning("finished purge %s, interrupted before its file was compacted", receipt)
        return receipt

    async def space_deletion_plan(self, namespace: str) -> SpacePlan:
        def read(raw: sqlite3.Connection) -> SpacePlan:
            return SpacePlan(
                namespace=namespace,
                rows=space_rows.space_rows(raw, namespace),
                threads=space_rows.space_threads(raw, namespace),
            )

        plan = await self.db.read(read)
        held = files.space_in_backups(self.db.path, namespace)
        return plan.model_copy(update={"backups": held})

    async def delete_space(
        self, namespace: str, *, actor: Actor = "user", sessions: list[str] | None = None
    ) -> SpaceDeleted:
        """Every row of the space gone, its backups rewritten without it, the file
        vacuumed; the receipt (kind ``purge``, target the space) counts what went."""
        plan = await self.space_deletion_plan(namespace)
        if not plan.rows and not plan.backups:
            raise InvalidInput(f"there is no memory space {namespace!r}: nothing was changed")
        files.remove_stale_copies(self.db.path)
        backups = {p: files.delete_space_in_backup(Path(p), namespace) for p in plan.backups}
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> tuple[MemoryAction, dict[str, int]]:
            deleted = space_rows.delete_space(raw, namespace)
            detail = {
                "space_deleted": namespace,
                "rows": deleted,
                "backups": backups,
                "sessions": sorted(sessions or []),
            }
            action = curation_rows.insert_action(
                raw, namespace, "purge", namespace, actor, detail, now
            )
            rows.write_journal(raw, action.id)
            return action, deleted

        await self.db.exclusive(lambda raw: files.set_secure_delete(raw, True))
        try:
            action, deleted = await self.db.write(unit)
            await self.db.exclusive(files.compact)
            await self.db.write(rows.clear_journal)
            await self.db.exclusive(files.checkpoint)
        finally:
            await self.db.exclusive(lambda raw: files.set_secure_delete(raw, False))
        return SpaceDeleted(receipt=action, deleted=deleted, backups=backups)

    async def check(self, needles: Needles) -> dict[str, int]:
        """Where the words still are: rows (``table.column``) and raw bytes by file."""
        cells = await self.db.read(lambda raw: rows.leftovers(raw, needles))
        return {**cells, **files.scan(self.db.path, needles)}

    async def receipts(self, digest: str) -> list[MemoryAction]:
        """The purge receipts whose words hash to ``digest`` (``sha256:…``)."""
        found = await self.actions_of_kind("purge")
        return [a for a in found if digest in a.detail.get("hashes", [])]

    async def actions_of_kind(self, kind: str) -> list[MemoryAction]:
        every = await self.db.read(lambda raw: curation_rows.list_actions(raw, limit=10_000))
        return [a for a in every if a.kind == kind]


def _words_of(raw: sqlite3.Connection, event_id: str | None, message_id: str | None) -> Needles:
    if event_id is not None:
        card = event_rows.get_event(raw, event_id)
        words = [w for w in (*card.quotes, card.title) if _words_left(w)]
        if not words:
            raise InvalidInput(f"event {event_id} holds no words left to purge")
        return Needles(words)
    found = curation_rows.message_cards(raw, [str(message_id)])
    if not found:
        raise InvalidInput(f"no message with id {message_id!r}")
    return Needles([found[0].message.content])


def _words_left(text: str) -> bool:
    """Not a tombstone, and long enough to purge safely."""
    bare = text.strip()
    return len(bare) >= MIN_CHARACTERS and bare != TOMBSTONE and not bare.startswith("[purged by")


def _grown_plan(raw: sqlite3.Connection, needles: Needles) -> tuple[Needles, TextPurgePlan]:
    plan = rows.plan_words(raw, needles)
    titles = curation_rows.briefs(raw, plan.forgotten_events())
    more = [b.title for b in titles.values() if _words_left(b.title)]
    grown = needles.with_words(t for t in more if not needles.holds(t))
    if grown.words == needles.words:
        return needles, plan
    return grown, rows.plan_words(raw, grown)


def _detail(
    plan: TextPurgePlan,
    erased: dict[str, int],
    backups: dict[str, str],
    sessions: dict[str, int],
) -> dict[str, Any]:
    """The receipt: ids and counts, the hashes of the words, never the words."""
    return {
        "hashes": plan.hashes,
        "messages": [item.id for item in plan.messages],
        "blocks": [item.id for item in plan.blocks],
        "events_forgotten": plan.forgotten_events(),
        "events_edited": [i.id for i in plan.events if i.outcome != "forgotten"],
        "other_rows": plan.cells,
        "counts": erased,
        "backups": backups,
        "sessions": sorted(sessions),
    }
