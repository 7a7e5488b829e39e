"""``stratagate jobs``: the derivation jobs and why they failed; ``jobs retry`` queues them again.

A job whose attempts are used up stays failed until someone retries it: this is where
they are seen and retried. Blocks the offline model derived because the model failed
(issue 31) are listed after the jobs (``--offline``: only them, ``--json`` too), and
``jobs retry --offline`` runs them on the model again.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..core.derivation.fallback import OFFLINE_FALLBACK, is_setup_error
from ..core.derivation.service import OfflineDerived, RederiveReport
from ..core.records import Block, Job
from .common import add_db_option, open_memory

RETRY_OFFLINE = "'stratagate jobs retry --offline'"


def register(commands: Any) -> None:
    jobs = commands.add_parser("jobs", help="list derivation jobs; 'jobs retry' re-queues failed")
    add_db_option(jobs)
    jobs.add_argument("--failed", action="store_true", help="only failed jobs")
    jobs.add_argument(
        "--offline", action="store_true", help="only blocks derived offline (the model failed)"
    )
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
    which.add_argument(
        "--offline", action="store_true", help="blocks derived offline: run them on the model"
    )
    retry.set_defaults(handler=retry_jobs)


async def list_jobs(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        found = await memory.derivation.list_jobs(status="failed" if args.failed else None)
        offline = await memory.derivation.offline_derived()
    if args.offline:
        return show_offline(offline, args.json)
    if args.json:
        print(json.dumps([job.model_dump(mode="json") for job in found], indent=2))
        return 0
    if not found:
        print("(no failed jobs)" if args.failed else "(no jobs yet)")
    else:
        print(
            f"{'job':<32} {'kind':<16} {'block':<32} {'status':<9} tries "
            f"{'next retry UTC':<19} error"
        )
        for job in found:
            print(job_line(job))
    for line in offline_lines(offline.blocks):
        print(line)
    return 0


def show_offline(offline: OfflineDerived, as_json: bool) -> int:
    if as_json:
        blocks = [offline_json(block) for block in offline.blocks]
        jobs = [job.model_dump(mode="json") for job in offline.jobs]
        print(json.dumps({"count": len(blocks), "blocks": blocks, "jobs": jobs}, indent=2))
    elif not offline.blocks:
        print("(no blocks derived offline)")
    else:
        for line in offline_lines(offline.blocks):
            print(line)
    return 0


def offline_json(block: Block) -> dict[str, Any]:
    return {
        "block": block.id,
        "space": block.namespace,
        "thread": block.thread_id,
        "turns": [block.start_turn, block.end_turn],
        "derived_by": block.derived_by,
        "error": block.derive_error,
        "setup_error": is_setup_error(block.derive_error),
    }


def offline_lines(blocks: list[Block]) -> list[str]:
    """The count, each block with the model's error, and how to run them on the model."""
    if not blocks:
        return []
    lines = [
        f"{blocks_phrase(len(blocks))} derived offline because the model failed "
        f"({RETRY_OFFLINE} runs them on the model again):"
    ]
    for block in blocks:
        lines.append(f"  {block.id}  {block.namespace}  {block.derive_error or ''}".rstrip())
    return lines


def job_line(job: Job) -> str:
    error = job.last_error.splitlines()[0] if job.last_error else ""
    error = (f"derived offline: {error}" if job.derived_by == OFFLINE_FALLBACK else error)[:80]
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
        if args.offline:
            report = await memory.derivation.rederive_offline()
            return rederive_summary(report, memory.model.name)
        if args.all:
            count = await memory.derivation.retry_failed_jobs()
            print(
                f"{jobs_phrase(count)} queued again; run 'stratagate process' to run them"
                if count
                else "(no failed jobs)"
            )
        else:
            job = await memory.derivation.retry_job(args.job_id)
            print(f"{job.id} queued again; run 'stratagate process' to run it")
    return 0


def rederive_summary(report: RederiveReport, model: str) -> int:
    """What ``retry --offline`` did; status 1 when a block kept its offline result."""
    if not report.asked:
        print("(no blocks derived offline)")
        return 0
    print(
        f"{len(report.replaced)} of {blocks_phrase(report.asked)} derived again by {model}: "
        f"{report.added} events written, {report.removed} offline events replaced"
    )
    for line in report.kept:
        print(f"  kept (you acted on it): {line}")
    for block_id in report.changed:
        print(f"  {block_id} changed meanwhile; left as it was")
    for line in report.failed:
        print(f"  kept offline: {line}", file=sys.stderr)
    if report.failed:
        print(
            f"{blocks_phrase(len(report.failed))} kept the offline result: the model failed again",
            file=sys.stderr,
        )
    return 1 if report.failed else 0


def fallback_notice(fallbacks: list[str]) -> list[str]:
    """Jobs the offline model answered in this run: memory filled, but say so, and say it
    loudly when the endpoint itself is misconfigured (every task will fall back)."""
    if not fallbacks:
        return []
    errors = [line.split(": ", 1)[-1] for line in fallbacks]
    setup = [error for error in errors if is_setup_error(error)]
    lines = [
        f"{jobs_phrase(len(fallbacks))} answered by the offline model because the model "
        f"failed ({errors[0]}); their blocks and events are marked offline-fallback: "
        f"'stratagate jobs --offline' lists them, {RETRY_OFFLINE} runs them on the model"
    ]
    if setup:
        lines.insert(
            0,
            f"error: the model endpoint is misconfigured ({setup[0]}); every task falls back "
            "to the offline model until it is fixed",
        )
    return lines


def blocks_phrase(count: int) -> str:
    return f"{count} block" if count == 1 else f"{count} blocks"


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
