"""A block's two jobs: the summary (L0–L2) and the extraction (event cards), what they read
and how they write, inside the caller's transactions.

The model is called outside any transaction, and a result is committed only under the
job's claim (``jobs.holds``). A task the model fails after the client's retries is
answered by the offline model (``fallback.py``) and marked ``offline-fallback`` on the
block, its cards and the job, so memory fills whatever the model does; without a fallback
the job fails and the sealed block is left as it was. The re-run of such blocks on the
model (``rederive/service.py``) reads and writes through the same functions.
"""

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from ...clock import iso
from ...events import cards as event_rules
from ...events.cards import EventCard
from ...events.ranking import EventSearch
from ...events.search import POOLS, candidate_query, page_hits
from ...events.source_check import SourceDrops
from ...events.weights import new_card
from ...llm.base import StructuredModel, StructuredTask
from ...llm.prompts import load_prompt
from ...llm.tasks import (
    EXTRACT_EVENT_CARDS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventCardDraft,
    EventExtraction,
)
from ...records import Block, Job
from ...store import (
    Database,
    block_rows,
    derivation_marks,
    event_rows,
    event_search_rows,
    graph_jobs,
    jobs,
)
from ...store.sealing import EXTRACTION_JOB, enqueue_job
from ...store.sqlite.events import candidates_in, visible_cards_in
from .. import payloads, truth
from ..fallback import DerivationFailed, derive
from ..input import prefix_note

LOST = "lost"  # the job was taken over by another worker: nothing of this run is applied
log = logging.getLogger(__name__)


class BlockJobs:
    """Runs a claimed summary or extraction job against ``model`` (``fallback`` answering
    when it fails; None: the job fails instead)."""

    def __init__(
        self,
        db: Database,
        model: StructuredModel,
        clock: Callable[[], datetime],
        text_limit: int,
        fallback: StructuredModel | None,
    ) -> None:
        self.db, self.model, self.clock = db, model, clock
        self.text_limit, self.fallback = text_limit, fallback

    async def summarize(self, job: Job) -> tuple[str, str | None]:
        limit = self.text_limit
        block, payload = await self.db.read(lambda raw: summary_input(raw, job.target_id, limit))
        task = StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)
        note = prefix_note(payload["block"]["messages"])

        async def accept(summary: BlockSummary) -> BlockSummary:
            return clean_summary(summary, note)

        answer = await derive(self.model, task, accept, self.fallback)
        now = iso(self.clock())

        def commit(raw: sqlite3.Connection) -> str:
            if not jobs.holds(raw, job):
                return LOST
            write_summary(raw, block.id, answer.result, now)
            derivation_marks.mark_block(raw, block.id, answer.derived_by, answer.error)
            jobs.finish(raw, job.id, "succeeded", self.clock())
            derivation_marks.mark_job(raw, job.id, answer.derived_by, answer.error)
            enqueue_job(raw, block.namespace, EXTRACTION_JOB, block.id)
            return "succeeded"

        return await self.db.write(commit), answer.error

    async def extract(self, job: Job, dropped: SourceDrops) -> tuple[str, str | None]:
        """The model's cards, accepted, then their sources checked (``source_check``): the
        same validation whichever model answered; what it dropped is counted and noted."""
        limit = self.text_limit
        block, payload = await self.db.read(lambda raw: extraction_input(raw, job.target_id, limit))
        if block.should_extract is False:
            author = (block.derived_by or self.model.name, block.derive_error)
            note = "summary pre-screen: nothing"
            return await self.finish_extraction(job, block, [], note, author), None
        answer = await derive(self.model, extraction_task(payload), checked(payload), self.fallback)
        cards, drops = answer.result
        if drops:
            log.info("extraction of %s: %s", block.id, drops.note())
        dropped.add(drops)
        notes = [drops.note() if drops else "", prefix_note(payload["target"]["messages"])]
        said = "; ".join(filter(None, notes))
        note = f"{len(cards)} events; {said}" if said else ""
        author = (answer.derived_by, answer.error)
        return await self.finish_extraction(job, block, cards, note, author), answer.error

    async def finish_extraction(
        self,
        job: Job,
        block: Block,
        cards: list[EventCardDraft],
        note: str,
        author: tuple[str, str | None] | None = None,
    ) -> str:
        """Commit the cards under the claim (``author``: who derived them, the model's error
        when the offline model did; default the model) and make the block ready."""
        moment = self.clock()
        status = "succeeded" if cards else "skipped"
        author = author or (self.model.name, None)

        def commit(raw: sqlite3.Connection) -> str:
            if not jobs.holds(raw, job):
                return LOST
            inserted = write_cards(raw, block, cards, moment, author)
            repeats = len(cards) - len(inserted)
            done = f"{len(inserted)} events" + (f", {repeats} restated" if repeats else "")
            jobs.finish(raw, job.id, status, moment, note or done)
            derivation_marks.mark_job(raw, job.id, *author)
            derivation_marks.note_block(raw, block.id, *author)
            block_rows.mark_ready(raw, block.id, iso(moment))
            return status

        return await self.db.write(commit)


