"""``stratagate process`` (run derivation jobs) and ``stratagate events`` (list event cards).

``events`` without filters lists the space's live cards as they were formed; with any of
``--type --status --since --until --participant`` it asks the web timeline's query
(``timeline_filter``), newest first, so both filter alike and a bad value is one line.
"""

import argparse
import json
import sys
from typing import Any

from ..core.config import MemoryConfig
from ..core.events.cards import EVENT_TYPES, EventCard, happened_label
from ..core.memory import StrataGate
from ..core.records import OFFLINE_FALLBACK
from ..core.timeline.filters import STATUS_FILTERS, TimelineFilter, timeline_filter
from .common import add_db_option, add_space_option, open_memory, resolve_space, seal_idle_tails
from .jobs_command import failed_notice, fallback_notice
from .progress import Progress
from .topics_command import waiting_lines

FILTER_PAGE = 500


def register(commands: Any) -> None:
    process = commands.add_parser("process", help="run pending derivation jobs to completion")
    add_db_option(process)
    process.add_argument(
        "-j",
        "--concurrency",
        type=at_least_one,
        default=None,
        metavar="K",
        help=f"model calls under way at once (default {MemoryConfig().derive_concurrency})",
    )
    process.set_defaults(handler=process_jobs)
    events = commands.add_parser("events", help="list event cards")
    add_db_option(events)
    add_space_option(events)
    events.add_argument("--all", action="store_true", help="include forgotten/archived events")
    events.add_argument("--type", default="", help=f"only this type: {', '.join(EVENT_TYPES)}")
    events.add_argument(
        "--status", default="", help=f"only these: {', '.join(STATUS_FILTERS)} (default live)"
    )
    events.add_argument("--since", default="", help="happened (else mentioned) on/after DATE")
    events.add_argument("--until", default="", help="happened (else mentioned) on/before DATE")
    events.add_argument("--participant", default="", help="only events naming this person")
    events.add_argument("--json", action="store_true", help="machine-readable output")
    events.set_defaults(handler=list_events)


async def process_jobs(args: argparse.Namespace) -> int:
    """The progress total is the jobs due when the run began plus the extraction each due
    summary queues; a job another process takes, or one queued later, can make the count
    differ, and the total grows rather than pass 100%."""
    memory = await open_memory(args)
    async with memory:
        await seal_idle_tails(args, memory)  # a tail no chat will come back to seal
        with Progress("process", "jobs", await memory.derivation.due_job_count()) as progress:
            report = await memory.derivation.process_pending(
                on_job=lambda job: progress.advance(note=job.kind),
                concurrency=args.concurrency,
            )
            progress.complete()  # process_pending stops only once no job is due
        failed = await memory.derivation.list_jobs(status="failed")
    lost = f", {report.lost} taken over by another worker" if report.lost else ""
    print(
        f"ran {report.ran} jobs: {report.succeeded} succeeded, {report.skipped} skipped, "
        f"{report.failed} failed{lost}; {len(report.ready_blocks)} blocks became ready"
    )
    if report.topics is not None:
        for line in topic_lines(report.topics):
            print(line)
    if report.dropped:
        print(f"source check: {report.dropped.note()}")
    for error in report.errors[:10]:
        print(f"  failed: {error}", file=sys.stderr)
    for line in failed_notice(failed):
        print(line, file=sys.stderr)
    notice = fallback_notice(report.fallbacks)
    for line in notice:
        print(line, file=sys.stderr)
    misconfigured = bool(notice) and notice[0].startswith("error: ")
    return 1 if failed or misconfigured else 0


def topic_lines(topics: Any) -> list[str]:
    """The topic pass that followed: its batches, and what the budget still holds back."""
    lines = []
    if topics.ran:
        lines.append(
            f"topics: ran {topics.ran} batches: {topics.succeeded} succeeded, "
            f"{topics.skipped} skipped, {topics.failed} failed"
        )
    return lines + waiting_lines(topics.waiting)


def at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


async def list_events(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        query = events_filter(args, space)
        if query is None:
            events = await memory.events.cards(space, include_hidden=args.all)
        else:
            events = await filtered_events(memory, query)
    if args.json:
        print(json.dumps([event_json(e) for e in events], ensure_ascii=False, indent=2))
        return 0
    if not events:
        print("(no events yet)" if query is None else "(no events match these filters)")
    for event in events:
        when = happened_label(event.temporal) or "—"
        state = event.status + (", pinned" if event.pinned else "")
        state += ", offline" if event.derived_by == OFFLINE_FALLBACK else ""
        print(f"{event.id}  {when:<10}  {state:<18} {event.scope:<8} {event.title[:70]}")
    return 0


def events_filter(args: argparse.Namespace, space: str) -> TimelineFilter | None:
    """The timeline query the filters ask for, or None when none is given."""
    asked = [args.type, args.status, args.since, args.until, args.participant]
    if not any(value.strip() for value in asked):
        return None
    status = args.status or ("all" if args.all else "")
    return timeline_filter(
        space,
        since=args.since,
        until=args.until,
        participant=args.participant,
        event_type=args.type,
        status=status,
    )


async def filtered_events(memory: StrataGate, query: TimelineFilter) -> list[EventCard]:
    """Every event the query matches, newest first, read a timeline page at a time."""
    events: list[EventCard] = []
    while True:
        page = await memory.timeline.events(query, offset=len(events), limit=FILTER_PAGE)
        events += [entry.card for entry in page.entries]
        if not page.has_more:
            return events


def event_json(event: EventCard) -> dict[str, Any]:
    return event.model_dump(mode="json")
