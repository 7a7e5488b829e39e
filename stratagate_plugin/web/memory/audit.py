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

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.audit.title": "Usage audit",
        "mem.audit.intro": "Every time the agent recorded which memories it used, newest first.",
        "mem.audit.when": "When",
        "mem.audit.tool": "Tool",
        "mem.audit.thread": "Conversation",
        "mem.audit.turn": "Turn",
        "mem.audit.adopted": "Adopted events",
        "mem.audit.verdict": "Verdict",
        "mem.audit.receipt": "Receipt",
        "mem.audit.nothing": "none adopted",
        "mem.audit.none": "No receipts in this space yet.",
    },
    "zh": {
        "mem.audit.title": "使用记录",
        "mem.audit.intro": "助手每次记录自己采用了哪些记忆，按时间从新到旧。",
        "mem.audit.when": "时间",
        "mem.audit.tool": "工具",
        "mem.audit.thread": "对话",
        "mem.audit.turn": "轮次",
        "mem.audit.adopted": "采用的事件",
        "mem.audit.verdict": "判断",
        "mem.audit.receipt": "回执",
        "mem.audit.nothing": "未采用",
        "mem.audit.none": "这个空间还没有使用记录。",
    },
}


async def audit_page(pages: MemoryPages, request: Request) -> Response:
    space = pages.space(request)
    offset = int_param(request, "offset", 0)
    page = await pages.memory.overview.usage_audit(space, offset, PAGE_SIZE)
    here = f"{SECTION_PATH}/audit?" + urlencode({"space": space})
    context = {"page": page, "here": here}
    return await pages.render(request, "memory/audit.html", context, tab="audit")


def routes(pages: MemoryPages) -> list[Route]:
    return [pages.route("/audit", audit_page)]