def extraction_task(payload: dict[str, Any]) -> StructuredTask[EventExtraction]:
    return StructuredTask(
        EXTRACT_EVENT_CARDS, EventExtraction, load_prompt(EXTRACT_EVENT_CARDS), payload
    )


def checked(payload: dict[str, Any]) -> Any:
    """The acceptance of an extraction: its cards with their sources checked (on a worker
    thread), refused when it promised events and none survived."""

    async def accept(result: EventExtraction) -> tuple[list[EventCardDraft], SourceDrops]:
        accepted, cards, drops = await asyncio.to_thread(payloads.checked_cards, result, payload)
        if result.should_extract and not accepted:
            raise DerivationFailed("extraction promised events but returned no valid card")
        return cards, drops

    return accept


TIMELINE_RELEVANT, TIMELINE_RECENT = 8, 4
NEIGHBOURS = 8  # per pool, the events a committed card is compared with (FTS5's best)


def summary_input(raw: sqlite3.Connection, block_id: str, limit: int) -> tuple[Block, Any]:
    block = block_rows.get_block(raw, block_id)
    return block, payloads.summary_payload(block, block_rows.block_messages(raw, block_id), limit)


def extraction_input(
    raw: sqlite3.Connection, block_id: str, limit: int, block: Block | None = None
) -> tuple[Block, Any]:
    """The extraction's payload; ``block``: its views as they will be (a re-derivation's
    new summary), else as stored. The block's own cards are never its timeline."""
    block = block or block_rows.get_block(raw, block_id)
    messages = block_rows.block_messages(raw, block_id)
    neighbours = block_rows.neighbour_keypoints(raw, block)
    timeline = [card for card in _timeline(raw, block) if card.source_block_id != block.id]
    return block, payloads.extraction_payload(block, messages, limit, neighbours, timeline)


def clean_summary(summary: BlockSummary, note: str = "") -> BlockSummary:
    """The summary within its limits; ``note`` (a prefix was read) ends L1."""
    text = summary.summary.strip()[: 2000 - (len(note) + 1 if note else 0)]
    return summary.model_copy(
        update={
            "title": summary.title.strip()[:120],
            "tags": event_rules.clean_strings(summary.tags, 12, 60),
            "summary": f"{text} {note}" if note else text,
            "keypoints": event_rules.clean_strings(summary.keypoints, 20, 600),
        }
    )


def write_summary(raw: sqlite3.Connection, block_id: str, summary: BlockSummary, now: str) -> None:
    block_rows.store_summary(
        raw, block_id, summary.title, summary.tags, summary.summary, summary.keypoints,
        summary.should_extract, now,
    )  # fmt: skip


