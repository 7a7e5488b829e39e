"""The overview's shapes and rules (pure): a space's counts, each stage's state, pages.

Counts are tallies the storage reads from indexes (``OverviewStorage``); the rules
here turn them into what the status page says: whether work is under way (the page then
polls often), each derivation stage's state, and a tag that changes whenever a count does
(the status panel's ETag, so an unchanged poll is a 304).
"""

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime

JOB_STATES = ("pending", "running", "failed", "succeeded", "skipped")
ACTIVE_STATES = ("pending", "running")
DONE_STATES = ("succeeded", "skipped")
BLOCK_STATES = ("pending", "ready")
EVENT_STATES = ("active", "superseded", "forgotten", "archived")
JobFilter = Literal["failed", "running", "pending", "all"]
JOB_FILTERS: tuple[JobFilter, ...] = ("failed", "running", "pending", "all")
StageState = Literal["working", "failed", "idle"]
T = TypeVar("T")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class SpaceCounts(_Frozen):
    """How much one space holds and how far its derivation is, by state."""

    namespace: str
    blocks: dict[str, int] = Field(default_factory=dict)
    events: dict[str, int] = Field(default_factory=dict)
    jobs: dict[str, dict[str, int]] = Field(default_factory=dict)  # kind → state → n
    threads: int = 0
    messages: int = 0
    open_turns: int = 0
    adoptions: int = 0

    @property
    def busy(self) -> bool:
        """Whether any job waits or runs: the page then polls every few seconds."""
        return any(tally.get(state, 0) for tally in self.jobs.values() for state in ACTIVE_STATES)

    def etag(self, *extra: str) -> str:
        """A tag that changes whenever a count does (``extra``: the language, …)."""
        text = "|".join([self.model_dump_json(), *extra])
        return hashlib.sha256(text.encode()).hexdigest()[:32]


class Stage(_Frozen):
    """One derivation stage (the jobs of one kind): how many wait, run, failed, finished."""

    name: str
    kind: str
    pending: int = 0
    running: int = 0
    failed: int = 0
    done: int = 0

    @property
    def state(self) -> StageState:
        if self.pending or self.running:
            return "working"
        return "failed" if self.failed else "idle"


def stages(counts: SpaceCounts, kinds: Sequence[tuple[str, str]]) -> list[Stage]:
    """The stages named by ``(name, job kind)``, in that order, from the space's job counts."""
    found = []
    for name, kind in kinds:
        tally = counts.jobs.get(kind, {})
        done = sum(tally.get(state, 0) for state in DONE_STATES)
        found.append(
            Stage(
                name=name,
                kind=kind,
                pending=tally.get("pending", 0),
                running=tally.get("running", 0),
                failed=tally.get("failed", 0),
                done=done,
            )
        )
    return found


def job_status(state: JobFilter) -> str | None:
    """The job status a filter keeps (``None``: every status)."""
    return None if state == "all" else state


class AuditEntry(_Frozen):
    """One usage receipt with its batch: which tool's results were adopted, when, where."""

    receipt_id: str
    batch_id: str
    tool: str | None = None
    thread_id: str | None = None
    turn: int | None = None
    event_ids: list[str] = Field(default_factory=list)
    titles: dict[str, str] = Field(default_factory=dict)
    verdict: str | None = None
    created_at: UtcDatetime


def audit_entry(row: Mapping[str, Any], event_ids: list[str], audit: dict[str, Any]) -> AuditEntry:
    """A receipt row (joined with its batch) and its decoded JSON as one entry; the turn
    and thread are the audit's (the batch's turn when the audit lacks it)."""
    citations = audit.get("citations") or []
    titles = {
        str(item["id"]): str(item.get("title", ""))
        for item in citations
        if isinstance(item, dict) and item.get("kind") == "event" and item.get("id")
    }
    return AuditEntry(
        receipt_id=row["receipt_id"],
        batch_id=row["batch_id"],
        tool=row["tool"],
        thread_id=audit.get("thread_id") or row["thread_id"],
        turn=audit.get("turn", row["turn"]),
        event_ids=event_ids,
        titles=titles,
        verdict=audit.get("verdict"),
        created_at=row["created_at"],
    )


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list newest first: ``more`` when a later page has rows."""

    items: list[T]
    offset: int
    limit: int
    more: bool

    @classmethod
    def of(cls, fetched: list[T], offset: int, limit: int) -> "Page[T]":
        """``fetched`` holds up to ``limit + 1`` rows: the extra one only says there are more."""
        return cls(fetched[:limit], offset, limit, len(fetched) > limit)

    @property
    def previous_offset(self) -> int | None:
        return max(0, self.offset - self.limit) if self.offset > 0 else None

    @property
    def next_offset(self) -> int | None:
        return self.offset + self.limit if self.more else None
