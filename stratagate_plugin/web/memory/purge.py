"""Purging from the web app: the plan on a confirmation page, then the purge (issue 25).

An event's page posts its id, the raw-data page posts a text; the answer is the plan (what
is erased, by id and time, every occurrence shown as ``[…]``) and a confirm button. The
words are kept on the server under a one-time token (``web/shell/handoff.py``: shared by
``serve``'s web processes), so no page, URL or hidden field repeats them. The confirm post
carries the token and the plan's fingerprint: a token used or older than ten minutes, or
a plan that changed since it was shown, is refused (409) and nothing changes; cross-site
posts are refused by the shell's guard, as for every write. Session files belong to the
harness: they are rewritten first (``harness.session_purge``), then the engine purges.
"""

import hashlib
import time
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.curation.receipts import words_purged_line
from ...core.purge.words import Needles, TextPurgePlan
from ...harness.session_purge import rewrite_sessions, sessions_holding
from ..shell.handoff import TTL_S
from ..shell.templating import web_state
from .pages import MemoryPages, form_fields

PENDING_SECONDS = TTL_S  # how long a plan shown waits for its confirm


@dataclass(frozen=True)
class Pending:
    """A plan shown and not yet confirmed: the words (None for a space's deletion), what
    it is for, the plan's fingerprint, when it was shown."""

    needles: Needles | None
    target: str
    fingerprint: str
    created: float


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/purge/plan", plan_page, methods=["POST"]),
        pages.route("/purge/confirm", confirm, methods=["POST"]),
    ]


async def plan_page(pages: MemoryPages, request: Request) -> Response:
    """``POST /memory/purge/plan`` (``event_id`` or ``text``): the plan and a confirm form."""
    fields = await form_fields(request)
    event_id, text = fields.get("event_id", "").strip(), fields.get("text", "")
    needles = await pages.memory.purge.needles(
        event_id=event_id or None, text=None if event_id else text
    )
    needles, plan = await _plan(pages, needles)
    token = ""
    if not plan.empty:
        pending = Pending(needles, event_id or "text", fingerprint(plan), time.time())
        token = web_state(request).handoff.put(pending)
    context = {"plan": plan, "token": token, "fingerprint": fingerprint(plan), "done": None}
    return await pages.render(request, "memory/purge.html", context, tab="raw")


async def confirm(pages: MemoryPages, request: Request) -> Response:
    """``POST /memory/purge/confirm``: the purge, when the token is fresh and the plan is
    the one shown."""
    fields = await form_fields(request)
    pending = web_state(request).handoff.take(fields.get("token", ""))
    if pending is None or pending.needles is None:
        raise HTTPException(409, "this purge plan has expired or was used: review it again")
    needles, plan = await _plan(pages, pending.needles)
    if fingerprint(plan) != fields.get("fingerprint") or plan.empty:
        raise HTTPException(
            409, "what would be erased changed since the plan was shown: review it again"
        )
    rewritten = rewrite_sessions(needles)
    outcome = await pages.memory.purge.words(needles, target=pending.target, sessions=rewritten)
    context = {
        "plan": plan,
        "token": "",
        "fingerprint": "",
        "done": words_purged_line(outcome.receipt),
    }
    return await pages.render(request, "memory/purge.html", context, tab="raw")


async def _plan(pages: MemoryPages, needles: Needles) -> tuple[Needles, TextPurgePlan]:
    needles, plan = await pages.memory.purge.words_plan(needles)
    sessions = sessions_holding(needles)
    return needles, plan.model_copy(update={"files": {**plan.files, **sessions}})


def fingerprint(plan: TextPurgePlan) -> str:
    """What the plan erases, as a short hash: a confirm for another plan is stale."""
    ids = [item.id for item in (*plan.messages, *plan.events, *plan.blocks)]
    body = repr((plan.hashes, ids, sorted(plan.cells.items()), sorted(plan.files)))
    return hashlib.sha256(body.encode()).hexdigest()[:16]