def write_cards(
    raw: sqlite3.Connection,
    block: Block,
    cards: list[EventCardDraft],
    moment: datetime,
    author: tuple[str, str | None],
) -> list[str]:
    """Commit the drafts (``author``: who derived them, the model's error); the ids of the
    cards inserted (the rest restated live events), queued for graph projection."""
    formed = block_rows.block_namespace_turn(raw, block.id)
    stored: list[str] = []
    inserted: list[str] = []
    for draft in cards:
        draft = event_rules.resolve_local_refs(draft, stored)
        card = _card_from_draft(raw, draft, block, formed, moment)
        stored.append(_commit_card(raw, card, formed, moment))
        if stored[-1] == card.id:
            inserted.append(card.id)
    derivation_marks.mark_events(raw, inserted, *author)
    graph_jobs.queue_events(
        raw, block.namespace, inserted, graph_jobs.CONVERSATION_PRIORITY, iso(moment)
    )
    return inserted


def _commit_card(raw: sqlite3.Connection, card: EventCard, turn: int, moment: datetime) -> str:
    """Insert the card, or count it as a mention of the live event it restates; a change
    card the model left unlinked supersedes what it replaces (``truth``). The id that now
    holds the card's statement."""
    tokens = truth.search_tokens(card)
    found = event_search_rows.lexical_rows(raw, card.namespace, POOLS, tokens, NEIGHBOURS)
    settled = truth.settle(card, event_rows.events_from_rows(raw, found))
    if settled.repeat_of is not None:
        said = str(card.temporal.get("mentioned_at") or iso(moment))
        event_rows.add_mention(
            raw, settled.repeat_of.id, card.source_message_ids, turn, said, iso(moment)
        )
        return settled.repeat_of.id
    event_rows.insert_event(raw, settled.card)  # an added link names a live event just read
    return card.id


def _timeline(raw: sqlite3.Connection, block: Block) -> list[EventCard]:
    """Up to 8 events relevant to the block's L0–L2 text (event search over both pools, no
    retrieval stamp) plus the 4 most recently formed."""
    tokens = payloads.timeline_tokens(block)
    relevant: list[EventCard] = []
    if tokens:
        request = EventSearch(tokens, limit=TIMELINE_RELEVANT)
        found = candidates_in(raw, block.namespace, candidate_query(request))
        read = partial(visible_cards_in, raw, block.namespace)
        relevant = [hit.card for hit in page_hits(found, request, read)]
    recent = event_rows.recent_events(raw, block.namespace, TIMELINE_RECENT)
    return list({card.id: card for card in [*relevant, *recent]}.values())


def _card_from_draft(
    raw: sqlite3.Connection,
    draft: EventCardDraft,
    block: Block,
    formed_turn: int,
    moment: datetime,
) -> EventCard:
    temporal = _still_visible_links(raw, dict(draft.temporal or {}))
    temporal["thread_id"] = block.thread_id
    return new_card(
        namespace=block.namespace,
        title=draft.title,
        summary=draft.summary,
        tags=draft.tags[: event_rules.MAX_TAGS],
        quotes=draft.quotes,
        source_block_id=block.id,
        source_message_ids=draft.source_message_ids,
        formed_turn=formed_turn,
        temporal=temporal,
        scope=draft.scope,
        criticality=draft.criticality,
        catalog_hints=draft.catalog_hints,
        created_at=moment,
    )


def _still_visible_links(raw: sqlite3.Connection, temporal: dict[str, Any]) -> dict[str, Any]:
    """Relation targets must still be active or superseded when the card is committed."""
    named = {i for key in event_rules.RELATION_LISTS for i in temporal.get(key, [])}
    if temporal.get("same_event_id"):
        named.add(temporal["same_event_id"])
    if not named:
        return temporal
    visible = event_rows.live_event_ids(raw, named)
    return event_rules.restrict_relations(temporal, visible)
