"""A batch's source block by rule (spec §11.4): no model ever reads it.

The import text is one user message; its L4/L3 are the transcript's renderings, and its
L0–L2 are made at once: title = the first non-empty line (≤ 80), tag
``external-memory-import``, L1 = the first 500 characters, L2 = the first 8 lines.
"""

from dataclasses import dataclass, field

from ..blocks.transcript import layer_texts
from ..ids import new_id
from ..records import Role, ToolTrace
from ..text.token_budget import estimate_tokens
from .storage import SourceBlock

IMPORT_TAG = "external-memory-import"
TITLE_LIMIT, L1_LIMIT, L2_LINES = 80, 500, 8


@dataclass(frozen=True)
class _Imported:
    role: Role
    content: str
    tool_calls: tuple[ToolTrace, ...] = field(default=())


def source_block(text: str) -> SourceBlock:
    """The block (new ids) holding ``text``, with every view it is shown by."""
    block_id, message_id = new_id("blk"), new_id("msg")
    raw, readable, condensed = layer_texts([_Imported("user", text)])
    derived, tokens = _derived(text), estimate_tokens(raw)
    return SourceBlock(block_id, message_id, text, readable, condensed, derived, tokens)


def _derived(text: str) -> dict[str, object]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return {
        "l0_title": (lines[0] if lines else "External memory import")[:TITLE_LIMIT],
        "l0_tags": [IMPORT_TAG],
        "l1_summary": text.strip()[:L1_LIMIT],
        "l2_keypoints": [line[:L1_LIMIT] for line in lines[:L2_LINES]],
    }
