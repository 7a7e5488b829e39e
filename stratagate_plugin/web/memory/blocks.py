"""The short-term page: a conversation's block rail oldest → newest with its open tail,
L0–L5 previews, expanding a block as the user, and retrying a failed summary."""

from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.blocks.rail import RAIL_PAGE, RailBlock
from ..shell.templating import render
from .pages import SECTION_PATH, MemoryPages, form_fields, int_param

LEVELS = tuple(range(6))
STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.blocks.title": "Short-term memory",
        "mem.blocks.conversation": "Conversation",
        "mem.blocks.choose": "Show",
        "mem.blocks.counts": "{blocks} blocks · {messages} messages",
        "mem.blocks.no_conversations": "No conversation in this memory space yet.",
        "mem.blocks.rail": "Blocks, oldest → newest",
        "mem.blocks.showing": "Blocks {first}–{last} of {total}",
        "mem.blocks.empty": "No block sealed in this conversation yet.",
        "mem.blocks.block": "Block {n}",
        "mem.blocks.turns": "turns {start}–{end}",
        "mem.blocks.status.sealed": "sealed",
        "mem.blocks.status.deriving": "deriving",
        "mem.blocks.status.ready": "ready",
        "mem.blocks.status.failed": "failed",
        "mem.blocks.level_now": "Current level",
        "mem.blocks.distance_label": "Distance",
        "mem.blocks.distance": "{n} blocks from the newest",
        "mem.blocks.source": "Expanded by",
        "mem.blocks.source.user": "you",
        "mem.blocks.source.agent": "the agent",
        "mem.blocks.source.none": "not expanded",
        "mem.blocks.tags": "Tags",
        "mem.blocks.summary": "Summary",
        "mem.blocks.keypoints": "Key points",
        "mem.blocks.not_derived": "Title, summary and key points appear once its summary job ran.",
        "mem.blocks.sizes": "Size of each level",
        "mem.blocks.level": "Level",
        "mem.blocks.tokens": "Tokens",
        "mem.blocks.percent": "% of L5",
        "mem.blocks.level.0": "title and tags",
        "mem.blocks.level.1": "narrative summary",
        "mem.blocks.level.2": "key points",
        "mem.blocks.level.3": "condensed transcript",
        "mem.blocks.level.4": "readable transcript",
        "mem.blocks.level.5": "raw transcript",
        "mem.blocks.preview": "Preview",
        "mem.blocks.expand": "Expand to",
        "mem.blocks.expand_button": "Expand",
        "mem.blocks.expand_later": "Can be expanded once it is ready.",
        "mem.blocks.retry": "Retry summary",
        "mem.blocks.error": "Last error",
        "mem.blocks.events": "Events from this block",
        "mem.blocks.open_tail": "Open tail",
        "mem.blocks.open_turns": "{turns} / {size} turns · {messages} messages",
        "mem.blocks.view_title": "Block {n} at L{level}",
        "mem.blocks.back": "Back to the conversation",
    },
    "zh": {
        "mem.blocks.title": "短期记忆",
        "mem.blocks.conversation": "对话",
        "mem.blocks.choose": "查看",
        "mem.blocks.counts": "{blocks} 个块 · {messages} 条消息",
        "mem.blocks.no_conversations": "这个记忆空间还没有对话。",
        "mem.blocks.rail": "记忆块（从旧到新）",
        "mem.blocks.showing": "第 {first}–{last} 块，共 {total} 块",
        "mem.blocks.empty": "这段对话还没有封存的块。",
        "mem.blocks.block": "块 {n}",
        "mem.blocks.turns": "第 {start}–{end} 轮",
        "mem.blocks.status.sealed": "已封存",
        "mem.blocks.status.deriving": "整理中",
        "mem.blocks.status.ready": "已整理",
        "mem.blocks.status.failed": "失败",
        "mem.blocks.level_now": "当前层级",
        "mem.blocks.distance_label": "距离",
        "mem.blocks.distance": "距最新 {n} 个块",
        "mem.blocks.source": "展开来源",
        "mem.blocks.source.user": "用户",
        "mem.blocks.source.agent": "智能体",
        "mem.blocks.source.none": "未展开",
        "mem.blocks.tags": "标签",
        "mem.blocks.summary": "摘要",
        "mem.blocks.keypoints": "要点",
        "mem.blocks.not_derived": "标题、摘要和要点会在摘要任务完成后出现。",
        "mem.blocks.sizes": "各层大小",
        "mem.blocks.level": "层级",
        "mem.blocks.tokens": "词元数",
        "mem.blocks.percent": "占 L5 比例",
        "mem.blocks.level.0": "标题与标签",
        "mem.blocks.level.1": "叙述摘要",
        "mem.blocks.level.2": "要点",
        "mem.blocks.level.3": "精简对话",
        "mem.blocks.level.4": "可读对话",
        "mem.blocks.level.5": "原始对话",
        "mem.blocks.preview": "预览",
        "mem.blocks.expand": "展开到",
        "mem.blocks.expand_button": "展开",
        "mem.blocks.expand_later": "整理完成后可以展开。",
        "mem.blocks.retry": "重试摘要",
        "mem.blocks.error": "最近错误",
        "mem.blocks.events": "从此块提取的事件",
        "mem.blocks.open_tail": "未封存的尾部",
        "mem.blocks.open_turns": "{turns} / {size} 轮 · {messages} 条消息",
        "mem.blocks.view_title": "块 {n} 的 L{level} 视图",
        "mem.blocks.back": "返回对话",
    },
}


