"""A block's two jobs: the summary (L0–L2) and the extraction (event cards), what they read
and how they write, inside the caller's transactions.

The model is called outside any transaction, and a result is committed only under the
job's claim (``DerivationStorage.commit_*``). A task the model fails after the client's retries is
answered by the offline model (``fallback.py``) and marked ``offline-fallback`` on the
block, its cards and the job, so memory fills whatever the model does; without a fallback
the job fails and the sealed block is left as it was. The re-run of such blocks on the
model (``rederive/service.py``) reads and commits with the same functions and ``CardRules``.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ...events import cards as event_rules
from ...events.cards import EventCard
from ...events.search import relevant_cards
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
from .. import payloads, truth
from ..fallback import DerivationFailed, derive
from ..input import prefix_note
from ..storage import Cards, DerivationStorage, TimelineAsk

LOST = "lost"  # the job was taken over by another worker: nothing of this run is applied
log = logging.getLogger(__name__)
TIMELINE = TimelineAsk(payloads.timeline_tokens, relevant=8, recent=4, find=relevant_cards)


class BlockJobs:
    """Runs a claimed summary or extraction job against ``model`` (``fallback`` answering
    when it fails; None: the job fails instead)."""

    def __init__(
        self,
        store: DerivationStorage,
        model: StructuredModel,
        clock: Callable[[], datetime],
        text_limit: int,
        fallback: StructuredModel | None,
    ) -> None:
        self.store, self.model, self.clock = store, model, clock
        self.text_limit, self.fallback = text_limit, fallback

    async def summarize(self, job: Job) -> tuple[str, str | None]:
        block, payload = await summary_input(self.store, job.target_id, self.text_limit)
        task = StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)
        note = prefix_note(payload["block"]["messages"])

        async def accept(summary: BlockSummary) -> BlockSummary:
            return clean_summary(summary, note)

        answer = await derive(self.model, task, accept, self.fallback)
        author = (answer.derived_by, answer.error)
        held = await self.store.commit_summary(job, block, answer.result, author, self.clock())
        return ("succeeded" if held else LOST), answer.error

    async def extract(self, job: Job, dropped: SourceDrops) -> tuple[str, str | None]:
        """The model's cards, accepted, then their sources checked (``source_check``): the
        same validation whichever model answered; what it dropped is counted and noted."""
        block, payload = await extraction_input(self.store, job.target_id, self.text_limit)
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
        author = author or (self.model.name, None)

        def detail(inserted: int, repeats: int) -> str:
            return note or f"{inserted} events" + (f", {repeats} restated" if repeats else "")

        drafts = Cards(cards, CARD_RULES, author, self.clock(), detail)
        done = await self.store.commit_extraction(job, block, drafts)
        if done is None:
            return LOST
        return "succeeded" if cards else "skipped"


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


async def summary_input(
    store: DerivationStorage, block_id: str, limit: int
) -> tuple[Block, dict[str, Any]]:
    block, messages = await store.summary_input(block_id)
    return block, payloads.summary_payload(block, messages, limit)


async def extraction_input(
    store: DerivationStorage, block_id: str, limit: int, block: Block | None = None
) -> tuple[Block, dict[str, Any]]:
    """The extraction's payload; ``block``: its views as they will be (a re-derivation's
    new summary), else as stored. Its timeline: up to 8 events relevant to the block's
    L0–L2 text (event search over both pools, no retrieval stamp) plus the 4 most
    recently formed; the block's own cards are never its timeline."""
    found = await store.extraction_input(block_id, block, TIMELINE)
    payload = payloads.extraction_payload(
        found.block, found.messages, limit, found.neighbours, found.timeline
    )
    return found.block, payload


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


class BlockCardRules:
    """How a draft becomes a committed card (``CardRules``): local references resolved,
    relations kept to events still visible, a restatement or an unlinked change settled
    against the live events near it (``truth``)."""

    def resolve(self, draft: EventCardDraft, stored: Sequence[str]) -> EventCardDraft:
        return event_rules.resolve_local_refs(draft, list(stored))

    def linked_ids(self, draft: EventCardDraft) -> set[str]:
        """Relation targets must still be active or superseded when the card is committed."""
        temporal = draft.temporal or {}
        named = {i for key in event_rules.RELATION_LISTS for i in temporal.get(key, [])}
        if temporal.get("same_event_id"):
            named.add(temporal["same_event_id"])
        return named

    def card(
        self, draft: EventCardDraft, visible: set[str], block: Block, turn: int, moment: datetime
    ) -> EventCard:
        temporal = dict(draft.temporal or {})
        if self.linked_ids(draft):
            temporal = event_rules.restrict_relations(temporal, visible)
        temporal["thread_id"] = block.thread_id
        return new_card(
            namespace=block.namespace,
            title=draft.title,
            summary=draft.summary,
            tags=draft.tags[: event_rules.MAX_TAGS],
            quotes=draft.quotes,
            source_block_id=block.id,
            source_message_ids=draft.source_message_ids,
            formed_turn=turn,
            temporal=temporal,
            scope=draft.scope,
            criticality=draft.criticality,
            catalog_hints=draft.catalog_hints,
            created_at=moment,
        )

    def search_tokens(self, card: EventCard) -> tuple[str, ...]:
        return truth.search_tokens(card)

    def settle(self, card: EventCard, near: Sequence[EventCard]) -> truth.Settled:
        return truth.settle(card, near)


CARD_RULES = BlockCardRules()
