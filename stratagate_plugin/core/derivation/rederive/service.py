"""Blocks the offline model derived because the model failed, run on the model again
(``stratagate jobs retry --offline``, the jobs page's button).

The model is asked outside any transaction, with no fallback: both tasks must succeed.
Then one transaction replaces the block's views and its untouched cards with the model's
(``DerivationStorage.replace_offline``: a card a person acted on is kept, and the
report says which and why), provided the block is still as read. On any failure the
offline result stays, the block keeps its mark and its error becomes the new one.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ...errors import StrataGateError
from ...llm.base import ModelError, StructuredModel, StructuredTask
from ...llm.prompts import load_prompt
from ...llm.tasks import SUMMARIZE_BLOCK, BlockSummary, EventCardDraft
from ...records import Block
from ..blocks.service import (
    CARD_RULES,
    checked,
    clean_summary,
    extraction_input,
    extraction_task,
    summary_input,
)
from ..fallback import OFFLINE_FALLBACK, error_line
from ..input import prefix_note
from ..storage import Cards, DerivationStorage


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
        self,
        store: DerivationStorage,
        model: StructuredModel,
        clock: Callable[[], datetime],
        limit: int,
    ) -> None:
        self.store, self.model, self.clock, self.limit = store, model, clock, limit

    async def run(self, space: str | None, block_ids: list[str] | None) -> RederiveReport:
        blocks = await self.store.offline_blocks(space)
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
            await self.store.mark_block(block.id, (OFFLINE_FALLBACK, line))
            report.failed.append(f"{block.id}: {line}")
            return
        by = self.model.name

        def detail(inserted: int, kept: int) -> str:
            return f"re-derived by {by}: {inserted} events" + (
                f", {kept} kept (acted on)" if kept else ""
            )

        cards = Cards(answer.cards, CARD_RULES, (by, None), self.clock(), detail)
        replaced = await self.store.replace_offline(block, answer.summary, cards)
        if replaced is None:
            report.changed.append(block.id)
            return
        report.replaced.append(block.id)
        report.removed += len(replaced.removed)
        report.added += len(replaced.inserted)
        report.kept += [f"{event_id}: {why}" for event_id, why in replaced.kept.items()]

    async def _ask(self, block: Block) -> _Answer:
        """Both tasks on the model, the extraction seeing the new summary."""
        _, payload = await summary_input(self.store, block.id, self.limit)
        task = StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)
        note = prefix_note(payload["block"]["messages"])
        summary = clean_summary(await self.model.complete(task), note)
        if not summary.should_extract:
            return _Answer(summary, [])
        seen = block.model_copy(update=_views(summary))
        _, given = await extraction_input(self.store, block.id, self.limit, seen)
        cards, _ = await checked(given)(await self.model.complete(extraction_task(given)))
        return _Answer(summary, cards)


def _views(summary: BlockSummary) -> dict[str, object]:
    return {
        "l0_title": summary.title,
        "l0_tags": summary.tags,
        "l1_summary": summary.summary,
        "l2_keypoints": summary.keypoints,
        "should_extract": summary.should_extract,
    }
