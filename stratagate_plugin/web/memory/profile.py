"""The resident profile page: the twelve fields in the original's groups, one field saved
at a time, and the change history.

Each field's form carries the revision it was rendered with; a save from an older
revision is refused (409) and the row shows the stored value beside what was typed, so
the user merges by hand instead of silently losing the other change. An htmx save swaps
that one row (and the history, out of band); a plain form post is redirected back.
"""

from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.errors import InvalidInput
from ...core.profile.fields import FIELD_NAMES, FIELDS, TOTAL_LIMIT
from ...core.profile.service import ProfileConflict, ProfileView
from .pages import MemoryPages, form_fields, int_param

HISTORY_PAGE = 50
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "identity",
        (
            "user_preferred_name",
            "assistant_preferred_name",
            "preferred_language",
            "reasoning_language",
        ),
    ),
    ("interaction", ("response_preferences", "standing_instructions")),
    ("places", ("default_location", "current_city", "home_city")),
    ("about", ("user_background", "long_term_goals")),
    ("other", ("persistent_notes",)),
)
LIMITS = {field.name: field.limit for field in FIELDS}
SHORT_FIELD = 200  # fields up to this limit get a one-line input, longer ones a text area


def field_row(profile: ProfileView, name: str, **state: Any) -> dict[str, Any]:
    """What a field's row shows: the stored value (or ``typed``, after a refused save),
    its revision, counters and the outcome of the last save (``saved``, ``error``,
    ``conflict``)."""
    stored = profile.values[name]
    shown = state.get("typed", stored)
    return {
        "name": name,
        "value": shown,
        "stored": stored,
        "revision": profile.revisions[name],
        "updated_at": profile.updated_at.get(name),
        "limit": LIMITS[name],
        "length": len(shown),
        "multiline": LIMITS[name] > SHORT_FIELD,
        "saved": state.get("saved"),
        "error": state.get("error"),
        "conflict": state.get("conflict", False),
    }


async def profile_page(pages: MemoryPages, request: Request) -> Response:
    return await render_page(pages, request)


async def render_page(
    pages: MemoryPages,
    request: Request,
    changed: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Response:
    """The whole page; ``changed`` is the row of a refused plain-form save, shown in place."""
    profile = await pages.memory.profile.get()
    offset = int_param(request, "offset", 0)
    rows = {name: field_row(profile, name) for name in FIELD_NAMES}
    if changed is not None:
        rows[changed["name"]] = changed
    groups = [(group, [rows[name] for name in names]) for group, names in GROUPS]
    context = {
        "groups": groups,
        "total": sum(len(value) for value in profile.values.values()),
        "total_limit": TOTAL_LIMIT,
        **await history_context(pages, offset),
    }
    return await pages.render(
        request, "memory/profile.html", context, tab="profile", status_code=status_code
    )


async def history_context(pages: MemoryPages, offset: int) -> dict[str, Any]:
    """One page of changes, newest first (one more row read tells whether older ones exist)."""
    found = await pages.memory.profile.history(HISTORY_PAGE + 1, offset)
    return {
        "changes": found[:HISTORY_PAGE],
        "offset": offset,
        "older": offset + HISTORY_PAGE if len(found) > HISTORY_PAGE else None,
        "newer": max(0, offset - HISTORY_PAGE) if offset else None,
        "page_size": HISTORY_PAGE,
    }


async def save_field(pages: MemoryPages, request: Request) -> Response:
    """Save one field from the revision the form was rendered with (source ``settings``)."""
    name = request.path_params["field"]
    if name not in FIELD_NAMES:
        raise HTTPException(404, f"no profile field {name!r}")
    value, revision = await _posted(request)
    memory = pages.memory
    try:
        update = await memory.profile.update(name, value, "settings", expected_revision=revision)
    except ProfileConflict:
        row = field_row(await memory.profile.get(), name, typed=value, conflict=True)
        return await _refused(pages, request, row, 409)
    except InvalidInput as error:
        row = field_row(await memory.profile.get(), name, typed=value, error=str(error))
        return await _refused(pages, request, row, 400)
    if request.headers.get("hx-request") != "true":
        space = quote(pages.space(request), safe="")
        return RedirectResponse(f"/memory/profile?space={space}#field-{name}", status_code=303)
    row = field_row(await memory.profile.get(), name, saved=update.status)
    return await _fragment(pages, request, row, 200, with_history=True)


async def _posted(request: Request) -> tuple[str, int]:
    form = await form_fields(request)
    value, revision = form.get("value"), form.get("revision", "")
    if value is None:
        raise HTTPException(400, "the form has no value")
    if not revision.isdigit():
        raise HTTPException(400, f"revision must be a whole number, not {revision!r}")
    return value, int(revision)


async def _refused(
    pages: MemoryPages, request: Request, row: dict[str, Any], status: int
) -> Response:
    if request.headers.get("hx-request") == "true":
        return await _fragment(pages, request, row, status, with_history=False)
    return await render_page(pages, request, changed=row, status_code=status)


async def _fragment(
    pages: MemoryPages, request: Request, row: dict[str, Any], status: int, *, with_history: bool
) -> Response:
    """The field's row; after a save also the history and total, swapped out of band."""
    context: dict[str, Any] = {"row": row, "oob": with_history}
    if with_history:
        profile = await pages.memory.profile.get()
        context["total"] = sum(len(value) for value in profile.values.values())
        context["total_limit"] = TOTAL_LIMIT
        context.update(await history_context(pages, 0))
    return await pages.render(
        request, "memory/profile_saved.html", context, tab="profile", status_code=status
    )


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/profile", profile_page),
        pages.route("/profile/{field}", save_field, methods=["POST"]),
    ]
