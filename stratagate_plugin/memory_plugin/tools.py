"""The agent's memory tools (spec §12.3): typed functions over the core façade.

Every retrieval or expansion opens an evidence batch and returns its id and refs; the
topic tools are navigation only and open none. The host turns any exception into an
``Error: …`` tool result, so the agent loop never breaks.
"""

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from ..core.errors import NotFound
from ..core.events.ranking import EventHit
from ..core.gate.records import Strategy, Verdict
from ..core.graph.views import compact_card, source_event_line
from ..core.profile.fields import FIELD_NAMES
from ..core.remember.rules import Category
from ..core.retrieval.raw_channel import OPEN_TAIL
from ..core.topics.categories import CATEGORIES
from ..harness.types import ToolCallContext
from .runtime import MemoryRuntime

PREFIX = "This tool is provided by the StrataGate plugin. "
Limit = Annotated[int, Field(ge=1, le=20)]
ProfileField = Literal[FIELD_NAMES]  # type: ignore[valid-type]
Category_ = Literal[CATEGORIES]  # type: ignore[valid-type]


def memory_tools(runtime: MemoryRuntime) -> list[Callable[..., Any]]:
    """The eleven tools bound to one running plugin (memory_remember only when enabled)."""
    tools = [
        *RetrievalTools(runtime).all(),
        *GraphTools(runtime).all(),
        *_gate_tools(runtime),
        _profile_tool(runtime),
        *_topic_tools(runtime),
    ]
    if runtime.settings.get("agent_memory_enabled", True):
        tools.append(_remember_tool(runtime))
    return tools


def _where(runtime: MemoryRuntime, call: ToolCallContext) -> tuple[str, str]:
    return runtime.session_space(call.session), call.session.id


async def _batch(
    runtime: MemoryRuntime,
    call: ToolCallContext,
    tool: str,
    refs: list[str],
    titles: dict[str, str],
    results: Any,
    **extra: Any,
) -> dict[str, Any]:
    space, thread = _where(runtime, call)
    batch = await runtime.memory.gate.open_batch(space, thread, tool, refs, titles)
    return {
        "batchId": batch.id,
        "evidenceRefs": batch.evidence_refs,
        "results": results,
        "next": "Assess this batch with memory_assess, then close it with memory_record_use.",
        **extra,
    }


