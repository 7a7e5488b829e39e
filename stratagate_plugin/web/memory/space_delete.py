"""Deleting a memory space from the web app: the plan on a confirmation page, then the
deletion (issue 25), guarded as a purge is (``purge.py``): a one-time token, the plan's
fingerprint (a plan that changed is refused with 409), cross-site posts refused by the guard.
The space's session files belong to the harness and are deleted first."""

import hashlib
import time

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.purge.service import SpacePlan
from ...harness.session_purge import delete_session_files, session_files_of
from ..shell.templating import web_state
from .pages import MemoryPages, form_fields
from .purge import PENDING_SECONDS, Pending


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/spaces/delete/plan", plan_page, methods=["POST"]),
        pages.route("/spaces/delete/confirm", confirm, methods=["POST"]),
    ]


async def plan_page(pages: MemoryPages, request: Request) -> Response:
    """``POST /memory/spaces/delete/plan`` (``namespace``): what goes, and a confirm form."""
    space = (await form_fields(request)).get("namespace", "").strip()
    plan, sessions = await _plan(pages, space)
    if not plan.rows:
        raise HTTPException(404, f"there is no memory space {space!r}")
    pending = Pending(None, space, fingerprint(plan, sessions), time.time())
    token = web_state(request).handoff.put(pending)
    context = {"plan": plan, "sessions": sessions, "token": token, "done": None}
    context["fingerprint"] = fingerprint(plan, sessions)
    return await pages.render(request, "memory/space_delete.html", context, tab="settings")


async def confirm(pages: MemoryPages, request: Request) -> Response:
    fields = await form_fields(request)
    pending = web_state(request).handoff.take(fields.get("token", ""))
    if pending is None or pending.needles is not None:
        raise HTTPException(409, f"this plan has expired (after {PENDING_SECONDS} s) or was used")
    plan, sessions = await _plan(pages, pending.target)
    if fingerprint(plan, sessions) != fields.get("fingerprint") or not plan.rows:
        raise HTTPException(409, "what would be deleted changed since the plan was shown")
    deleted = delete_session_files(session_files_of(plan.threads))
    done = await pages.memory.purge.delete_space(pending.target, sessions=deleted)
    rows, receipt = sum(done.deleted.values()), done.receipt.id
    line = f"{rows} rows, {len(deleted)} session files (receipt {receipt})"
    context = {"plan": plan, "sessions": [], "token": "", "fingerprint": "", "done": line}
    return await pages.render(request, "memory/space_delete.html", context, tab="settings")


async def _plan(pages: MemoryPages, space: str) -> tuple[SpacePlan, list[str]]:
    plan = await pages.memory.purge.space_deletion_plan(space)
    return plan, [str(p) for p in session_files_of(plan.threads)]


def fingerprint(plan: SpacePlan, sessions: list[str]) -> str:
    body = repr((plan.namespace, sorted(plan.rows.items()), sorted(plan.backups), sessions))
    return hashlib.sha256(body.encode()).hexdigest()[:16]
