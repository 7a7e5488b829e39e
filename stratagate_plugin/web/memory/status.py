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

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.status.title": "Memory status",
        "mem.status.adoptions": "{n} memory adoptions",
        "mem.status.blocks": "Short-term blocks",
        "mem.status.events": "Long-term events",
        "mem.status.conversation": "Conversation history",
        "mem.status.threads": "Conversations",
        "mem.status.messages": "Messages",
        "mem.status.open_turns": "Turns in open tails",
        "mem.status.total": "Total",
        "mem.status.stages": "Processing",
        "mem.status.stage": "Stage",
        "mem.status.state": "State",
        "mem.status.stage.summaries": "Short-term summaries",
        "mem.status.stage.extraction": "Long-term extraction",
        "mem.status.stage.topics": "Topic organisation",
        "mem.status.topics_waiting": "{n} historical topic batches wait for the topic model's "
        "budget ({calls} per {minutes} minutes); the next runs {at}.",
        "mem.status.topics_next_pass": "with the next pass",
        "mem.status.stage.working": "Working",
        "mem.status.stage.failed": "Needs attention",
        "mem.status.stage.idle": "Up to date",
        "mem.status.done": "Done",
        "mem.status.jobs": "Jobs by kind and state",
        "mem.status.kind": "Kind",
        "mem.status.polling": "Refreshes every {s} s while this tab is open.",
        "mem.status.see_jobs": "See the jobs",
        "mem.status.state_pending": "Pending",
        "mem.status.state_running": "Running",
        "mem.status.state_failed": "Failed",
        "mem.status.state_succeeded": "Succeeded",
        "mem.status.state_skipped": "Skipped",
        "mem.status.state_ready": "Ready",
        "mem.status.state_active": "Active",
        "mem.status.state_superseded": "Superseded",
        "mem.status.state_forgotten": "Forgotten",
        "mem.status.state_archived": "Archived",
        "mem.status.kind_block_summary": "Block summary",
        "mem.status.kind_event_extraction": "Event extraction",
        "mem.status.kind_topic_projection": "Topic organisation",
        "mem.status.kind_graph_projection": "Graph organisation",
    },
    "zh": {
        "mem.status.title": "记忆状态",
        "mem.status.adoptions": "{n} 次记忆采用",
        "mem.status.blocks": "短期记忆块",
        "mem.status.events": "长期记忆事件",
        "mem.status.conversation": "对话记录",
        "mem.status.threads": "对话数",
        "mem.status.messages": "消息数",
        "mem.status.open_turns": "未封存的轮次",
        "mem.status.total": "合计",
        "mem.status.stages": "处理进度",
        "mem.status.stage": "阶段",
        "mem.status.state": "状态",
        "mem.status.stage.summaries": "短期压缩",
        "mem.status.stage.extraction": "长期提取",
        "mem.status.stage.topics": "主题整理",
        "mem.status.topics_waiting": "{n} 个历史主题批次在等待主题模型的额度"
        "（每 {minutes} 分钟 {calls} 批）；下一批 {at} 运行。",
        "mem.status.topics_next_pass": "在下一轮处理时",
        "mem.status.stage.working": "处理中",
        "mem.status.stage.failed": "需要处理",
        "mem.status.stage.idle": "已完成",
        "mem.status.done": "已完成",
        "mem.status.jobs": "按类型和状态的任务",
        "mem.status.kind": "类型",
        "mem.status.polling": "页面打开时每 {s} 秒刷新一次。",
        "mem.status.see_jobs": "查看后台任务",
        "mem.status.state_pending": "等待中",
        "mem.status.state_running": "运行中",
        "mem.status.state_failed": "失败",
        "mem.status.state_succeeded": "成功",
        "mem.status.state_skipped": "已跳过",
        "mem.status.state_ready": "就绪",
        "mem.status.state_active": "有效",
        "mem.status.state_superseded": "已被取代",
        "mem.status.state_forgotten": "已遗忘",
        "mem.status.state_archived": "已归档",
        "mem.status.kind_block_summary": "记忆块摘要",
        "mem.status.kind_event_extraction": "事件提取",
        "mem.status.kind_topic_projection": "主题整理",
        "mem.status.kind_graph_projection": "图谱整理",
    },
}


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
