"""The usage audit: the space's adoption receipts newest first, 100 per page.

Each receipt is one ``memory_record_use``: which tool's batch it closed, in which
conversation and turn, and the events it adopted (each linked to its page; an empty
receipt says the agent checked memory and used none of it).
"""

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .pages import SECTION_PATH, MemoryPages, int_param

PAGE_SIZE = 100


async def audit_page(pages: MemoryPages, request: Request) -> Response:
    space = pages.space(request)
    offset = int_param(request, "offset", 0)
    page = await pages.memory.overview.usage_audit(space, offset, PAGE_SIZE)
    here = f"{SECTION_PATH}/audit?" + urlencode({"space": space})
    context = {"page": page, "here": here}
    return await pages.render(request, "memory/audit.html", context, tab="audit")


def routes(pages: MemoryPages) -> list[Route]:
    return [pages.route("/audit", audit_page)]
