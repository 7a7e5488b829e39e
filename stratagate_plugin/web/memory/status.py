"""The status page: a space's counts, each derivation stage's state, the adoptions counter.

The counts are a fragment of their own (``/status/panel``) that ``stratagate.js`` polls:
every 2.5 s while a job waits or runs, every 30 s otherwise (the fragment says which in
``data-poll-interval``). Its ETag is a digest of the counts and the language, so a poll
that finds nothing changed is a 304 with no page rendered.
"""

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.overview.rules import JOB_STATES, SpaceCounts
from ..shell.i18n import request_language
from ..shell.templating import not_modified_or, render
from .pages import SECTION_PATH, MemoryPages

BUSY_POLL_MS, IDLE_POLL_MS = 2500, 30000


async def status_page(pages: MemoryPages, request: Request) -> Response:
    space = pages.space(request)
    counts = await pages.memory.overview.space_counts(space)
    waiting = await pages.memory.topics.budget_wait(space)
    context = {**panel(pages, counts), "topics_waiting": waiting}
    return await pages.render(request, "memory/status.html", context, tab="status")


async def status_panel(pages: MemoryPages, request: Request) -> Response:
    """The counts alone, for the poll; 304 when they are what the client last saw."""
    space = pages.space(request)
    counts = await pages.memory.overview.space_counts(space)
    waiting = await pages.memory.topics.budget_wait(space)
    context = {**panel(pages, counts), "space": space, "base": SECTION_PATH}
    context["topics_waiting"] = waiting
    etag = counts.etag(request_language(request), repr(waiting))
    return not_modified_or(
        request, etag, lambda: render(request, "memory/status_panel.html", context)
    )


def panel(pages: MemoryPages, counts: SpaceCounts) -> dict[str, Any]:
    return {
        "counts": counts,
        "stages": pages.memory.overview.derivation_stages(counts),
        "job_states": JOB_STATES,
        "poll_ms": BUSY_POLL_MS if counts.busy else IDLE_POLL_MS,
    }


def routes(pages: MemoryPages) -> list[Route]:
    return [pages.route("/", status_page), pages.route("/status/panel", status_panel)]
