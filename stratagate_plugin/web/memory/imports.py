"""The import wizard (spec §11.4, here the page acts) and the export download.

Start: the export prompt to copy, a form to paste text or upload a file, a format. Preview
persists a job (``import_preview``) and asks the plugin's worker to analyse it; the job page
only polls a fragment of itself (htmx, every second while reading or analysing) and shows
each candidate beside the local events it was compared with, the proposed action, its
reason and confidence (and a merge's text). Items that need confirmation come first and get
a choice (Ignore unless changed); the page says how many items a commit would ignore, and
its confirmation asks with that count; commit writes the batch in one transaction; the
batches page undoes one. Bad input is the start page again with one line saying why (400,
or 413 when too large) and nothing written; a commit or undo the job's state forbids is a
409 page with the engine's own words.

An uploaded ChatGPT or Claude ``conversations.json`` is known by its first bytes and goes
to the chat-history import whichever kind was picked, with ingest's 64 MB cap: the upload
sits in Starlette's temporary file and is read from there one conversation at a time, on a
worker thread. Memories stay capped at 4 MB.
"""

import asyncio
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.errors import InvalidInput
from ...core.importer.chat_file import read_stream
from ...core.importer.external_format import MAX_BYTES, MAX_CANDIDATES, ExternalCandidate
from ...core.importer.formats.chat_exports import SNIFF_BYTES, ChatExport, sniff_kind
from ...core.importer.formats.prompts import EXPORT_PROMPT_EN, EXPORT_PROMPT_ZH
from ...core.importer.jobs import (
    ACTIONS,
    ANALYSING,
    COMMITTABLE,
    IMPORT_FORMATS,
    TARGETED,
    ImportItem,
    ImportJob,
)
from ...core.importer.json_document import MAX_FILE_BYTES
from ...core.importer.service import SOURCE_NAME_LIMIT
from ..shell.i18n import request_language
from ..shell.templating import json_response, render
from .chat_history import KIND as CHAT_HISTORY
from .chat_history import export_of_text, record_chat_history
from .pages import SECTION_PATH, MemoryPages, form_fields, int_param

