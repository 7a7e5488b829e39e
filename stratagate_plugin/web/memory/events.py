"""The long-term events pages: the filtered timeline, one event's story, and its actions.

Actions are POST forms answered with a 303 to the event's page, which shows the receipt
line the CLI prints (``curation.receipts``). An event's page is always shown in the event's
own space (a link from elsewhere is redirected there), so its forms name that space, and an
action naming another space is refused before anything changes. Filters and dates are
checked by the core (``timeline_filter``): a bad one is a 400 page.
"""

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.curation.receipts import receipt_line
from ...core.curation.records import ActionKind, ActionResult
from ...core.errors import NotFound
from ...core.events.cards import EVENT_TYPES, happened_label
from ...core.timeline.filters import SOURCE_FILTERS, STATUS_FILTERS, parse_moment, timeline_filter
from ...core.timeline.trajectory import WeightPoint
from .pages import SECTION_PATH, MemoryPages, form_fields, int_param

FILTERS = ("q", "since", "until", "participant", "type", "status", "source")
FLAGS: tuple[ActionKind, ...] = ("forget", "restore", "pin", "unpin")
CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 640, 180, 28


def routes(pages: MemoryPages) -> list[Route]:
    flag_routes = [
        pages.route(f"/events/{{event_id}}/{kind}", _flag_view(kind), methods=["POST"])
        for kind in FLAGS
    ]
    return [
        pages.route("/events", timeline, methods=["GET"]),
        pages.route("/events/{event_id}", event_page, methods=["GET"]),
        pages.route("/events/{event_id}/correct", correct, methods=["POST"]),
        *flag_routes,
    ]


async def timeline(pages: MemoryPages, request: Request) -> Response:
    """``/memory/events``: 40 events a page, newest first, under the filters asked."""
    space, params = pages.space(request), request.query_params
    offset = int_param(request, "offset", 0)
    query = timeline_filter(
        space,
        text=params.get("q", ""),
        since=params.get("since", ""),
        until=params.get("until", ""),
        participant=params.get("participant", ""),
        event_type=params.get("type", ""),
        status=params.get("status", ""),
        source=params.get("source", ""),
    )
    page = await pages.memory.timeline.events(query, offset=offset)
    asked = {name: params.get(name, "") for name in FILTERS}
    context = {
        "page": page,
        "asked": asked,
        "types": EVENT_TYPES,
        "statuses": STATUS_FILTERS,
        "sources": SOURCE_FILTERS,
        "newer_url": page_url(space, asked, offset - page.limit) if offset > 0 else None,
        "older_url": page_url(space, asked, offset + page.limit) if page.has_more else None,
        "page_number": offset // page.limit + 1,
    }
    return await pages.render(request, "memory/events.html", context, tab="events")


def page_url(space: str, asked: dict[str, str], offset: int) -> str:
    kept = {name: value for name, value in asked.items() if value}
    query = urlencode({"space": space, **kept, "offset": max(0, offset)})
    return f"{SECTION_PATH}/events?{query}"


async def event_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/events/{id}``: sources, times, links both ways, adoptions, weight chart."""
    detail = await pages.memory.timeline.event(request.path_params["event_id"])
    card = detail.details.card
    if pages.space(request) != card.namespace:
        query = urlencode({**request.query_params, "space": card.namespace})
        return RedirectResponse(f"{request.url.path}?{query}", status_code=303)
    context = {
        "detail": detail,
        "card": card,
        "happened": happened_label(card.temporal),
        "chart": weight_chart(detail.trajectory),
        "receipt": await _receipt(pages, request.query_params.get("receipt", ""), detail),
        "versions": detail.versions if len(detail.versions) > 1 else [],
    }
    return await pages.render(request, "memory/event.html", context, tab="events")


async def _receipt(pages: MemoryPages, action_id: str, detail: Any) -> str | None:
    """The receipt line of ``?receipt=`` (an unknown id shows nothing)."""
    if not action_id.startswith("act_"):
        return None
    try:
        action = await pages.memory.curation.receipt(action_id)
    except NotFound:
        return None
    return receipt_line(ActionResult(action=action, card=detail.details.card))


def _flag_view(kind: ActionKind) -> Any:
    async def act(pages: MemoryPages, request: Request) -> Response:
        event_id = await event_of_space(pages, request, request.path_params["event_id"])
        result = await pages.memory.curation.act(kind, event_id)
        receipt = result.action.id if isinstance(result, ActionResult) else ""  # nothing done
        return to_event(result.card.id, result.card.namespace, receipt)

    act.__name__ = f"event_{kind}"
    return act


async def correct(pages: MemoryPages, request: Request) -> Response:
    """A new event with the person's wording supersedes this one; shown with its chain."""
    event_id = await event_of_space(pages, request, request.path_params["event_id"])
    fields = await form_fields(request)
    result = await pages.memory.curation.correct_event(
        event_id,
        title=fields.get("title", ""),
        summary=fields.get("summary", ""),
        happened=parse_moment("happened", fields.get("happened", "")),
    )
    return to_event(result.card.id, result.card.namespace, result.action.id)


async def event_of_space(pages: MemoryPages, request: Request, event_id: str) -> str:
    """``event_id`` if it is an event of the space the request names; else a 404."""
    card = await pages.memory.events.get(event_id)  # an unknown id: NotFound, 404
    pages.check_space(request, card.namespace, "event", event_id)
    return event_id


def to_event(event_id: str, space: str, receipt: str) -> Response:
    query = urlencode({"space": space, "receipt": receipt})
    return RedirectResponse(f"{SECTION_PATH}/events/{event_id}?{query}", status_code=303)


def weight_chart(points: list[WeightPoint]) -> dict[str, Any]:
    """SVG coordinates of the weight line (weight 1 at the top) and of the adoption dots."""
    first, last = points[0].turn, points[-1].turn
    span = max(1, last - first)
    inner_w, inner_h = CHART_WIDTH - 2 * CHART_PAD, CHART_HEIGHT - 2 * CHART_PAD

    def at(point: WeightPoint) -> tuple[float, float]:
        x = CHART_PAD + (point.turn - first) / span * inner_w
        return round(x, 1), round(CHART_PAD + (1 - point.weight) * inner_h, 1)

    line = [at(point) for point in points]
    if len(line) == 1:  # formed this turn: a flat line across the chart
        line.append((CHART_WIDTH - CHART_PAD, line[0][1]))
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "pad": CHART_PAD,
        "line": " ".join(f"{x},{y}" for x, y in line),
        "dots": [at(point) for point in points if point.adopted],
        "first": first,
        "last": last,
    }
