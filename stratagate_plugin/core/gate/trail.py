"""A thread's evidence trail: each batch it opened, what its receipt adopted, and the
events its refs name as they are now (a corrected title, a forgotten event).

What a chat shows below an answer ("memory used: …", the candidates checked and left) is
built from this; the records are plain data, read in three queries however long the thread.
"""

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class BatchUse(_Frozen):
    """One batch of the thread; ``receipt_id`` and ``adopted_refs`` once it was recorded.

    ``opened_turn`` is the namespace turn at which it was opened (the host's own turn
    number is in the receipt id the host chose)."""

    id: str
    sequence: int
    tool: str
    evidence_refs: tuple[str, ...]
    titles: dict[str, str] = Field(default_factory=dict)
    status: str
    opened_turn: int
    created_at: UtcDatetime
    receipt_id: str | None = None
    adopted_refs: tuple[str, ...] = ()
    recorded_at: UtcDatetime | None = None

    def checked_refs(self) -> tuple[str, ...]:
        """The refs the batch exposed and its receipt did not adopt."""
        adopted = set(self.adopted_refs)
        return tuple(ref for ref in self.evidence_refs if ref not in adopted)


SNIPPET_CHARS = 160


class EventMark(_Frozen):
    """An event named by a ref, as stored now."""

    id: str
    title: str
    status: str
    happened_start: str | None = None
    mentioned_at: str | None = None


class MessageMark(_Frozen):
    """The start of a message a raw ref names (a purged message shows its tombstone)."""

    id: str
    role: str
    text: str
    created_at: UtcDatetime


class EvidenceTrail(_Frozen):
    uses: tuple[BatchUse, ...] = ()
    events: dict[str, EventMark] = Field(default_factory=dict)
    messages: dict[str, MessageMark] = Field(default_factory=dict)
