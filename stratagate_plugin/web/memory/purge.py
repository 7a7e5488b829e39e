"""Purging from the web app: the plan on a confirmation page, then the purge (issue 25).

An event's page posts its id, the raw-data page posts a text; the answer is the plan (what
is erased, by id and time, every occurrence shown as ``[…]``) and a confirm button. The
words are kept on the server under a one-time token, so no page, URL or hidden field
repeats them. The confirm post carries the token and the plan's fingerprint: a token used
or older than ``PENDING_SECONDS``, or a plan that changed since it was shown, is refused
(409) and nothing changes; cross-site posts are refused by the shell's guard, as for every
write. Session files belong to the harness: they are rewritten first
(``harness.session_purge``), then the engine purges.
"""

import hashlib
import secrets
import time
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.curation.receipts import words_purged_line
from ...core.purge.words import Needles, TextPurgePlan
from ...harness.session_purge import rewrite_sessions, sessions_holding
from .pages import MemoryPages, form_fields

PENDING_SECONDS = 600
MAX_PENDING = 32

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.purge.title": "Purge: what will be erased",
        "mem.purge.intro": "The words are replaced by [purged] in every row below, removed "
        "from the search index, backups and session files. This cannot be undone.",
        "mem.purge.messages": "Messages holding the words (the rest of each stays)",
        "mem.purge.events": "Events",
        "mem.purge.blocks": "Blocks re-made",
        "mem.purge.other": "Other rows",
        "mem.purge.files": "Backups and session files to rewrite",
        "mem.purge.confirm": "Purge for good",
        "mem.purge.nothing": "The words occur nowhere in memory: nothing to purge.",
        "mem.purge.done": "Purged",
        "mem.purge.text": "Purge a text",
        "mem.purge.text_help": "Erase a text (a pasted password, a number) from every "
        "message, view, event, backup and session file. You will see the plan first.",
        "mem.purge.show_plan": "Show what would be erased",
        "mem.purge.event": "Purge…",
    },
    "zh": {
        "mem.purge.title": "清除：将被抹去的内容",
        "mem.purge.intro": "以下每一行中的这些文字将被替换为 [purged]，"
        "并从搜索索引、备份和会话文件中删除。此操作无法撤销。",
        "mem.purge.messages": "含有这些文字的消息（其余内容保留）",
        "mem.purge.events": "事件",
        "mem.purge.blocks": "重新生成的记忆块",
        "mem.purge.other": "其他行",
        "mem.purge.files": "将被重写的备份和会话文件",
        "mem.purge.confirm": "永久清除",
        "mem.purge.nothing": "记忆中没有这些文字：无需清除。",
        "mem.purge.done": "已清除",
        "mem.purge.text": "清除一段文字",
        "mem.purge.text_help": "从所有消息、视图、事件、备份和会话文件中抹去一段文字"
        "（误贴的密码、号码）。会先显示清除计划。",
        "mem.purge.show_plan": "查看将被抹去的内容",
        "mem.purge.event": "清除…",
    },
}


@dataclass(frozen=True)
class Pending:
    """A plan shown and not yet confirmed: the words (None for a space's deletion), what
    it is for, the plan's fingerprint, when it was shown."""

    needles: Needles | None
    target: str
    fingerprint: str
    created: float


_PENDING: dict[str, Pending] = {}


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
        token = remember(Pending(needles, event_id or "text", fingerprint(plan), time.time()))
    context = {"plan": plan, "token": token, "fingerprint": fingerprint(plan), "done": None}
    return await pages.render(request, "memory/purge.html", context, tab="raw")


async def confirm(pages: MemoryPages, request: Request) -> Response:
    """``POST /memory/purge/confirm``: the purge, when the token is fresh and the plan is
    the one shown."""
    fields = await form_fields(request)
    pending = take(fields.get("token", ""))
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


def take(token: str) -> Pending | None:
    """The pending plan of ``token``, once, while fresh."""
    pending = _PENDING.pop(token, None)
    if pending is None or time.time() - pending.created > PENDING_SECONDS:
        return None
    return pending


def remember(pending: Pending) -> str:
    now = time.time()
    for key in [k for k, p in _PENDING.items() if now - p.created > PENDING_SECONDS]:
        del _PENDING[key]
    while len(_PENDING) >= MAX_PENDING:
        del _PENDING[next(iter(_PENDING))]
    token = secrets.token_urlsafe(16)
    _PENDING[token] = pending
    return token
