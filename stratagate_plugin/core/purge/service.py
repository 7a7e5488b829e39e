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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..clock import iso, utc_now
from ..curation.actions import PURGE_RULES
from ..curation.records import Actor, MemoryAction
from ..errors import InvalidInput, StrataGateError
from ..profile.fields import field_of
from ..service_base import ServiceBase
from ..topics.sync import sync_space
from .storage import PurgeStorage, ReceiptDraft
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

    @property
    def store(self) -> PurgeStorage:
        return self.storage.purge

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
        if event_id is not None:
            card = await self.store.event_card(event_id)
            words = [w for w in (*card.quotes, card.title) if _words_left(w)]
            if not words:
                raise InvalidInput(f"event {event_id} holds no words left to purge")
            return Needles(words)
        content = await self.store.message_content(str(message_id))
        if content is None:
            raise InvalidInput(f"no message with id {message_id!r}")
        return Needles([content])

    async def profile_field_needles(self, field: str) -> Needles:
        """Every value the profile field has held, as words to purge (a field whose whole
        value is purged is cleared)."""
        field_of(field)
        values = await self.store.profile_values(field)
        kept = [v for v in values if len(v.strip()) >= MIN_CHARACTERS]
        if not kept:
            raise InvalidInput(f"the profile field {field} holds nothing to purge")
        return Needles(kept)

    async def words_plan(self, needles: Needles) -> tuple[Needles, TextPurgePlan]:
        """The plan (the needles grown by the titles of the events it forgets) and the
        backups holding the words."""
        needles, plan = await self._grown_plan(needles)
        held = await self.store.backups_holding(needles)
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
        await self.store.remove_stale_copies()  # left by a purge killed mid-rewrite
        backups = {
            p: await self.store.purge_backup(p, needles, now, PURGE_RULES, sync_space)
            for p in plan.files
        }

        def receipt(fresh: TextPurgePlan, erased: dict[str, int]) -> ReceiptDraft:
            detail = _detail(fresh, erased, backups, sessions or {})
            space = (fresh.spaces() or plan.spaces() or [""])[0]
            return ReceiptDraft(space, target, actor, detail)

        async with self.store.secure_deletion():
            action, erased = await self.store.erase(needles, now, receipt, PURGE_RULES, sync_space)
            vacuumed = await self._compact_if_held(needles)
        left = {k: v for k, v in (await self.store.scan(needles)).items() if v}
        return PurgeOutcome(
            receipt=action, erased=erased, backups=backups, vacuumed=vacuumed, left=left
        )

    async def _grown_plan(self, needles: Needles) -> tuple[Needles, TextPurgePlan]:
        """The plan, made again with the titles of the events it forgets (an answer quoting
        the card goes too)."""
        plan = await self.store.plan(needles)
        titles = await self.store.event_titles(plan.forgotten_events())
        more = [title for title in titles if _words_left(title)]
        grown = needles.with_words(t for t in more if not needles.holds(t))
        if grown.words == needles.words:
            return needles, plan
        return grown, await self.store.plan(grown)

    async def _compact_if_held(self, needles: Needles) -> bool:
        """Checkpoint (TRUNCATE); VACUUM when the file's bytes still hold the words; the
        journal entry cleared. True when it vacuumed."""
        await self.store.checkpoint()
        held = await self.store.file_holds(needles)
        if held:
            await self.store.compact()
        await self.store.clear_journal()
        await self.store.checkpoint()
        return held

    async def finish_interrupted(self) -> str | None:
        """A purge killed after its commit left the old text in free pages or the WAL:
        vacuum now. The receipt id of the purge finished, else None."""
        receipt = await self.store.journal()
        if receipt is None:
            return None
        async with self.store.secure_deletion():
            try:
                await self.store.compact()
                await self.store.clear_journal()
                await self.store.checkpoint()
            except StrataGateError as error:  # StorageError: a read-only copy still opens;
                # the next open retries
                log.warning(
                    "purge %s was interrupted and cannot be finished now: %s", receipt, error
                )
                return None
        log.warning("finished purge %s, interrupted before its file was compacted", receipt)
        return receipt

    async def space_deletion_plan(self, space: str) -> SpacePlan:
        found = await self.store.space_contents(space)
        held = await self.store.space_in_backups(space)
        return SpacePlan(namespace=space, rows=found.rows, threads=found.threads, backups=held)

    async def delete_space(
        self, space: str, *, actor: Actor = "user", sessions: list[str] | None = None
    ) -> SpaceDeleted:
        """Every row of the space gone, its backups rewritten without it, the file
        vacuumed; the receipt (kind ``purge``, target the space) counts what went."""
        plan = await self.space_deletion_plan(space)
        if not plan.rows and not plan.backups:
            raise InvalidInput(f"there is no memory space {space!r}: nothing was changed")
        await self.store.remove_stale_copies()
        backups = {p: await self.store.delete_space_in_backup(p, space) for p in plan.backups}

        def receipt(deleted: dict[str, int]) -> ReceiptDraft:
            detail = {
                "space_deleted": space,
                "rows": deleted,
                "backups": backups,
                "sessions": sorted(sessions or []),
            }
            return ReceiptDraft(space, space, actor, detail)

        now = iso(utc_now())
        async with self.store.secure_deletion():
            action, deleted = await self.store.delete_space(space, receipt, now)
            await self.store.compact()
            await self.store.clear_journal()
            await self.store.checkpoint()
        return SpaceDeleted(receipt=action, deleted=deleted, backups=backups)

    async def check(self, needles: Needles) -> dict[str, int]:
        """Where the words still are: rows (``table.column``) and raw bytes by file."""
        cells = await self.store.leftovers(needles)
        return {**cells, **(await self.store.scan(needles))}

    async def receipts(self, digest: str) -> list[MemoryAction]:
        """The purge receipts whose words hash to ``digest`` (``sha256:…``)."""
        found = await self.actions_of_kind("purge")
        return [a for a in found if digest in a.detail.get("hashes", [])]

    async def actions_of_kind(self, kind: str) -> list[MemoryAction]:
        every = await self.store.actions(10_000)
        return [a for a in every if a.kind == kind]


def _words_left(text: str) -> bool:
    """Not a tombstone, and long enough to purge safely."""
    bare = text.strip()
    return len(bare) >= MIN_CHARACTERS and bare != TOMBSTONE and not bare.startswith("[purged by")


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
