"""The jobs page: a space's derivation jobs by state, a failed one retried, or all of them.

A retry only queues the job again (attempts from zero, ``retry_job``'s rule: a job that is
not failed is refused with a 400 saying its state; a topic batch is queued as a fresh job
under the historical budget, as the topics page does); the plugin's worker is then asked
for a pass, so the job runs now rather than at the next turn.

Blocks the offline model derived because the model failed (issue 31) are listed above the
jobs with the model's error (a misconfigured endpoint said so plainly); their button runs
them on the model again now (``rederive_offline``: the model's result replaces the
offline one, or the offline one stays) and the page says what happened.
"""

from typing import get_args
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.derivation.fallback import is_setup_error
from ...core.overview.rules import JOB_FILTERS, JobFilter
from ...core.overview.service import MAX_ATTEMPTS
from .pages import SECTION_PATH, MemoryPages, int_param

PAGE_SIZE = 50
REDERIVED = ("asked", "done", "failed", "kept")  # a re-derivation's outcome, in the URL


def job_filter(request: Request) -> JobFilter:
    state = request.query_params.get("state") or "all"
    if state not in get_args(JobFilter):
        raise HTTPException(400, f"state must be one of {', '.join(JOB_FILTERS)}, not {state!r}")
    return state  # type: ignore[return-value]


async def jobs_page(pages: MemoryPages, request: Request) -> Response:
    space, state = pages.space(request), job_filter(request)
    page = await pages.memory.overview.job_page(
        space, state, int_param(request, "offset", 0), PAGE_SIZE
    )
    offline = (await pages.memory.derivation.offline_derived(space)).blocks
    context = {
        "page": page,
        "offline": offline,
        "setup_error": any(is_setup_error(block.derive_error) for block in offline),
        "rederived": {key: int_param(request, key, -1, low=-1) for key in REDERIVED},
        "state": state,
        "filters": JOB_FILTERS,
        "max_attempts": MAX_ATTEMPTS,
        "retried": int_param(request, "retried", -1, low=-1),
        "here": jobs_url(space, state),
    }
    return await pages.render(request, "memory/jobs.html", context, tab="jobs")


async def retry_one(pages: MemoryPages, request: Request) -> Response:
    """Unknown job, or one of another space → 404; a job that is not failed → 400 naming
    its state."""
    job_id, space = request.path_params["job_id"], pages.space(request)
    found = {job.id: job.namespace for job in await pages.memory.derivation.list_jobs(space)}
    pages.check_space(request, found.get(job_id), "job", job_id)
    await pages.memory.derivation.retry_job(job_id)
    return retried(pages, request, 1)


async def retry_all(pages: MemoryPages, request: Request) -> Response:
    count = await pages.memory.overview.retry_failed_jobs_in(pages.space(request))
    return retried(pages, request, count)


async def rederive_offline(pages: MemoryPages, request: Request) -> Response:
    """The space's blocks derived offline, run on the model now; the page says the outcome."""
    report = await pages.memory.derivation.rederive_offline(pages.space(request))
    counts = dict(zip(REDERIVED, (report.asked, len(report.replaced), len(report.failed),
                                  len(report.kept)), strict=True))  # fmt: skip
    return RedirectResponse(jobs_url(pages.space(request), job_filter(request), **counts), 303)


def retried(pages: MemoryPages, request: Request, count: int) -> Response:
    pages.runtime.kick()
    url = jobs_url(pages.space(request), job_filter(request), retried=count)
    return RedirectResponse(url, status_code=303)


def jobs_url(space: str, state: str, **more: object) -> str:
    return f"{SECTION_PATH}/jobs?" + urlencode({"space": space, "state": state, **more})


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/jobs", jobs_page),
        pages.route("/jobs/retry-failed", retry_all, methods=["POST"]),
        pages.route("/jobs/rederive-offline", rederive_offline, methods=["POST"]),
        pages.route("/jobs/{job_id}/retry", retry_one, methods=["POST"]),
    ]
