"""What derivation needs from storage (the contract a database implements): the job queue
(claim under a lease, heartbeat, give back, fail, list, retry) and each job's one read and
one write.

A result is written only under the job's claim: every ``commit_*`` operation checks in its
transaction that the job is still held as handed out, and writes nothing otherwise
(``False`` / ``None``: another worker took the job over). What a committed card does to
the space (restating, superseding) is decided by ``CardRules``, which the service hands in:
the storage reads and writes around those decisions in one transaction.
"""

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

from ..events.cards import EventCard
from ..events.storage import EventsReader
from ..llm.tasks import BlockSummary, EventCardDraft
from ..records import Block, Job, Message
from .truth import Settled

__all__ = [
    "Author",
    "CardRules",
    "Cards",
    "DerivationStorage",
    "ExtractionInput",
    "OfflineRows",
    "RelevantCards",
    "Replaced",
    "TimelineAsk",
]

Author = tuple[str, str | None]
"""Who derived a result (a model's name, or ``offline-fallback``) and the model's error."""


class ExtractionInput(NamedTuple):
    block: Block
    messages: list[Message]
    neighbours: dict[str, list[str]]
    """The key points of the blocks beside it, by block id."""
    timeline: list[EventCard]
    """Relevant events, then the most recently formed, once each, none of the block's own."""


RelevantCards = Callable[[EventsReader, str, tuple[str, ...], int], list[EventCard]]
"""The best cards of a space for some words, at most so many: the events capability's
ranked search (``events.search.relevant_cards``), run by storage inside its own read."""


class TimelineAsk(NamedTuple):
    """Which events an extraction's timeline holds: up to ``relevant`` that ``find`` ranks
    best for the words ``tokens(block)`` gives, then the ``recent`` most recently formed."""

    tokens: Callable[[Block], tuple[str, ...]]
    relevant: int
    recent: int
    find: RelevantCards


class OfflineRows(NamedTuple):
    blocks: list[Block]
    """Blocks derived offline because the model failed, by space and sequence."""
    jobs: list[Job]
    """Finished jobs the offline model answered, oldest first."""


@dataclass
class Replaced:
    """What one block's replacement did: cards removed, kept (id → why), written."""

    removed: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    inserted: list[str] = field(default_factory=list)


class CardRules(Protocol):
    """The decisions taken while cards are committed, pure (the service's rules)."""

    def resolve(self, draft: EventCardDraft, stored: Sequence[str]) -> EventCardDraft:
        """The draft with its references to earlier drafts resolved to ``stored`` (the ids
        now holding them)."""
        ...

    def linked_ids(self, draft: EventCardDraft) -> set[str]:
        """The events the draft's relations name (checked still visible at commit)."""
        ...

    def card(
        self, draft: EventCardDraft, visible: set[str], block: Block, turn: int, moment: datetime
    ) -> EventCard:
        """The card to commit from the block, its relations kept to ``visible`` events."""
        ...

    def search_tokens(self, card: EventCard) -> tuple[str, ...]:
        """The words to find the card's live neighbours with."""
        ...

    def settle(self, card: EventCard, near: Sequence[EventCard]) -> Settled:
        """A restatement of a live event, or the card with any supersede link it gained."""
        ...


class Cards(NamedTuple):
    """Drafts to commit in order, and how: the rules deciding each card, who derived them,
    the moment written, and the job's detail from ``note(inserted, other)``."""

    drafts: list[EventCardDraft]
    rules: CardRules
    author: Author
    moment: datetime
    note: Callable[[int, int], str]


