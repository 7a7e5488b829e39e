"""What the import use cases return (spec §11.4): a job with its items, a batch, an undo.

A job is the persisted preview of one import: its candidates, and per candidate the
decision analysis reached (``action`` is None until then). ``committing`` is in the
status list for the wizard's sake but is never stored: a commit is one transaction, so
a job goes from ready (or awaiting confirmation) to committed at once, or stays. The
wizard and the CLI show these models as they are; every field is plain data so a page
can poll it.
"""

from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime
from .external_format import ExternalCandidate

ImportStatus = Literal[
    "extracting",
    "processing",
    "awaiting_confirmation",
    "ready",
    "committing",
    "committed",
    "undone",
    "failed",
]
Action = Literal["ADD", "MERGE", "SUPERSEDE", "CONFLICT", "IGNORE"]
ACTIONS: tuple[Action, ...] = get_args(Action)
TARGETED: frozenset[str] = frozenset({"MERGE", "SUPERSEDE", "CONFLICT"})
IMPORT_FORMATS = ("auto", "v2", "lines", "mem0", "mcp-memory", "letta")
ANALYSING: tuple[ImportStatus, ...] = ("extracting", "processing")
COMMITTABLE: tuple[ImportStatus, ...] = ("awaiting_confirmation", "ready")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class MatchedEvent(_Frozen):
    """A local event the candidate was compared with (one of the Top-K)."""

    id: str
    title: str
    summary: str
    status: str


class Decision(_Frozen):
    """The analysis of one candidate, as persisted."""

    action: Action
    target_ids: list[str] = Field(default_factory=list)
    matches: list[MatchedEvent] = Field(default_factory=list)
    reason: str
    confidence: float
    requires_confirmation: bool
    gate: Literal["exact-duplicate", "clear-new", "decider", "decider-error", "template"]
    merged_summary: str | None = None  # a MERGE's text when not the candidate's own


class ImportItem(_Frozen):
    """One candidate and, once analysed, its proposed action; ``choice`` is the user's."""

    index: int
    candidate: ExternalCandidate
    action: Action | None = None
    target_ids: list[str] = Field(default_factory=list)
    matches: list[MatchedEvent] = Field(default_factory=list)
    reason: str = ""
    confidence: float | None = None
    requires_confirmation: bool = False
    choice: Action | None = None
    merged_summary: str | None = None

    @property
    def analysed(self) -> bool:
        return self.action is not None


class ImportJob(_Frozen):
    """A persisted import: status, progress ``processed``/``total``, and its items.

    ``recovered``: the text was not valid v2 and was recovered (every item then needs the
    user's confirmation). ``dropped``: candidates without a title or summary.
    ``batch_id`` is the source block id once committed. ``owner``: the process that last
    analysed it; ``abandoned``: still being analysed by an owner that is gone (a killed
    run), so whoever imports the same text again, or a running worker, resumes it."""

    id: str
    namespace: str
    status: ImportStatus
    format: str
    source_system: str
    total: int
    processed: int
    recovered: bool = False
    dropped: int = 0
    error: str | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    batch_id: str | None = None
    owner: str | None = None
    abandoned: bool = False
    items: list[ImportItem] = Field(default_factory=list)

    @property
    def shown_status(self) -> str:
        """The status as listed: ``abandoned`` for a job nobody is analysing any more."""
        return "abandoned" if self.abandoned else self.status

    @property
    def needs_confirmation(self) -> list[ImportItem]:
        return [item for item in self.items if item.requires_confirmation]

    @property
    def named_event_ids(self) -> list[str]:
        """The events its items name, targets and matches (a commit links only those
        still live)."""
        return [t for item in self.items for t in [*item.target_ids, *(m.id for m in item.matches)]]


class ImportBatch(_Frozen):
    """A committed import: the source block (its id is the batch id) and the events it made."""

    id: str
    job_id: str
    namespace: str
    source_system: str
    status: Literal["committed", "undone"]
    event_ids: list[str] = Field(default_factory=list)
    imported_count: int
    ignored_count: int
    committed_at: datetime
    undone_at: datetime | None = None


class CommitPlan(_Frozen):
    """What committing a job now would do, said before it is done: items written, items
    ignored, and how many of those are unsure items left without a choice."""

    job_id: str
    total: int
    written: int
    ignored: int
    unsure_ignored: int


class ImportUndo(_Frozen):
    """What undoing a batch removed and brought back."""

    batch_id: str
    job_id: str
    namespace: str
    removed_event_ids: list[str]
    restored_event_ids: list[str]
    removed_graph_node_ids: list[str]
