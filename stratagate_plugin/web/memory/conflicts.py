"""The conflicts queue: active events marked as contradicting each other, both sides with
their sources, resolved by keeping both or by one superseding the other (each a receipt);
both events must be of the space the form names."""

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.curation.receipts import receipt_line
from ...core.curation.records import ActionResult
from ...core.errors import InvalidInput, NotFound
from .pages import SECTION_PATH, MemoryPages, form_fields, int_param


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/conflicts", queue, methods=["GET"]),
        pages.route("/conflicts/resolve", resolve, methods=["POST"]),
    ]


async def queue(pages: MemoryPages, request: Request) -> Response:
    """``/memory/conflicts``: 20 pairs a page, newest first."""
    space = pages.space(request)
    offset = int_param(request, "offset", 0)
    page = await pages.memory.timeline.conflicts(space, offset=offset)

    def at(value: int) -> str:
        return f"{SECTION_PATH}/conflicts?{urlencode({'space': space, 'offset': max(0, value)})}"

    context = {
        "page": page,
        "receipt": await _receipt(pages, request.query_params.get("receipt", "")),
        "newer_url": at(offset - page.limit) if offset > 0 else None,
        "older_url": at(offset + page.limit) if page.has_more else None,
        "page_number": offset // page.limit + 1,
    }
    return await pages.render(request, "memory/conflicts.html", context, tab="conflicts")


async def resolve(pages: MemoryPages, request: Request) -> Response:
    """Form ``event_id``, ``other_id``, ``action`` (keep_both | supersedes)."""
    fields = await form_fields(request)
    event_id, other_id = fields.get("event_id", ""), fields.get("other_id", "")
    if not event_id or not other_id:
        raise InvalidInput("event_id and other_id are both needed")
    for item in (event_id, other_id):
        card = await pages.memory.events.get(item)
        pages.check_space(request, card.namespace, "event", item)
    result = await pages.memory.curation.resolve_conflict(
        event_id, other_id, fields.get("action", "")
    )
    query = urlencode({"space": result.card.namespace, "receipt": result.action.id})
    return RedirectResponse(f"{SECTION_PATH}/conflicts?{query}", status_code=303)


async def _receipt(pages: MemoryPages, action_id: str) -> str | None:
    if not action_id.startswith("act_"):
        return None
    try:
        action = await pages.memory.curation.receipt(action_id)
        card = await pages.memory.events.get(action.target_id)
    except NotFound:
        return None
    return receipt_line(ActionResult(action=action, card=card))