class DerivationStorage(Protocol):
    async def claim(self, now: datetime, owner: str, lease: timedelta, derive: bool) -> Job | None:
        """One transaction: expired leases taken back, then the first due summary or
        extraction (an extraction only once its space's earlier blocks are done, whatever
        their thread, and before older summaries) when
        ``derive``, else (or when none is due) the first due graph job by priority; leased
        to ``owner`` until ``now + lease`` with one more attempt. None: nothing due."""
        ...

    async def lease_holders(self) -> set[str]:
        """The owners holding a running job's lease (a worker id names its host and pid)."""
        ...

    async def any_expired(self, now: datetime) -> bool:
        """Does a running job's lease end before ``now``? One read, no write lock."""
        ...

    async def take_back(self, dead_owners: Collection[str], now: datetime) -> None:
        """One transaction: the jobs of ``dead_owners`` and every job whose lease ended
        become failed, retryable now."""
        ...

    async def renew(self, job: Job, until: datetime) -> bool:
        """The lease of a job still held extended to ``until``; False once taken over."""
        ...

    async def give_back(self, job: Job, now: datetime) -> bool:
        """A held job handed back at once (failed, retryable now); False if not held."""
        ...

    async def fail(self, job: Job, error: str, now: datetime) -> Job | None:
        """A failed attempt of a held job, retried with backoff while attempts remain;
        None (nothing written) when the job was taken over."""
        ...

    async def job(self, job_id: str) -> Job:
        """One job by id (``NotFound`` if unknown)."""
        ...

    async def list_jobs(self, space: str | None, status: str | None) -> list[Job]:
        """Jobs of the space (or all) of the status (or any), oldest first."""
        ...

    async def due_counts(self, now: datetime, kinds: tuple[str, ...]) -> dict[str, int]:
        """Jobs of ``kinds`` a worker could claim at ``now``, by kind (expired leases
        counted as taken back); kinds with none are absent."""
        ...

    async def retry(
        self, job_ids: Sequence[str], now: datetime, requeued: Sequence[str]
    ) -> list[Job]:
        """One transaction: each failed job reset (attempts from zero, due now), a job of a
        kind in ``requeued`` queued again as a fresh job instead (the fresh job is
        returned). ``InvalidInput`` (nothing written) if one is not failed."""
        ...

    async def failed_jobs(self, space: str | None) -> list[Job]:
        """Failed jobs of the space (or all), oldest first."""
        ...

    async def retry_failed(self, now: datetime, space: str | None, requeued: Sequence[str]) -> int:
        """``retry`` of every failed job of the space (or all) in one transaction; how many."""
        ...

    async def summary_input(self, block_id: str) -> tuple[Block, list[Message]]:
        """The block and its messages (``NotFound`` if unknown), one read."""
        ...

    async def extraction_input(
        self, block_id: str, block: Block | None, timeline: TimelineAsk
    ) -> ExtractionInput:
        """One read: the block (``block``: its views as they will be, else as stored), its
        messages, neighbours' key points, and its ``timeline``."""
        ...

    async def commit_summary(
        self, job: Job, block: Block, summary: BlockSummary, author: Author, now: datetime
    ) -> bool:
        """Under the claim: the block's views and mark written, the job finished with its
        author, the block's extraction queued. False (nothing written): taken over."""
        ...

    async def commit_extraction(self, job: Job, block: Block, cards: Cards) -> list[str] | None:
        """Under the claim: the cards committed in order (a restatement becomes a mention
        of the live event), marked with their author and queued for graph projection; the
        job finished (``succeeded`` with cards, else ``skipped``) with ``note(inserted,
        restated)``; the block made ready. The inserted ids; None (nothing written):
        taken over."""
        ...

    async def offline_blocks(self, space: str | None) -> list[Block]:
        """Blocks derived offline because the model failed, by space and sequence."""
        ...

    async def offline_derived(self, space: str | None) -> OfflineRows:
        """Those blocks and the jobs the offline model answered, in one read."""
        ...

    async def mark_block(self, block_id: str, author: Author) -> None:
        """The block's author and error as given."""
        ...

    async def replace_offline(
        self, block: Block, summary: BlockSummary, cards: Cards
    ) -> Replaced | None:
        """One transaction, if the block is still as read (offline-fallback, same update,
        no job under way; else None, nothing written): the model's views and mark, its
        offline cards nobody acted on removed (the others kept, with why), ``cards``
        committed as in ``commit_extraction``, both jobs naming the cards' author (the
        extraction's detail ``note(inserted, kept)``)."""
        ...
