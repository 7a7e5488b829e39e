"""Raw data: one block, event or usage receipt as JSON, on a page or as ``application/json``.

The JSON is what the engine holds (``block_details``, ``event_details``, the stored
receipt with its batch), every secret-looking string redacted: L5 messages keep what was
said word for word, and a pasted key must still not leave the app.
"""

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.errors import NotFound
from ...core.text.secrets import redact_value
from ..shell.templating import json_response
from .pages import MemoryPages

KINDS = ("event", "block", "receipt")


def asked(request: Request) -> tuple[str, str]:
    """The ``kind`` (one of ``KINDS``, else 400) and ``id`` asked for."""
    kind = request.query_params.get("kind") or KINDS[0]
    if kind not in KINDS:
        raise HTTPException(400, f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return kind, request.query_params.get("id", "").strip()


async def stored(pages: MemoryPages, request: Request, kind: str, item_id: str) -> Any:
    """The item as JSON-ready data, secrets redacted; unknown → ``NotFound``."""
    if kind == "event":
        found: Any = (await pages.memory.curation.event_details(item_id)).model_dump(mode="json")
    elif kind == "block":
        found = (await pages.memory.curation.block_details(item_id)).model_dump(mode="json")
    else:
        found = await pages.memory.overview.usage_receipt(pages.space(request), item_id)
    return redact_value(found)


async def raw_page(pages: MemoryPages, request: Request) -> Response:
    kind, item_id = asked(request)
    data = await stored(pages, request, kind, item_id) if item_id else None
    context = {"kinds": KINDS, "kind": kind, "item_id": item_id, "data": data}
    return await pages.render(request, "memory/raw.html", context, tab="raw")


async def raw_json(pages: MemoryPages, request: Request) -> Response:
    """The same data as ``application/json``; errors are JSON too (404, 400)."""
    try:
        kind, item_id = asked(request)
    except HTTPException as error:
        return json_response({"error": error.detail}, status_code=400)
    if not item_id:
        return json_response({"error": "id is required"}, status_code=400)
    try:
        return json_response(await stored(pages, request, kind, item_id))
    except NotFound as error:
        return json_response({"error": str(error)}, status_code=404)


def routes(pages: MemoryPages) -> list[Route]:
    return [pages.route("/raw", raw_page), pages.route("/raw.json", raw_json)]
