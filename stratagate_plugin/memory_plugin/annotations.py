"""The memory plugin's notes below the web chat's turns (``chat_annotations``, spec §13).

A turn that adopted evidence gets a citation tail: the events and block levels its
``memory_record_use`` receipts adopted, linked to the memory page, with the candidates
its batches showed and it left unused folded beneath. Each block of the session adds a
status row at the turn it ends with: when it was sealed, and when it became ready.

A receipt names the host turn it was recorded in (``tools.memory_record_use`` chooses
``host:<session>:turn:<n>:tool:<call>``); that is how a batch finds its turn, since the
batch itself only knows the namespace's turn counter. Block turn ranges are the thread's
turns, which are the host's turns (``catch_up`` records them in order). Reading costs
one query for the session's batches and receipts, one each for the events and messages
they name, one for its blocks; the settings ``show_citations`` and ``show_status_rows``
switch each off.
"""

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from ..core.gate.records import EvidenceRef, parse_ref
from ..core.gate.trail import BatchUse, EvidenceTrail
from ..core.records import BlockMark
from ..core.retrieval.raw_channel import OPEN_TAIL
from ..harness.types import ChatNote, NoteItem, Session

_RECEIPT = re.compile(r"host:(?P<session>.+):turn:(?P<turn>\d+):tool:.*")
MEMORY_PATH = "/memory"


async def chat_notes(runtime: Any, session: Session) -> list[ChatNote]:
    """Citation tails, then block status rows (the chat keeps this order within a turn).

    ``runtime`` is the plugin's ``MemoryRuntime``."""
    space = runtime.session_space(session)
    settings = runtime.settings
    links = Links(space, session.id)
    notes: list[ChatNote] = []
    if settings.get("show_citations", True):
        trail = await runtime.memory.gate.evidence_trail(space, session.id)
        notes += citation_notes(trail, session.id, links)
    if settings.get("show_status_rows", True):
        marks = await runtime.memory.blocks.marks(space, session.id)
        notes += status_notes(marks, links)
    return notes


class Links:
    """Where a note's items point on the memory page."""

    def __init__(self, space: str, session_id: str) -> None:
        query = urlencode({"thread": session_id, "space": space})
        self.blocks = f"{MEMORY_PATH}/blocks?{query}"

    @staticmethod
    def event(event_id: str) -> str:
        return f"{MEMORY_PATH}/events/{event_id}"


def receipt_turn(receipt_id: str | None, session_id: str) -> int | None:
    """The host turn a receipt of this session was recorded in (None for another's)."""
    match = _RECEIPT.fullmatch(receipt_id or "")
    if match is None or match["session"] != session_id:
        return None
    return int(match["turn"])


def uses_by_turn(trail: EvidenceTrail, session_id: str) -> dict[int, list[BatchUse]]:
    """The session's recorded batches grouped by the host turn that recorded them."""
    found: dict[int, list[BatchUse]] = defaultdict(list)
    for use in trail.uses:
        turn = receipt_turn(use.receipt_id, session_id)
        if turn is not None:
            found[turn].append(use)
    return found


def citation_notes(trail: EvidenceTrail, session_id: str, links: Links) -> list[ChatNote]:
    """One note per turn that adopted anything; ``more`` holds what it checked and left."""
    notes = []
    for turn, uses in sorted(uses_by_turn(trail, session_id).items()):
        adopted = _unique(ref for use in uses for ref in use.adopted_refs)
        if not adopted:
            continue
        taken = set(adopted)
        checked = _unique(ref for use in uses for ref in use.checked_refs() if ref not in taken)
        titles = {ref: title for use in uses for ref, title in use.titles.items()}
        items = tuple(_item(ref, trail, titles, links) for ref in adopted)
        more = tuple(_item(ref, trail, titles, links) for ref in checked)
        notes.append(ChatNote(turn, "citations", citation_title(adopted), items, more))
    return notes


def citation_title(refs: list[str]) -> str:
    """``memory used: 2 events · 1 message`` (short and in English: notes carry no
    translation)."""
    counts: dict[str, int] = defaultdict(int)
    for ref in refs:
        parsed = parse_ref(ref)
        counts[parsed.kind if parsed else "event"] += 1
    parts = [_count(counts[kind], *_NOUNS[kind]) for kind in _NOUNS if counts[kind]]
    return "memory used: " + " · ".join(parts)


_NOUNS = {
    "event": ("event", "events"),
    "block": ("block level", "block levels"),
    "raw": ("message", "messages"),
    "graph-node": ("graph node", "graph nodes"),
}


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _unique(refs: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(refs))


def _item(ref_text: str, trail: EvidenceTrail, titles: dict[str, str], links: Links) -> NoteItem:
    ref = parse_ref(ref_text)
    if ref is None:
        return NoteItem(label=ref_text)
    if ref.kind == "event":
        return _event_item(ref, trail, titles.get(ref_text))
    if ref.kind == "block":
        return NoteItem(f"block {ref.target_id} at L{ref.level}", links.blocks)
    if ref.kind == "raw":
        return _message_item(ref, trail, links)
    return NoteItem(f"graph node {ref.target_id}")


def _event_item(ref: EvidenceRef, trail: EvidenceTrail, title: str | None) -> NoteItem:
    """The event's title as stored now (a correction or a purge shows), its happened (else
    mentioned) time, or its status when it is no longer live."""
    mark = trail.events.get(ref.target_id)
    if mark is None:
        return NoteItem(title or ref.target_id, detail="no longer stored")
    if mark.status in ("forgotten", "archived"):
        detail = mark.status
    else:
        detail = mark.happened_start or mark.mentioned_at or ""
    return NoteItem(mark.title or title or mark.id, Links.event(mark.id), detail)


def _message_item(ref: EvidenceRef, trail: EvidenceTrail, links: Links) -> NoteItem:
    """The message's first words (quoted), and where it is: its block or the open tail."""
    mark = trail.messages.get(ref.message_id or "")
    where = "not yet in a block" if ref.target_id == OPEN_TAIL else f"block {ref.target_id}"
    if mark is None:
        return NoteItem(f"message in {where}", links.blocks)
    text = " ".join(mark.text.split())
    return NoteItem(
        f"{mark.role}: “{text}”", links.blocks, f"{where} · {mark.created_at.isoformat()}"
    )


def status_notes(marks: Iterable[BlockMark], links: Links) -> list[ChatNote]:
    """A "sealed" row, and a "ready" row once derived, at the block's last turn."""
    notes = []
    for mark in marks:
        turns = _turns(mark)
        block = NoteItem(mark.id, links.blocks, mark.sealed_at.isoformat())
        notes.append(ChatNote(mark.end_turn, "status", f"block sealed: {turns}", (block,)))
        if mark.processing_status == "ready":
            when = mark.ready_at.isoformat() if mark.ready_at else ""
            label = mark.title or mark.id
            ready = NoteItem(label, links.blocks, when)
            notes.append(ChatNote(mark.end_turn, "status", f"block ready: {turns}", (ready,)))
    return notes


def _turns(mark: BlockMark) -> str:
    if mark.start_turn == mark.end_turn:
        return f"turn {mark.start_turn}"
    return f"turns {mark.start_turn}–{mark.end_turn}"
