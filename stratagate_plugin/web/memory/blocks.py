"""The short-term page: a conversation's block rail oldest → newest with its open tail,
L0–L5 previews, expanding a block as the user, and retrying a failed summary."""

import dataclasses
import hashlib
from urllib.parse import urlencode

from markupsafe import Markup
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.blocks.rail import RAIL_PAGE, RailBlock
from ..shell.templating import fragment, render
from .pages import SECTION_PATH, MemoryPages, form_fields, int_param

LEVELS = tuple(range(6))
CARD = "memory/_block_card.html"


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
        "cards": [block_card(request, entry, space) for entry in rail.blocks] if rail else [],
        "levels": LEVELS,
    }
    return await pages.render(request, "memory/blocks.html", context, tab="blocks")


def block_card(request: Request, entry: RailBlock, space: str) -> Markup:
    """A block's card, rendered again only when the block or its place changed (its
    ``card_fingerprint`` holds every field the card shows: the block's, its status, level,
    distance, sizes, events and error)."""
    context = {"entry": entry, "levels": LEVELS, "base": SECTION_PATH, "space": space}
    key = hashlib.blake2b(card_fingerprint(space, entry).encode(), digest_size=16).hexdigest()
    return fragment(request, CARD, context, key)


def card_fingerprint(space: str, entry: RailBlock) -> str:
    """Every field of the entry: the block as its JSON (a pydantic ``repr`` is ~4× slower,
    ~2 ms a page of 40 cards), the others as their ``repr``."""
    parts = [space]
    for field in dataclasses.fields(entry):
        value = getattr(entry, field.name)
        parts.append(value.model_dump_json() if isinstance(value, BaseModel) else repr(value))
    return "\x1f".join(parts)


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
        return render(request, CARD, context)
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
