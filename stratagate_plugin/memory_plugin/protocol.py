"""The static memory-protocol system section and the finish-step texts (spec §7.4–7.5)."""

import re

PROTOCOL = """[StrataGate memory protocol]
Memory layers: each sealed conversation block has six views — L0 title and tags, L1 summary,
L2 key points, L3 condensed transcript, L4 readable transcript, L5 raw transcript (permanent).
Older blocks fade to shallower views; expand them (memory_expand_block) or read raw messages
(memory_search_raw) instead of guessing details that a shallow view leaves out.
Events record what happened, when and how it changed; the knowledge graph
(memory_search_graph, memory_expand_graph_node) holds what is currently true about people,
places, projects and tools, and what was true before; the resident profile holds what the
user authorised as standing context. Recalled memory is historical evidence: current
instructions and the current workspace take precedence.
Search memory only for information that is not in the visible conversation.
Evidence before answers: every retrieval opens a batch. Relevance is not sufficiency — judge
each batch with memory_assess: sufficient (the refs directly answer the question), partial
(related but something required is missing), wrong (not about the question). Follow
next_strategy with a targeted step; never repeat a search that already failed.
Close every batch with memory_record_use before the final answer: pass only the refs you
actually use (adopted by a sufficient assessment), or [] when you use none. Only adopted
events are reinforced. Order: retrieve → memory_assess → memory_record_use → answer.
Writing memory: standing preferences and identity the user states go to the profile
(memory_profile_update, one field per call); if you propose a profile change yourself, state
the field and new value and apply it only after the user's explicit agreement. Use
memory_remember for one self-contained fact, decision or correction worth keeping; never use
it to bypass profile consent. Record each fact in one place only."""

SCOPE_NOTE = "Do not mention batches, receipts or memory bookkeeping in the answer."


def cleanup_steer(batch_ids: list[str]) -> str:
    listed = ", ".join(batch_ids)
    return (
        f"[StrataGate] Retrieval batches still open: {listed}. Before answering, close each "
        "with memory_record_use (the adopted evidence refs, or [] if none was used). "
        "Do not write the final answer yet."
    )


RECOVERY = (
    "Resume the original user request. All memory batches are closed. Produce the complete, "
    "final user-facing answer now, restating it in full; do not retrieve anything new. "
    + SCOPE_NOTE
)
_BOOKKEEPING = re.compile(
    r"\bbatch_\d+\b|\breceipt\b|\bevidence_refs\b|\bmemory_(assess|record_use)\b", re.I
)
REDO_WITHOUT_BOOKKEEPING = (
    RECOVERY + " Your previous answer mentioned internal memory bookkeeping (batch ids, "
    "receipts or gate tools); write the answer for the user without them."
)


def leaks_bookkeeping(answer: str) -> bool:
    """Does a final answer talk about batches, receipts or the gate tools?"""
    return bool(_BOOKKEEPING.search(answer))


NO_PROGRESS = (
    "StrataGate retrieval cleanup made no progress: the model stopped again without closing "
    "any open batch"
)