class RetrievalTools:
    """The five retrieval/expansion tools; each opens an evidence batch."""

    def __init__(self, runtime: MemoryRuntime) -> None:
        self.runtime = runtime

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.memory_search_events,
            self.memory_search_raw,
            self.memory_get_blocks,
            self.memory_expand_block,
            self.memory_expand_event,
        ]

    async def memory_search_events(
        self,
        call: ToolCallContext,
        query: str,
        limit: Limit = 6,
        offset: Annotated[int, Field(ge=0)] = 0,
        temporal_intent: Literal["first", "latest"] | None = None,
        event_type: str | None = None,
        participants: list[str] | None = None,
        topic_id: str | None = None,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Search long-term events (what
        happened, when, how it changed) by words, participants, type or first/latest;
        with topic_id (from memory_list_topics) only that topic's events, and an empty
        query lists them in order."""
        space, _ = _where(self.runtime, call)
        if topic_id is not None:
            hits = await self.runtime.memory.topics.search_events(
                space, topic_id, query, limit, offset
            )
        else:
            hits = await self._search_hits(
                space, query, limit, offset, temporal_intent, event_type, participants
            )
        refs = [f"event:{hit.card.id}" for hit in hits]
        titles = {f"event:{hit.card.id}": hit.card.title for hit in hits}
        return await _batch(
            self.runtime,
            call,
            "memory_search_events",
            refs,
            titles,
            [hit.compact() for hit in hits],
        )

    async def _search_hits(
        self,
        space: str,
        query: str,
        limit: int,
        offset: int,
        temporal_intent: Literal["first", "latest"] | None,
        event_type: str | None,
        participants: list[str] | None,
    ) -> list[EventHit]:
        return await self.runtime.memory.events.search(
            space,
            query,
            limit=limit,
            offset=offset,
            temporal_intent=temporal_intent,
            event_type=event_type,
            participants=participants or (),
        )

    async def memory_search_raw(
        self,
        call: ToolCallContext,
        query: str,
        limit: Limit = 6,
        scope: Literal["namespace", "session"] = "namespace",
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Search the raw (L5) messages of
        sealed conversation blocks and of other sessions' not yet sealed turns; each hit
        comes with its previous and next message. Namespace scope ranks by the fused
        retrieval (the message, its neighbours, its block, events citing it, dates the
        query names); session scope by BM25 in this thread's sealed blocks."""
        space, thread = _where(self.runtime, call)
        memory = self.runtime.memory
        if scope == "session":
            hits = await memory.retrieval.search_raw(space, query, limit, thread)
        else:
            hits = await memory.retrieval.search_raw_ranked(
                space, query, limit, current_thread=thread
            )
        refs = [f"raw:{h.block_id or OPEN_TAIL}:{h.message.id}:{i}" for i, h in enumerate(hits)]
        results = [_raw_card(ref, hit) for ref, hit in zip(refs, hits, strict=True)]
        return await _batch(self.runtime, call, "memory_search_raw", refs, {}, results)

    async def memory_get_blocks(
        self,
        call: ToolCallContext,
        scope: Literal["session", "namespace"] = "session",
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. List conversation blocks at their
        current (decayed) levels, up to 40 newest first skipping offset newest
        (omittedBlockCount counts the older ones), with the status of the open, not yet
        sealed tail."""
        space, thread = _where(self.runtime, call)
        report = await self.runtime.memory.events.agent_blocks(space, thread, scope, offset=offset)
        refs = [f"block:{v.block.id}:level:{v.current_level}" for v in report.blocks]
        results = [_block_card(v) for v in report.blocks]
        return await _batch(
            self.runtime, call, "memory_get_blocks", refs, {}, results, status=report.status()
        )

    async def memory_expand_block(
        self, call: ToolCallContext, id: str, target: str | int | None = None
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Show a block at a deeper level
        ('next', 'L0'..'L5' or 'raw'); it then fades again from that level."""
        view = await self.runtime.memory.blocks.expand(id, target, source="agent")
        ref = f"block:{view.block.id}:level:{view.current_level}"
        return await _batch(self.runtime, call, "memory_expand_block", [ref], {}, _block_card(view))

    async def memory_expand_event(self, call: ToolCallContext, id: str) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Show one event in full with the
        original messages it was extracted from."""
        expansion = await self.runtime.memory.events.expand(id)
        card = expansion.card.model_dump(mode="json", exclude={"namespace"})
        sources = [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "createdAt": m.created_at.isoformat(),
            }
            for m in expansion.messages
        ]
        ref = f"event:{expansion.card.id}"
        return await _batch(
            self.runtime,
            call,
            "memory_expand_event",
            [ref],
            {ref: expansion.card.title},
            {"event": card, "sources": sources},
        )


class GraphTools:
    """The two knowledge-graph tools; each opens an evidence batch of ``graph-node:`` refs."""

    def __init__(self, runtime: MemoryRuntime) -> None:
        self.runtime = runtime

    def all(self) -> list[Callable[..., Any]]:
        return [self.memory_search_graph, self.memory_expand_graph_node]

    async def memory_search_graph(
        self, call: ToolCallContext, query: str, limit: Limit = 8
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Search the knowledge graph (what
        is currently true about people, pets, places, projects, organisations and tools, and
        what was true before); each node comes with its current facts, relations and up to six
        source events, and every fact, relation and alias with the events it comes from."""
        space, _ = _where(self.runtime, call)
        hits = await self.runtime.memory.graph.search(space, query, limit)
        refs = [f"graph-node:{hit.view.node.id}" for hit in hits]
        titles = {ref: hit.view.node.name for ref, hit in zip(refs, hits, strict=True)}
        results = [hit.compact() | {"ref": ref} for ref, hit in zip(refs, hits, strict=True)]
        return await _batch(self.runtime, call, "memory_search_graph", refs, titles, results)

    async def memory_expand_graph_node(self, call: ToolCallContext, id: str) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Show one knowledge-graph node in
        full: current and historical facts with their validity, relations in both
        directions, each with its source events, and those events' titles, quoted words
        and message ids (expand an event with memory_expand_event)."""
        space, _ = _where(self.runtime, call)
        view = await self.runtime.memory.graph.node(id)
        if view.node.namespace != space:
            raise NotFound(f"no graph node with id {id!r} in this memory space")
        ref = f"graph-node:{view.node.id}:expanded"
        cited = await self.runtime.memory.graph.source_events(view)
        card = compact_card(view) | {"sourceEvents": [source_event_line(c) for c in cited]}
        card["ref"] = ref
        titles = {ref: view.node.name}
        return await _batch(self.runtime, call, "memory_expand_graph_node", [ref], titles, card)


def _raw_card(ref: str, hit: Any) -> dict[str, Any]:
    def line(message: Any) -> dict[str, Any] | None:
        if message is None:
            return None
        return {
            "role": message.role,
            "content": message.content[:500],
            "createdAt": message.created_at.isoformat(),
        }

    return {
        "ref": ref,
        "blockId": hit.block_id,
        "turnRange": list(hit.turn_range),
        "message": {**(line(hit.message) or {}), "id": hit.message.id},
        "previous": line(hit.previous),
        "next": line(hit.next),
    }


def _block_card(view: Any) -> dict[str, Any]:
    block = view.block
    return {
        "id": block.id,
        "turns": [block.start_turn, block.end_turn],
        "level": view.current_level,
        "title": block.l0_title,
        "text": view.text,
    }


def _gate_tools(runtime: MemoryRuntime) -> list[Callable[..., Any]]:
    memory = runtime.memory

    async def memory_assess(
        call: ToolCallContext,
        verdict: Verdict,
        evidence_refs: list[str],
        fit: str,
        next_strategy: Strategy,
        missing: str = "",
        batch_id: str | None = None,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Judge one retrieval batch:
        sufficient (refs directly answer), partial, or wrong, and the next step; missing
        says what is still lacking (not needed for sufficient)."""
        space, thread = _where(runtime, call)
        result = await memory.gate.assess(
            space, thread, batch_id, verdict, evidence_refs, fit, missing, next_strategy
        )
        return result.model_dump(mode="json")

    async def memory_record_use(
        call: ToolCallContext, evidence_refs: list[str], batch_id: str | None = None
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Close a batch, naming the refs
        the answer uses (adopted by a sufficient assessment) or [] for none."""
        space, thread = _where(runtime, call)
        receipt = f"host:{call.session.id}:turn:{call.turn}:tool:{call.call_id}"
        result = await memory.gate.record_use(space, thread, batch_id, evidence_refs, receipt)
        return result.model_dump(mode="json")

    return [memory_assess, memory_record_use]


def _remember_tool(runtime: MemoryRuntime) -> Callable[..., Any]:
    async def memory_remember(
        call: ToolCallContext, content: str, category: Category | None = None
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Keep one self-contained fact,
        decision, preference or correction as long-term memory (duplicates reinforce)."""
        space, thread = _where(runtime, call)
        result = await runtime.memory.remember.save(space, thread, content, category)
        return result.model_dump(mode="json")

    return memory_remember


def _profile_tool(runtime: MemoryRuntime) -> Callable[..., Any]:
    async def memory_profile_update(
        call: ToolCallContext, field: ProfileField, value: str
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Set one resident-profile field
        the user asked for; a change you propose yourself waits for the user's agreement."""
        latest = runtime.turn(call.session, call.turn).user_message
        result = await runtime.memory.profile.agent_update(call.session.id, field, value, latest)
        return result.model_dump(mode="json")

    return memory_profile_update


def _topic_tools(runtime: MemoryRuntime) -> list[Callable[..., Any]]:
    memory = runtime.memory

    async def memory_list_topics(
        call: ToolCallContext,
        query: Annotated[str, Field(max_length=500)] | None = None,
        category: Category_ | None = None,
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Limit = 12,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Page through the memory
        directory's topics (chapters, then events not yet in one), optionally matching a
        query or within a category. Navigation only: it is not evidence and opens no batch."""
        space, _ = _where(runtime, call)
        return await memory.topics.catalog(space, query, category, offset, limit)

    async def memory_expand_topic(
        call: ToolCallContext,
        id: str,
        section: Annotated[int, Field(ge=1)] | None = None,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Open one topic of the memory
        directory: its sections (each with its first event ids), overview and source event
        ids; with section (a section's number) and offset, the next event ids of that
        section. Navigation only: find the events to cite with
        memory_search_events(topic_id=...)."""
        space, _ = _where(runtime, call)
        return await memory.topics.expand(space, id, section, offset)

    return [memory_list_topics, memory_expand_topic]
