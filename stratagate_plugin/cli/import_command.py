"""``stratagate import``, ``imports`` and ``export``: external memory in and out (spec §11).

``import FILE`` previews: it parses the file, analyses every candidate against the space's
memory (a progress line on stderr) and prints each proposed action with its confidence and
reason, then how many items a commit would write and ignore; nothing is written to
memory. ``--commit`` says the same count for its choices, then writes the batch, either of
a new preview of FILE or of an earlier job (``--job``), taking ``--choices FILE`` (JSON
``{index: action}``, or ``{"job": id, "choices": {…}}``) for the items that need the
user's word. An earlier job of the same text (and format) is used again instead of a new
preview: analysed and uncommitted, or abandoned by a killed run, which is then resumed.
FILE may be ``-`` (stdin); either is read up to 4 MB. A ChatGPT or Claude
``conversations.json`` (known by its first bytes) is a chat history, not memories: it is
recorded as ``ingest`` records it, up to 64 MB, and the command says so; it has no
preview. ``--undo BATCH`` takes a batch
back. ``--json`` prints the preview (the job, its items, the commit plan), the commit's
batch or the undo as one JSON object on stdout. ``export`` writes the space as v2 JSON
that ``import`` reads back unchanged.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.importer.chat_file import SniffedFile, read_sniffed
from ..core.importer.external_format import MAX_BULK_CANDIDATES, MAX_BYTES
from ..core.importer.input_file import STDIN
from ..core.importer.jobs import (
    ACTIONS,
    ANALYSING,
    COMMITTABLE,
    IMPORT_FORMATS,
    CommitPlan,
    ImportBatch,
    ImportJob,
)
from ..core.memory import StrataGate
from .common import add_db_option, add_space_option, open_memory, resolve_space
from .ingest_command import chat_summary, ingest_chat_export
from .progress import Progress


def register(commands: Any) -> None:
    _register_import(commands)
    listing = commands.add_parser("imports", help="external-memory import jobs and batches")
    add_db_option(listing)
    add_space_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=list_imports)
    export = commands.add_parser("export", help="write a memory space as v2 JSON")
    add_db_option(export)
    add_space_option(export)
    export.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    export.add_argument(
        "--with-profile", action="store_true", help="include the profile's set fields"
    )
    export.set_defaults(handler=export_space)


def _register_import(commands: Any) -> None:
    parser = commands.add_parser(
        "import", help="preview, commit or undo an import of another AI's memory"
    )
    add_db_option(parser)
    parser.add_argument(
        "file", nargs="?", help="the export (v2 JSON, a plain list, mem0, …; - reads stdin)"
    )
    parser.add_argument("--format", choices=IMPORT_FORMATS, default="auto", help="file format")
    add_space_option(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--preview", action="store_true", help="analyse only (the default)")
    mode.add_argument("--commit", action="store_true", help="write the batch")
    mode.add_argument("--undo", metavar="BATCH", help="take back a committed batch")
    parser.add_argument("--job", help="with --commit: an earlier preview's job id")
    parser.add_argument("--choices", type=Path, help="with --commit: a JSON file {index: action}")
    parser.add_argument(
        "--json", action="store_true", help="print the preview, plan and batch (or undo) as JSON"
    )
    parser.set_defaults(handler=run_import)


async def run_import(args: argparse.Namespace) -> int:
    _check_arguments(args)
    choices = _read_choices(args.choices) if args.choices else None
    read = read_sniffed(args.file, MAX_BYTES, sys.stdin.buffer) if args.file else None
    if read is not None and read.export is not None:
        return await _chat_history(args, read)
    async with await open_memory(args) as memory:
        space = await resolve_space(args, memory, create=True)
        if args.undo:
            return await _undo(memory, args.undo, space if args.space else None, args.json)
        if read is None:
            job = await _resumed(memory, await _own_job(memory, args.job, space))
        else:
            job = await _analysed(memory, space, import_text(read), args.format)
        picked = _for_job(choices, job.id) if args.commit else None
        plan = (
            await memory.imports.commit_plan(job.id, picked) if job.status in COMMITTABLE else None
        )
        if not args.commit:
            _report(job, plan, None, args.json)
            return 0
        if plan is not None and not args.json:  # said before the commit, as the wizard does
            print(_plan_line(plan, "committing:"))
        batch = await memory.imports.commit(job.id, picked)
        _report(job, plan, batch, args.json)
    return 0


def _report(
    job: ImportJob, plan: CommitPlan | None, batch: ImportBatch | None, as_json: bool
) -> None:
    """A preview (no ``batch``) or a commit's result, as text or as one JSON object: the
    job with its items, what a commit writes (``plan``), the batch written."""
    if as_json:
        body = {
            "job": job.model_dump(mode="json"),
            "plan": plan.model_dump(mode="json") if plan else None,
            "batch": batch.model_dump(mode="json") if batch else None,
        }
        print(json.dumps(body, ensure_ascii=False, indent=2))
    elif batch is None:
        _print_job(job)
        if plan is not None:
            print(_plan_line(plan, "commit now would"))
    else:
        print(_batch_line(batch))


def _check_arguments(args: argparse.Namespace) -> None:
    if args.undo and (args.file or args.job or args.choices):
        raise InvalidInput("--undo takes only a batch id")
    if not args.undo and not args.file and not args.job:
        raise InvalidInput("name the FILE to import (or --job with --commit, or --undo BATCH)")
    if args.file and args.job:
        raise InvalidInput("give either FILE or --job, not both")
    if (args.job or args.choices) and not args.commit:
        raise InvalidInput("--job and --choices go with --commit")


def import_text(read: SniffedFile) -> str:
    """The file's text: at most 4 MB, read with that cap, UTF-8 (binary and zip files are
    refused)."""
    try:
        return read.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        source = "stdin" if read.source == STDIN else read.source
        raise InvalidInput(f"{source} is not UTF-8 text (a binary or zip file?)") from None


async def _chat_history(args: argparse.Namespace, read: SniffedFile) -> int:
    """A chat export given to ``import``: recorded as ``ingest`` records it, saying so
    first (``--preview``, which would write nothing, is refused: there is no preview)."""
    assert read.export is not None
    kind = read.export.kind
    if args.preview or args.choices:
        raise InvalidInput(
            f"{read.source} is a chat history ({kind} export) and has no preview: "
            "`stratagate import FILE` or `stratagate ingest FILE` records its conversations"
        )
    print(
        f"stratagate: {read.source} is a {kind} export (a chat history, not memories): "
        "recording its conversations as turns, as `stratagate ingest FILE` does",
        file=sys.stderr,
    )
    tally = await ingest_chat_export(args, read)
    if not args.json:
        print(chat_summary(tally, read.export))
        return 0
    done = {
        "kind": kind,
        "conversations": read.export.conversations,
        "recorded": tally.fresh,
        "present": tally.replayed + tally.retimed,
        "sealed": tally.sealed,
        "space": tally.space,
    }
    print(json.dumps({"chat_history": done}, ensure_ascii=False, indent=2))
    return 0


def _read_choices(path: Path) -> dict[str, Any]:
    """``{index: action}`` or ``{"job": id, "choices": {index: action}}``, checked."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InvalidInput(f"{path}: not a JSON choices file ({error})") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: choices must be a JSON object {{index: action}}")
    job = data.get("job") if "choices" in data else None
    raw = data.get("choices", data)
    if not isinstance(raw, dict):
        raise InvalidInput(f"{path}: choices must be a JSON object {{index: action}}")
    return {"job": job, "choices": {_index(path, k): _action(path, v) for k, v in raw.items()}}


