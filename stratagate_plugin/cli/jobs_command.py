"""``stratagate jobs``: the derivation jobs and why they failed; ``jobs retry`` queues them again.

A job whose attempts are used up stays failed until someone retries it: this is where
they are seen and retried.
"""

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.records import Job
from .common import add_db_option, open_memory


def register(commands: Any) -> None:
    jobs = commands.add_parser("jobs", help="list derivation jobs; 'jobs retry' re-queues failed")
    add_db_option(jobs)
    jobs.add_argument("--failed", action="store_true", help="only failed jobs")
    jobs.add_argument("--json", action="store_true", help="machine-readable output")
    jobs.set_defaults(handler=list_jobs)
    retry = jobs.add_subparsers(dest="action").add_parser(
        "retry", help="queue failed jobs again, attempts counted from zero"
    )
    # SUPPRESS: without --db here, the one given before 'retry' is kept, not reset to None
    retry.add_argument("--db", type=Path, default=argparse.SUPPRESS, help="database file")
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("job_id", nargs="?", help="the failed job to retry")
    which.add_argument("--all", action="store_true", help="every failed job")
    retry.set_defaults(handler=retry_jobs)


async def list_jobs(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        found = await memory.list_jobs(status="failed" if args.failed else None)
    if args.json:
        print(json.dumps([job.model_dump(mode="json") for job in found], indent=2))
        return 0
    if not found:
        print("(no failed jobs)" if args.failed else "(no jobs yet)")
        return 0
    print(
        f"{'job':<32} {'kind':<16} {'block':<32} {'status':<9} tries {'next retry UTC':<19} error"
    )
    for job in found:
        print(job_line(job))
    return 0


def job_line(job: Job) -> str:
    error = job.last_error.splitlines()[0][:80] if job.last_error else ""
    return (
        f"{job.id:<32} {job.kind:<16} {job.target_id:<32} {job.status:<9} {job.attempts:>5} "
        f"{next_retry(job):<19} {error}"
    ).rstrip()


def next_retry(job: Job) -> str:
    if job.next_retry_at is not None:
        return f"{job.next_retry_at:%Y-%m-%d %H:%M:%S}"
    return "never" if job.status == "failed" else "—"


async def retry_jobs(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        if args.all:
            count = await memory.retry_failed_jobs()
            print(
                f"{jobs_phrase(count)} queued again; run 'stratagate process' to run them"
                if count
                else "(no failed jobs)"
            )
        else:
            job = await memory.retry_job(args.job_id)
            print(f"{job.id} queued again; run 'stratagate process' to run it")
    return 0


def failed_notice(failed: list[Job]) -> list[str]:
    """Failed jobs left after the run, this run's or earlier ones': nothing retries a job
    whose attempts are used up, so say how to see why and how to queue it again."""
    dead = [job for job in failed if job.next_retry_at is None]
    retry_times = sorted(job.next_retry_at for job in failed if job.next_retry_at)
    lines = []
    if dead:
        lines.append(
            f"{jobs_phrase(len(dead))} failed and will not be retried: run 'stratagate jobs "
            "--failed' to see why, 'stratagate jobs retry --all' to retry"
        )
    if retry_times:
        lines.append(
            f"{jobs_phrase(len(retry_times))} failed and can be retried from "
            f"{retry_times[0]:%Y-%m-%d %H:%M:%S} UTC: run 'stratagate process' again"
        )
    return lines


def jobs_phrase(count: int) -> str:
    return f"{count} job" if count == 1 else f"{count} jobs"