MEGABYTE = 1024 * 1024
IMPORT_PATH = "/import"  # the upload route, allowed a chat export's 64 MB and the wrapping
IMPORT_BODY_LIMIT = MAX_FILE_BYTES + 256 * 1024
POLL_SECONDS = 1
AUTO_PAGE = 50  # items needing no choice shown at a time (every unsure one is always shown)
CHOICE_FIELD = "choice-"
_BINARY_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"%PDF", b"\x89PNG")
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class Refused(Exception):
    """An upload or paste the wizard will not hand to the engine (status, one line)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/import", start_page, methods=["GET"]),
        pages.route("/import", preview, methods=["POST"]),
        pages.route("/import/batches", batches_page, methods=["GET"]),
        pages.route("/import/batches/{batch_id}/undo", undo, methods=["POST"]),
        pages.route("/import/{job_id}", job_page, methods=["GET"]),
        pages.route("/import/{job_id}/progress", job_progress, methods=["GET"]),
        pages.route("/import/{job_id}/commit", commit, methods=["POST"]),
        pages.route("/export.json", export, methods=["GET"]),
    ]


# -- start: the prompt, paste or upload, preview ---------------------------------------------


async def start_page(pages: MemoryPages, request: Request) -> Response:
    return await _start(pages, request)


async def _start(
    pages: MemoryPages,
    request: Request,
    *,
    problem: str | None = None,
    text: str = "",
    fmt: str = "auto",
    kind: str = "memories",
    done: str | None = None,
    source: str = "",
    status_code: int = 200,
) -> Response:
    """The start page; after a refused preview, with the reason and the text as it was."""
    space = pages.space(request)
    zh = request_language(request) == "zh"
    context = {
        "prompt": EXPORT_PROMPT_ZH if zh else EXPORT_PROMPT_EN,
        "formats": IMPORT_FORMATS,
        "fmt": fmt if fmt in IMPORT_FORMATS else "auto",
        "text": text,
        "source": source,
        "source_limit": SOURCE_NAME_LIMIT,
        "problem": problem,
        "kind": kind,
        "done": done,
        "max_mb": MAX_BYTES // MEGABYTE,
        "max_candidates": MAX_CANDIDATES,
        "can_export": space in await pages.memory.spaces.names(),
    }
    return await pages.render(
        request, "memory/import.html", context, tab="import", status_code=status_code
    )


async def preview(pages: MemoryPages, request: Request) -> Response:
    """Persist the job and wake the worker → 303 to the job page; a chat history is recorded
    as turns (the start page says what was done); refused → the start page."""
    posted = Posted()
    try:
        posted = await read_import(request)
        space = pages.space(request)
        if posted.export is not None or posted.kind == CHAT_HISTORY:
            export = posted.export or export_of_text(posted.text)
            done = posted.routed + await record_chat_history(pages.memory, space, export)
            pages.runtime.kick()  # the sealed blocks are derived by the worker
            return await _start(pages, request, done=done, kind=CHAT_HISTORY)
        job = await pages.memory.imports.preview(space, posted.text, posted.fmt, posted.source)
    except Refused as refused:
        return await _start(pages, request, problem=str(refused), status_code=refused.status)
    except InvalidInput as error:
        return await _start(
            pages,
            request,
            problem=str(error),
            text=posted.text,
            fmt=posted.fmt,
            kind=posted.kind,
            source=posted.source,
            status_code=400,
        )
    pages.runtime.kick()
    return RedirectResponse(job_url(job), status_code=303)


@dataclass(frozen=True)
class Posted:
    """The start form as posted: the text (pasted or the file's), its format, its source,
    and whether it is memories or a chat history; an uploaded chat export, read."""

    text: str = ""
    fmt: str = "auto"
    source: str = ""
    kind: str = "memories"
    export: ChatExport | None = None
    routed: str = ""
    """Said before the receipt when memories were picked for a chat export."""


async def read_import(request: Request) -> Posted:
    """The pasted text or the uploaded file's text, the format asked for, the source name
    the user gave (a pasted list names none itself), and memories or a chat history; an
    uploaded chat export is read instead of its text."""
    try:
        async with request.form(max_files=1, max_fields=8, max_part_size=MAX_BYTES + 1) as form:
            fmt = _text_field(form.get("format")) or "auto"
            if fmt not in IMPORT_FORMATS:
                wanted = ", ".join(IMPORT_FORMATS)
                raise Refused(400, f"format must be one of {wanted}, not {fmt!r}")
            kind = _text_field(form.get("kind")) or "memories"
            if kind not in ("memories", CHAT_HISTORY):
                raise Refused(400, f"kind must be memories or {CHAT_HISTORY}, not {kind!r}")
            source = _text_field(form.get("source"))
            pasted = _text_field(form.get("text"))
            upload = form.get("file")
            upload = upload if isinstance(upload, UploadFile) else None
            export = await _chat_export(upload) if upload else None
            if upload and export:
                _check_not_both(pasted, True)
                return Posted("", fmt, source, kind, export, _routed(upload, export, kind))
            uploaded = await _file_text(upload) if upload else ""
    except HTTPException as error:  # a pasted part over the cap
        if "exceeded maximum size" in str(error.detail):
            raise Refused(413, _too_large()) from None
        raise
    _check_not_both(pasted, bool(uploaded))
    text = uploaded or pasted
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise Refused(413, _too_large())
    if not text.strip():
        raise Refused(400, "paste the other AI's answer or choose a file first")
    return Posted(text, fmt, source, kind)


def _check_not_both(pasted: str, uploaded: bool) -> None:
    if pasted.strip() and uploaded:
        raise Refused(400, "paste the text or choose a file, not both")


async def _chat_export(upload: UploadFile) -> ChatExport | None:
    """The upload read as a chat export when its first bytes are one (a worker thread
    reads it from the temporary file, a conversation at a time), else None."""
    head = await upload.read(SNIFF_BYTES)
    await upload.seek(0)
    if sniff_kind(head) is None:
        return None
    name = upload.filename or "the file"
    read = await asyncio.to_thread(read_stream, upload.file, name, MAX_BYTES)
    return read.export


def _routed(upload: UploadFile, export: ChatExport, kind: str) -> str:
    if kind == CHAT_HISTORY:
        return ""
    name = upload.filename or "the file"
    return f"{name} is a {export.kind} export, a chat history rather than memories: "


def _text_field(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(400, "only the file field takes a file")
    return value


async def _file_text(upload: UploadFile) -> str:
    """The file as text: at most 4 MB, not binary, UTF-8 (a byte-order mark is dropped)."""
    data = await upload.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Refused(413, _too_large())
    if data.startswith(_BINARY_MAGIC) or b"\x00" in data:
        raise Refused(400, "the file looks binary (zip, gzip, PDF, image or other bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Refused(400, "the file is not UTF-8 text; save it as UTF-8 and try again") from None


def _too_large() -> str:
    return f"the import is larger than {MAX_BYTES // MEGABYTE} MB"


# -- the job: progress, items, commit --------------------------------------------------------


async def job_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/import/{id}``; a job still being read or analysed wakes the worker (a job
    left over from before a restart resumes where it stood)."""
    job = await pages.memory.imports.job(request.path_params["job_id"])  # NotFound → 404
    if job.status in ANALYSING:
        pages.runtime.kick()
    context = await job_context(pages, job, int_param(request, "auto", 0))
    return await pages.render(request, "memory/import_job.html", context, tab="import")


async def job_progress(pages: MemoryPages, request: Request) -> Response:
    """The job's body alone, for the poll; it stops polling once the analysis is done."""
    job = await pages.memory.imports.job(request.path_params["job_id"])
    shown = await job_context(pages, job, int_param(request, "auto", 0))
    context = {**shown, "space": job.namespace, "base": SECTION_PATH}
    return render(request, "memory/_import_job.html", context)


async def job_context(pages: MemoryPages, job: ImportJob, auto: int = 0) -> dict[str, Any]:
    """Every item that asks for a choice first, then one page (``auto``: its offset) of the
    others, so a 2,000-item import is not re-rendered whole on every poll; once it can be
    committed, how many items a commit would ignore (as the page stands, and taking every
    proposal)."""
    batch = await pages.memory.imports.batch(job.batch_id) if job.batch_id else None
    asked = [item for item in job.items if asks(item)]
    others = [item for item in job.items if not asks(item)]
    shown = asked + others[auto : auto + AUTO_PAGE]
    committable = job.status in COMMITTABLE
    plan, taking = await pages.memory.imports.commit_plans(job) if committable else (None, None)
    return {
        "job": job,
        "cards": [item_card(item) for item in shown],
        "batch": batch,
        "analysing": job.status in ANALYSING,
        "committable": committable,
        "plan": plan,
        "taking": taking if asked else None,
        "asked": len(asked),
        "applied": sum(1 for item in others if item.analysed),
        "others": {"total": len(others), "start": auto, "end": min(auto + AUTO_PAGE, len(others))},
        "auto_page": AUTO_PAGE,
        "poll_seconds": POLL_SECONDS,
        "progress_url": f"{SECTION_PATH}/import/{job.id}/progress?auto={auto}",
    }


def item_card(item: ImportItem) -> dict[str, Any]:
    """What one item's card shows: the actions offered (targeted ones only when there is a
    memory to link), the event they would link, and the matched events to open."""
    linked = item.target_ids or [match.id for match in item.matches[:1]]
    titles = {match.id: match.title for match in item.matches}
    return {
        "item": item,
        "candidate": item.candidate,
        "when": when(item.candidate),
        "ask": asks(item),
        "actions": [a for a in ACTIONS if a not in TARGETED or linked],
        "linked": titles.get(linked[0], linked[0]) if linked else None,
        "other_targets": [target for target in item.target_ids if target not in titles],
    }


def asks(item: ImportItem) -> bool:
    """The item is analysed and waits for the user's choice."""
    return item.analysed and item.requires_confirmation


def when(candidate: ExternalCandidate) -> str:
    """The candidate's time as the exporter gave it: happened (start–end), else mentioned."""
    temporal = candidate.temporal
    if temporal.happened_start:
        end = temporal.happened_end
        return f"{temporal.happened_start} – {end}" if end else temporal.happened_start
    return temporal.mentioned_at or temporal.original_text or ""


async def commit(pages: MemoryPages, request: Request) -> Response:
    """Commit with the posted choices (``choice-<index>`` = action; ``accept=proposed`` takes
    every unsure item's proposal) → 303 to the job page. A job not ready for it (still
    analysing, already committed) is a 409."""
    job_id = request.path_params["job_id"]
    job = await pages.memory.imports.job(job_id)  # NotFound → 404
    pages.check_space(request, job.namespace, "import job", job_id)
    fields = await form_fields(request)
    choices = posted_choices(fields)
    take = fields.get("accept") == "proposed"  # "take every proposal": one click for many
    try:
        batch = await pages.memory.imports.commit(job_id, choices, take_proposals=take)
    except InvalidInput as error:
        job = await pages.memory.imports.job(job_id)  # NotFound → 404
        if job.status not in COMMITTABLE:
            raise HTTPException(409, str(error)) from None
        raise
    pages.runtime.kick()  # the batch queued graph projection
    job = await pages.memory.imports.job(batch.job_id)
    return RedirectResponse(job_url(job), status_code=303)


def posted_choices(fields: dict[str, str]) -> dict[int, str]:
    choices: dict[int, str] = {}
    for name, action in fields.items():
        if not name.startswith(CHOICE_FIELD):
            continue
        index = name.removeprefix(CHOICE_FIELD)
        if not index.isdigit():
            raise HTTPException(400, f"{name}: the item number must be a whole number")
        choices[int(index)] = action
    return choices


def job_url(job: ImportJob) -> str:
    return f"{SECTION_PATH}/import/{job.id}?" + urlencode({"space": job.namespace})


# -- batches and jobs; undo ------------------------------------------------------------------


async def batches_page(pages: MemoryPages, request: Request) -> Response:
    space = pages.space(request)
    undone = request.query_params.get("undone", "")
    context = {
        "batches": await pages.memory.imports.batches(space),
        "jobs": await pages.memory.imports.jobs(space),
        "undone": undone,
        "removed": int_param(request, "removed", 0),
        "restored": int_param(request, "restored", 0),
    }
    return await pages.render(request, "memory/import_batches.html", context, tab="import")


async def undo(pages: MemoryPages, request: Request) -> Response:
    """Undo one batch → 303 to the batches page; an unknown batch is a 404, one already
    undone a 409."""
    batch_id = request.path_params["batch_id"]
    batch = await pages.memory.imports.batch(batch_id)  # NotFound → 404
    pages.check_space(request, batch.namespace, "import batch", batch_id)
    try:
        done = await pages.memory.imports.undo(batch_id)
    except InvalidInput as error:
        raise HTTPException(409, str(error)) from None
    query = {
        "space": done.namespace,
        "undone": batch_id,
        "removed": len(done.removed_event_ids),
        "restored": len(done.restored_event_ids),
    }
    return RedirectResponse(f"{SECTION_PATH}/import/batches?{urlencode(query)}", status_code=303)


# -- export ----------------------------------------------------------------------------------


async def export(pages: MemoryPages, request: Request) -> Response:
    """``/memory/export.json?space=…[&profile=1]``: the space as a v2 file to download."""
    space = pages.space(request)
    profile = request.query_params.get("profile", "0")
    if profile not in ("0", "1"):
        raise HTTPException(400, f"profile must be 0 or 1, not {profile!r}")
    document = await pages.memory.imports.export_space(space, include_profile=profile == "1")
    response = json_response(document)
    response.headers["content-disposition"] = (
        f'attachment; filename="{export_name(document, space)}"'
    )
    return response


def export_name(document: dict[str, Any], space: str) -> str:
    """``stratagate-export-<space>-<date>.json``, the space's name made safe for a file."""
    day = str(document.get("exportedAt", ""))[:10]
    return f"stratagate-export-{_UNSAFE_IN_NAME.sub('-', space).strip('-')}-{day}.json"