def _index(path: Path, key: str) -> int:
    if not key.strip().isdigit():
        raise InvalidInput(f"{path}: {key!r} is not an item index")
    return int(key)


def _action(path: Path, value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in ACTIONS:
        raise InvalidInput(f"{path}: {value!r} is not an action ({', '.join(ACTIONS)})")
    return value.upper()


def _for_job(choices: dict[str, Any] | None, job_id: str) -> dict[int, str] | None:
    if choices is None:
        return None
    if choices["job"] not in (None, job_id):
        raise InvalidInput(f"the choices are for import {choices['job']}, not {job_id}")
    picked: dict[int, str] = choices["choices"]
    return picked


async def _own_job(memory: StrataGate, job_id: str, space: str) -> ImportJob:
    job = await memory.imports.job(job_id)
    if job.namespace != space:
        raise InvalidInput(f"import {job_id} belongs to space {job.namespace}, not {space}")
    return job


async def _analysed(memory: StrataGate, space: str, text: str, fmt: str) -> ImportJob:
    """The job for this text: an earlier preview's when it stands analysed and uncommitted
    (a commit after a preview analyses nothing again) or was abandoned by a killed run (it
    is resumed), else a new one, analysed with a progress line."""
    job = await memory.imports.resumable(space, text, fmt)
    if job is None:
        return await _resumed(memory, await memory.imports.preview(space, text, fmt))
    how = "resuming the abandoned" if job.abandoned else "reusing the analysis of"
    print(f"stratagate: {how} import {job.id} (same file)", file=sys.stderr)
    return await _resumed(memory, job)


async def _resumed(memory: StrataGate, job: ImportJob) -> ImportJob:
    """``job`` analysed to the end (nothing to do for one past analysis)."""
    if job.status not in ANALYSING:
        return job
    with Progress("import", "items", job.total) as progress:
        progress.update(job.processed, job.total)
        return await memory.imports.advance(job.id, progress=progress.update)


def _print_job(job: ImportJob) -> None:
    recovered = ", recovered from text that was not v2 JSON" if job.recovered else ""
    dropped = f", {job.dropped} without title or summary dropped" if job.dropped else ""
    print(
        f"import {job.id} into {job.namespace}: {job.shown_status}, {job.total} items"
        f"{recovered}{dropped}"
    )
    if job.error:
        print(f"  error: {job.error}")
    for item in job.items:
        mark = "?" if item.requires_confirmation else " "
        confidence = "-" if item.confidence is None else f"{item.confidence:.2f}"
        print(
            f"{mark} {item.index:>3}  {item.action or 'pending':<9} {confidence:>4}  "
            f"{item.candidate.title}  — {item.reason}"
        )
        if item.merged_summary:
            print(f"       merged text: {item.merged_summary}")
    if job.needs_confirmation:
        print(f"{len(job.needs_confirmation)} items marked ? need your choice (default IGNORE)")
    if job.status in ("ready", "awaiting_confirmation"):
        print(f"commit: stratagate import --commit --job {job.id} [--choices FILE]")


def _plan_line(plan: CommitPlan, lead: str) -> str:
    unsure = f" ({plan.unsure_ignored} unsure items left as IGNORE)" if plan.unsure_ignored else ""
    return f"{lead} write {plan.written} and ignore {plan.ignored} of {plan.total} items{unsure}"


def _batch_line(batch: ImportBatch) -> str:
    return (
        f"committed batch {batch.id}: {batch.imported_count} events written, "
        f"{batch.ignored_count} ignored (undo: stratagate import --undo {batch.id})"
    )


async def _undo(memory: StrataGate, batch_id: str, space: str | None, as_json: bool) -> int:
    if space is not None:
        batches = {batch.id for batch in await memory.imports.batches(space)}
        if batch_id not in batches:
            raise InvalidInput(f"no import batch {batch_id} in space {space}")
    undone = await memory.imports.undo(batch_id)
    if as_json:
        print(json.dumps({"undo": undone.model_dump(mode="json")}, ensure_ascii=False, indent=2))
        return 0
    print(
        f"undid batch {batch_id}: {len(undone.removed_event_ids)} events removed, "
        f"{len(undone.restored_event_ids)} restored"
    )
    return 0


async def list_imports(args: argparse.Namespace) -> int:
    async with await open_memory(args) as memory:
        space = await resolve_space(args, memory, create=True)
        jobs = await memory.imports.jobs(space)
        batches = await memory.imports.batches(space)
    if args.json:
        rows = {
            "jobs": [job.model_dump(mode="json", exclude={"items"}) for job in jobs],
            "batches": [batch.model_dump(mode="json") for batch in batches],
        }
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    for job in jobs:
        print(f"{job.id}  {job.shown_status:<21} {job.processed}/{job.total}  {job.source_system}")
    for batch in batches:
        print(f"{batch.id}  {batch.status:<9} {batch.imported_count} events  job {batch.job_id}")
    if not jobs:
        print(f"no imports in {space}")
    return 0


async def export_space(args: argparse.Namespace) -> int:
    async with await open_memory(args) as memory:
        space = await resolve_space(args, memory)
        document = await memory.imports.export_space(space, include_profile=args.with_profile)
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    count = len(document["candidates"])
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"exported {count} events of {space} to {args.out}", file=sys.stderr)
    if count > MAX_BULK_CANDIDATES:
        print(
            f"stratagate: warning: {count} events; one import takes at most "
            f"{MAX_BULK_CANDIDATES}, "
            "so split the file to import it again",
            file=sys.stderr,
        )
    return 0
