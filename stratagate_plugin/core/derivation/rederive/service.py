"""Blocks the offline model derived because the model failed, run on the model again
(``stratagate jobs retry --offline``, the jobs page's button).

The model is asked outside any transaction, with no fallback: both tasks must succeed.
Then one transaction replaces the block's views and its untouched cards with the model's
(``rederive_rows``: a card a person acted on is kept, and the report says which and
why), provided the block is still as read. On any failure the offline result stays, the
block keeps its mark and its error becomes the new one.
"""

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ...clock import iso
from ...errors import StrataGateError
from ...llm.base import ModelError, StructuredModel, StructuredTask
from ...llm.prompts import load_prompt
from ...llm.tasks import SUMMARIZE_BLOCK, BlockSummary, EventCardDraft
from ...records import Block
from ...store import Database, derivation_marks, rederive_rows
from ...store.import_batch_rows import remove_events
from ..blocks.service import (
    checked,
    clean_summary,
    extraction_input,
    extraction_task,
    summary_input,
    write_cards,
    write_summary,
)
from ..fallback import OFFLINE_FALLBACK, error_line
from ..input import prefix_note


@dataclass
class RederiveReport:
    """Blocks asked, re-derived by the model, and kept offline (``failed``: "block: error")."""

    asked: int = 0
    replaced: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # changed meanwhile: left as they were
    removed: int = 0  # offline cards replaced
    added: int = 0  # the model's cards written
    kept: list[str] = field(default_factory=list)  # "EVT: why" (a person acted on it)


@dataclass(frozen=True)
class _Answer:
    summary: BlockSummary
    cards: list[EventCardDraft]


class Rederiver:
    def __init__(
        self, db: Database, model: StructuredModel, clock: Callable[[], datetime], limit: int
    ) -> None:
        self.db, self.model, self.clock, self.limit = db, model, clock, limit

    async def run(self, namespace: str | None, block_ids: list[str] | None) -> RederiveReport:
        blocks = await self.db.read(lambda raw: derivation_marks.offline_blocks(raw, namespace))
        if block_ids is not None:
            blocks = [block for block in blocks if block.id in block_ids]
        report = RederiveReport(asked=len(blocks))
        for block in blocks:
            await self._one(block, report)
        return report

    async def _one(self, block: Block, report: RederiveReport) -> None:
        try:
            answer = await self._ask(block)
        except (ModelError, StrataGateError) as error:
            line = error_line(error)
            await self.db.write(
                lambda raw: derivation_marks.mark_block(raw, block.id, OFFLINE_FALLBACK, line)
            )
            report.failed.append(f"{block.id}: {line}")
            return
        replaced = await self.db.write(lambda raw: self._replace(raw, block, answer))
        if replaced is None:
            report.changed.append(block.id)
            return
        report.replaced.append(block.id)
        report.removed += len(replaced.removed)
        report.added += len(replaced.inserted)
        report.kept += [f"{event_id}: {why}" for event_id, why in replaced.kept.items()]

    async def _ask(self, block: Block) -> _Answer:
        """Both tasks on the model, the extraction seeing the new summary."""
        limit = self.limit
        _, payload = await self.db.read(lambda raw: summary_input(raw, block.id, limit))
        task = StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)
        note = prefix_note(payload["block"]["messages"])
        summary = clean_summary(await self.model.complete(task), note)
        if not summary.should_extract:
            return _Answer(summary, [])
        seen = block.model_copy(update=_views(summary))
        _, given = await self.db.read(lambda raw: extraction_input(raw, block.id, limit, seen))
        cards, _ = await checked(given)(await self.model.complete(extraction_task(given)))
        return _Answer(summary, cards)

    def _replace(
        self, raw: sqlite3.Connection, block: Block, answer: _Answer
    ) -> rederive_rows.Replaced | None:
        if not rederive_rows.unchanged(raw, block):
            return None
        moment = self.clock()
        now, by = iso(moment), self.model.name
        write_summary(raw, block.id, answer.summary, now)
        derivation_marks.mark_block(raw, block.id, by, None)
        rederive_rows.mark_summary_job(raw, block.id, by, now)
        free, kept = rederive_rows.fallback_cards(raw, block.id)
        remove_events(raw, free, now)
        inserted = write_cards(raw, block, answer.cards, moment, (by, None))
        detail = f"re-derived by {by}: {len(inserted)} events" + (
            f", {len(kept)} kept (acted on)" if kept else ""
        )
        rederive_rows.finish_extraction(raw, block.id, by, detail, now)
        return rederive_rows.Replaced(free, kept, inserted)


def _views(summary: BlockSummary) -> dict[str, object]:
    return {
        "l0_title": summary.title,
        "l0_tags": summary.tags,
        "l1_summary": summary.summary,
        "l2_keypoints": summary.keypoints,
        "should_extract": summary.should_extract,
    }
