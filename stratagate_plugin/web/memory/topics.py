"""The topics page: the memory space's book — chapters, each opened to its ``N.0``
overview and its sections of member events — then the fallback entries, the batches
still waiting or failed (with a retry), and the directory exactly as the agent sees it.

A chapter opens in place (htmx loads ``/topics/{id}`` into its ``<details>``) or as a
page of its own without script; a long section shows 9 events at a time with links to
the pages before and after (``?section=N&offset=M``, swapped in place under htmx). A
query or a category lists entries through ``list_topics``, the agent's own listing tool,
so the page finds what the agent would.
Topics are navigation: every event is linked to its own page, where its evidence is.
"""

from typing import Any
from urllib.parse import quote, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.errors import NotFound
from ...core.text.token_budget import estimate_tokens
from ...core.topics.categories import CATEGORIES
from ...core.topics.directory import DIRECTORY_BUDGET, SECTION_PAGE
from ...core.topics.model import FALLBACK_PREFIX, is_fallback
from .pages import SECTION_PATH, MemoryPages, int_param

PAGE_SIZE = 20  # chapters (then fallback entries) per page; list_topics' own maximum


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/topics", book_page, methods=["GET"]),
        pages.route("/topics/retry", retry, methods=["POST"]),
        pages.route("/topics/{topic_id}", chapter_page, methods=["GET"]),
    ]


def asked_category(request: Request) -> str | None:
    category = request.query_params.get("category", "").strip()
    if category and category not in CATEGORIES:
        raise HTTPException(400, f"category must be one of {', '.join(CATEGORIES)}")
    return category or None


async def book_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/topics``: the book a page at a time (chapters, then fallback entries), or
    the entries a query or category finds; the directory and the pending batches."""
    space, query = pages.space(request), request.query_params.get("q", "").strip()[:500]
    category, offset = asked_category(request), int_param(request, "offset", 0)
    window = (0, 0) if query or category else (offset, PAGE_SIZE)  # the chapters shown
    book = await pages.memory.topics.book(space, pending_limit=PAGE_SIZE, window=window)
    chapters: list[dict[str, Any]] = []
    if query or category:
        found = await pages.memory.topics.catalog(space, query, category, offset, PAGE_SIZE)
        entries, total = found["topics"], found["total"]
    else:
        chapters, found = await _book_window(pages, space, book, offset)
        entries = [entry for entry in found["topics"] if entry["isFallback"]]
        entries = entries[: PAGE_SIZE - len(chapters)]
        total = book["chapterCount"] + book["fallbackEntries"]
    directory = await pages.memory.topics.directory(space)
    asked = {"q": query, "category": category or ""}
    following = offset + PAGE_SIZE
    context = {
        "book": book,
        "chapters": chapters,
        "entries": [with_event_id(entry) for entry in entries],
        "filtered": bool(query or category),
        "asked": asked,
        "categories": found["categories"],
        "directory": directory,
        "directory_tokens": estimate_tokens(directory),
        "directory_budget": DIRECTORY_BUDGET,
        "failed": book["pendingCounts"].get("failed", 0),
        "pending_total": sum(book["pendingCounts"].values()),
        "retried": int_param(request, "retried", -1, low=-1),
        "newer_url": book_url(space, asked, offset - PAGE_SIZE) if offset > 0 else None,
        "older_url": book_url(space, asked, following) if following < total else None,
        "page_number": offset // PAGE_SIZE + 1,
        "empty": not book["chapterCount"] and not book["fallbackEntries"] and not book["pending"],
    }
    return await pages.render(request, "memory/topics.html", context, tab="topics")


async def _book_window(
    pages: MemoryPages, space: str, book: dict[str, Any], offset: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The chapters of this page (the book's window), and the listing page holding the
    fallback entries after them (the listing counts only the chapters the agent is shown
    before its fallbacks)."""
    shown = book["chapters"]
    listed = book["listedChapters"]
    start = listed + max(0, offset - book["chapterCount"])
    room = max(1, PAGE_SIZE - len(shown))
    return shown, await pages.memory.topics.catalog(space, offset=start, limit=room)


def with_event_id(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with ``eventId``: the event a fallback entry stands for (else ``None``)."""
    event_id = entry["id"].removeprefix(FALLBACK_PREFIX) if entry["isFallback"] else None
    return {**entry, "eventId": event_id}


def book_url(space: str, asked: dict[str, str], offset: int, **more: object) -> str:
    kept = {name: value for name, value in asked.items() if value}
    query = urlencode({"space": space, **kept, "offset": max(0, offset), **more})
    return f"{SECTION_PATH}/topics?{query}"


async def chapter_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/topics/{id}``: one chapter (``N.0`` overview, then its sections) or one
    fallback entry, every event linked; an unknown id is a 404. Under htmx, the body only."""
    space, topic_id = pages.space(request), request.path_params["topic_id"]
    chapter, entry = None, None
    if is_fallback(topic_id):
        entry = with_event_id(await pages.memory.topics.expand(space, topic_id))  # NotFound
    else:
        book = await pages.memory.topics.book(space, pending_limit=0)  # its chapters only
        chapter = next((c for c in book["chapters"] if c["id"] == topic_id), None)
        if chapter is None:
            raise NotFound(f"no topic {topic_id!r} in this memory space")
    paged, offset = int_param(request, "section", 0, low=0), int_param(request, "offset", 0)
    if chapter is not None:
        chapter = {**chapter, "sections": paged_sections(space, chapter, paged, offset)}
    cards = {card.id: card for card in await pages.memory.topics.events_of(space, topic_id)}
    context = {"entry": entry, "chapter": chapter, "cards": cards}
    fragment = bool(request.headers.get("hx-request"))
    template = "memory/_topic_body.html" if fragment else "memory/topic.html"
    return await pages.render(request, template, context, tab="topics")


def paged_sections(
    space: str, chapter: dict[str, Any], paged: int, offset: int
) -> list[dict[str, Any]]:
    """Each section with one page of its events (``SECTION_PAGE``): section number
    ``paged`` (1-based) from ``offset``, every other from its start."""
    base = f"{SECTION_PATH}/topics/{quote(chapter['id'], safe='')}?space={quote(space, safe='')}"
    return [
        _section_window(section, k, offset if k == paged else 0, base)
        for k, section in enumerate(chapter["sections"], 1)
    ]


def _section_window(section: dict[str, Any], number: int, offset: int, base: str) -> dict[str, Any]:
    """One page of a section's events, with links to the pages before and after."""
    ids = section["eventIds"]
    start = min(offset, len(ids))
    window = ids[start : start + SECTION_PAGE]
    end = start + len(window)

    def link(at: int) -> str:
        return f"{base}&section={number}&offset={at}"

    return {
        **section,
        "eventIds": window,
        "total": len(ids),
        "start": start + 1,
        "end": end,
        "nextUrl": link(end) if end < len(ids) else None,
        "prevUrl": link(max(0, start - SECTION_PAGE)) if start else None,
    }


async def retry(pages: MemoryPages, request: Request) -> Response:
    """Every failed topic batch of the space queued again; the worker asked to run now."""
    space = pages.space(request)
    count = await pages.memory.topics.retry(space)
    pages.runtime.kick()
    return RedirectResponse(book_url(space, {}, 0, retried=count), status_code=303)
