"""``stratagate process`` (run derivation jobs) and ``stratagate events`` (list event cards)."""

import argparse
import json
import sys
from typing import Any

from ..core.events.cards import EventCard, happened_label
from ..core.records import Job
from .common import add_db_option, open_memory


def register(commands: Any) -> None:
    process = commands.add_parser("process", help="run pending derivation jobs to completion")
    add_db_option(process)
    process.set_defaults(handler=process_jobs)
    events = commands.add_parser("events", help="list event cards")
    add_db_option(events)
    events.add_argument("--namespace", default=None)
    events.add_argument("--all", action="store_true", help="include forgotten/archived events")
    events.add_argument("--json", action="store_true", help="machine-readable output")
    events.set_defaults(handler=list_events)


async def process_jobs(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        total = len(await memory.list_jobs(status="pending")) or 1
        bar = ProgressBar(total)
        report = await memory.process_pending(on_job=bar.advance)
    bar.close()
    print(
        f"ran {report.ran} jobs: {report.succeeded} succeeded, {report.skipped} skipped, "
        f"{report.failed} failed; {len(report.ready_blocks)} blocks became ready"
    )
    for error in report.errors[:10]:
        print(f"  failed: {error}", file=sys.stderr)
    return 1 if report.failed else 0


class ProgressBar:
    """A one-line progress bar on stderr (jobs queue more jobs, so the total can grow)."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def advance(self, job: Job) -> None:
        self.done += 1
        self.total = max(self.total, self.done)
        if not sys.stderr.isatty() and self.done % 50:
            return
        filled = int(30 * self.done / self.total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done} {job.kind:<18}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.done:
            sys.stderr.write("\n")


async def list_events(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        events = await memory.list_events(args.namespace, include_hidden=args.all)
    if args.json:
        print(json.dumps([event_json(e) for e in events], ensure_ascii=False, indent=2))
        return 0
    if not events:
        print("(no events yet)")
    for event in events:
        when = happened_label(event.temporal) or "—"
        print(f"{event.id}  {when:<10}  {event.status:<10} {event.scope:<8} {event.title[:70]}")
    return 0


def event_json(event: EventCard) -> dict[str, Any]:
    return event.model_dump(mode="json")
