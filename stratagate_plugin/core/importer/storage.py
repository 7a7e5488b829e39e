"""What imports need from storage (the contract a database implements).

Jobs and their items are stored as the analysis leaves them: a decision fills an empty slot
once, and the status moves only from the state the service saw (``save_recovery``,
``finish_analysis``), so a second worker or a replay changes nothing. A commit is decided
by the service on ``commit_view``; ``write_batch`` writes it in one transaction only if
nothing it was decided on changed since (else ``StaleCommit``: the service decides again).
"""

from typing import Any, NamedTuple, Protocol

from ..events.cards import EventCard
from .jobs import ImportBatch, ImportJob, MatchedEvent

__all__ = [
    "BatchWrite",
    "CommitView",
    "ImportsStorage",
    "NewJob",
    "Recovery",
    "RemovedBatch",
    "SourceBlock",
    "StaleCommit",
]


class StaleCommit(Exception):
    """What a commit was decided on (the job, its text, its targets, the space's turn)
    changed between its view and its write: nothing was written."""


class NewJob(NamedTuple):
    namespace: str
    status: str
    fmt: str
    source_system: str
    text: str
    payload: dict[str, Any]
    candidates: list[dict[str, Any]]
    """v2 JSON each, in their order (their index is their position)."""
    now: str


class Recovery(NamedTuple):
    """What recovering an unparseable job's text found: its candidates and new status."""

    candidates: list[dict[str, Any]]
    status: str
    error: str | None
    payload: dict[str, Any]
    source_system: str
    now: str


class CommitView(NamedTuple):
    """One consistent read of what a commit is decided on."""

    job: ImportJob
    live: set[str]
    """The events its items name (targets and matches) still active or superseded."""
    turn: int
    """The space's current turn (0 for a space not made yet)."""


class SourceBlock(NamedTuple):
    """The batch's ready source block: ``text`` as one user message, its views given."""

    block_id: str
    message_id: str
    text: str
    readable: str
    condensed: str
    derived: dict[str, object]
    """L0–L2 (``l0_title``, ``l0_tags``, ``l1_summary``, ``l2_keypoints``)."""
    raw_tokens: int
    """Its L5 view's estimated tokens."""


class BatchWrite(NamedTuple):
    job_id: str
    namespace: str
    source: SourceBlock
    cards: list[EventCard]
    merged_from: list[EventCard]
    """The live cards MERGE cards were made from (the write checks they are unchanged)."""
    choices: dict[int, str]
    payload: dict[str, Any]
    """Merged into the job's stored payload."""
    space_defaults: tuple[int, float]
    """The block turn size and decay λ of a space the write makes."""
    now: str


class RemovedBatch(NamedTuple):
    job_id: str
    namespace: str
    event_ids: list[str]
    restored_ids: list[str]
    graph_node_ids: list[str]


class ImportsStorage(Protocol):
    async def insert_job(self, job: NewJob) -> str:
        """A new job with its items (one transaction); its id."""
        ...

    async def job(self, job_id: str) -> ImportJob:
        """The job with its items in order; ``NotFound`` for an unknown id."""
        ...

    async def jobs(self, space: str, limit: int) -> list[ImportJob]:
        """The space's jobs with their items, newest first, at most ``limit``."""
        ...

    async def jobs_with_text(
        self, space: str, text: str, statuses: tuple[str, ...]
    ) -> list[ImportJob]:
        """The space's jobs made from exactly ``text`` in one of ``statuses``, newest first."""
        ...

    async def job_ids_in(self, statuses: tuple[str, ...]) -> list[str]:
        """Every job in one of ``statuses``, oldest first."""
        ...

    async def job_text(self, job_id: str) -> str:
        """The text the job was made from; ``NotFound`` for an unknown id."""
        ...

    async def claim(self, job_id: str, owner: str, now: str) -> None:
        """``owner`` analyses the job now (its heartbeat); nothing for a job past analysis."""
        ...

    async def save_recovery(self, job_id: str, recovery: Recovery) -> bool:
        """The recovered candidates (replacing any, progress 0) and status, only while the
        job is still ``extracting``; False when another worker recovered it first."""
        ...

    async def pending_indexes(self, job_id: str, limit: int) -> list[int]:
        """Indexes of items without a decision, in order, at most ``limit``."""
        ...

    async def record_decision(
        self, job_id: str, index: int, decision: dict[str, Any], owner: str, now: str
    ) -> int | None:
        """Fill the item's empty decision slot, count it and claim the job for ``owner``
        (one transaction): the progress now, None when the slot was already filled."""
        ...

    async def finish_analysis(self, job_id: str, status: str, now: str) -> bool:
        """The job moved to ``status`` only if it is ``processing`` with every item decided."""
        ...

    async def events_sharing_words(self, space: str, text: str, limit: int) -> list[MatchedEvent]:
        """Visible events of the space holding every search token of ``text`` (any visible
        ones when it has none), at most ``limit``: what a duplicate check compares."""
        ...

    async def live_events(self, event_ids: list[str]) -> set[str]:
        """Those of ``event_ids`` still active or superseded."""
        ...

    async def event_cards(self, event_ids: list[str]) -> dict[str, EventCard]:
        """The cards by id (one read); ``NotFound`` for an unknown one."""
        ...

    async def commit_view(self, job_id: str) -> CommitView:
        """The job, its named events still live and the space's turn; ``NotFound``."""
        ...

    async def write_batch(self, batch: BatchWrite, view: CommitView) -> ImportBatch:
        """In one transaction, if the job (items too), its live events and the turn are
        still ``view``'s, its text still ``batch.source.text`` and ``batch.merged_from``
        unchanged (else ``StaleCommit``, nothing written): the source block, the cards,
        their graph projection queued, the choices, the job committed."""
        ...

    async def remove_batch(self, batch_id: str, now: str) -> RemovedBatch | None:
        """Undo a committed batch in one transaction (its events and everything pointing at
        them, what they superseded restored, its source block) and mark the job undone;
        None when it was undone already; ``NotFound`` for an unknown batch."""
        ...

    async def batch(self, batch_id: str) -> ImportBatch:
        """One committed or undone batch; ``NotFound`` for an unknown one."""
        ...

    async def batches(self, space: str) -> list[ImportBatch]:
        """The space's batches, newest commit first."""
        ...

    async def active_cards(self, space: str, limit: int) -> list[EventCard]:
        """The space's active events (both pools), oldest first; ``NotFound`` for a space
        that does not exist."""
        ...