async def blocks_page(pages: MemoryPages, request: Request) -> Response:
    """The conversation selector and the chosen conversation's rail (default: the most
    recently active one)."""
    space = pages.space(request)
    offset = int_param(request, "offset", 0)
    conversations = await pages.memory.blocks.conversations(space)
    thread = request.query_params.get("thread", "").strip()
    if not thread and conversations:
        thread = conversations[0].thread_id
    rail = await pages.memory.blocks.rail(space, thread, offset) if thread else None
    title = next((c.title for c in conversations if c.thread_id == thread), "")
    context = {
        "conversations": conversations,
        "thread": thread,
        "thread_title": title,
        "rail": rail,
        "levels": LEVELS,
    }
    return await pages.render(request, "memory/blocks.html", context, tab="blocks")


def parse_level(raw: str | None) -> int:
    """``L0``..``L5`` (or ``0``..``5``) → the number; anything else is a 400."""
    text = (raw or "").strip().upper().removeprefix("L")
    if len(text) != 1 or text not in "012345":
        raise HTTPException(400, f"level must be one of L0..L5, not {raw!r}")
    return int(text)


async def block_view(pages: MemoryPages, request: Request) -> Response:
    """One block's text at a level: the fragment a card's preview button loads, or (a
    plain request) that text on its own page."""
    level = parse_level(request.query_params.get("level"))
    view = await pages.memory.blocks.view(request.path_params["block_id"], level)
    context = {"view": view, "level": level, "levels": LEVELS}
    if request.headers.get("hx-request") == "true":
        return render(request, "memory/_block_preview.html", {"base": SECTION_PATH, **context})
    return await pages.render(request, "memory/blocks_view.html", context, tab="blocks")


async def expand(pages: MemoryPages, request: Request) -> Response:
    """Expand (or lower) a ready block to the posted level as the user."""
    block_id = await block_of_space(pages, request)
    level = (await form_fields(request)).get("level", "")
    await pages.memory.blocks.expand(block_id, level, source="user", strict=True)
    return await updated_card(pages, request, block_id)


async def retry(pages: MemoryPages, request: Request) -> Response:
    """Queue the block's failed derivation job again and wake the worker."""
    block_id = await block_of_space(pages, request)
    job = await pages.memory.blocks.failed_job(block_id)
    if job is None:
        raise HTTPException(409, f"block {block_id} has no failed summary job to retry")
    await pages.memory.derivation.retry_job(job.id)
    pages.runtime.kick()
    return await updated_card(pages, request, block_id)


async def block_of_space(pages: MemoryPages, request: Request) -> str:
    """The posted block's id if it is a block of the space the request names; else 404."""
    block_id: str = request.path_params["block_id"]
    entry = await pages.memory.blocks.rail_block(block_id)  # an unknown id: NotFound, 404
    pages.check_space(request, entry.block.namespace, "block", block_id)
    return block_id


async def updated_card(pages: MemoryPages, request: Request, block_id: str) -> Response:
    """htmx: the block's card as it is now; a plain post: back to its conversation."""
    entry = await pages.memory.blocks.rail_block(block_id)
    if request.headers.get("hx-request") == "true":
        space = entry.block.namespace
        context = {"entry": entry, "levels": LEVELS, "base": SECTION_PATH, "space": space}
        return render(request, "memory/_block_card.html", context)
    return RedirectResponse(rail_url(entry), status_code=303)


def rail_url(entry: RailBlock) -> str:
    block = entry.block
    offset = entry.distance // RAIL_PAGE * RAIL_PAGE  # the page the block is on
    query = urlencode({"space": block.namespace, "thread": block.thread_id, "offset": offset})
    return f"{SECTION_PATH}/blocks?{query}#block-{block.id}"


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/blocks", blocks_page),
        pages.route("/blocks/{block_id}/view", block_view),
        pages.route("/blocks/{block_id}/expand", expand, methods=["POST"]),
        pages.route("/blocks/{block_id}/retry", retry, methods=["POST"]),
    ]
