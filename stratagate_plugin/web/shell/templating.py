"""Rendering: one Jinja environment (autoescaped everywhere), the navigation and the
translations of every section, and the helpers views answer with."""

import json
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ...core.clock import iso, parse_iso, to_utc
from ...core.text.secrets import redact_value
from ...harness.types import HostAPI, NavLink
from .assets import templates_dir
from .handoff import Handoff
from .i18n import LANG_COOKIE, Catalog, request_language, translate_note


@dataclass
class WebState:
    """What every view reaches through ``request.app.state.web``."""

    host: HostAPI
    catalog: Catalog = field(default_factory=Catalog)
    nav: list[NavLink] = field(default_factory=list)
    template_dirs: list[Path] = field(default_factory=lambda: [templates_dir()])
    fragments: "OrderedDict[tuple[str, str, str], Markup]" = field(default_factory=OrderedDict)
    handoff: Handoff = field(default_factory=Handoff)  # one-time tokens (a purge's plan)
    _env: jinja2.Environment | None = None

    @property
    def env(self) -> jinja2.Environment:
        if self._env is None:
            loader = jinja2.FileSystemLoader([str(path) for path in self.template_dirs])
            self._env = jinja2.Environment(  # the files do not change under a running app:
                loader=loader,  # no reload check (a stat per include, per row of a list)
                autoescape=True,
                undefined=jinja2.StrictUndefined,
                auto_reload=False,
            )
            self._env.filters["tojson_pretty"] = _pretty_json
            self._env.filters["when"] = when
            self._env.filters["when_text"] = when_text
            self._env.filters["note_title"] = note_title
            self._env.filters["times_in"] = times_in
        return self._env


def web_state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """The template in the page's language, with the navigation and ``t`` for texts; an
    htmx request gets the same template (templates pick their fragment by ``partial``)."""
    state = web_state(request)
    lang = request_language(request)
    html = state.env.get_template(template).render(_values(request, state, lang, context))
    response = HTMLResponse(html, status_code=status_code, headers=headers)
    if request.query_params.get("lang") == lang:
        response.set_cookie(LANG_COOKIE, lang, max_age=365 * 86400, samesite="lax")
    return response


def _values(
    request: Request, state: WebState, lang: str, context: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "request": request,
        "lang": lang,
        "t": state.catalog.translator(lang),
        "nav": [(link.href, link.labels.get(lang) or link.labels["en"]) for link in state.nav],
        "partial": request.headers.get("hx-request") == "true",
        **(context or {}),
    }


FRAGMENTS_KEPT = 1024  # ~2 KB each: a few pages of cards in every language


def fragment(request: Request, template: str, context: dict[str, Any], key: str) -> Markup:
    """``template`` rendered as a piece of a page, once per ``key`` and language (the
    newest ``FRAGMENTS_KEPT`` kept): ``key`` must fingerprint everything the template reads
    from ``context``, so a list renders again only the rows that changed (a page of 40
    block cards is ~40 Jinja calls to ``t`` and ~50 escapes a card)."""
    state = web_state(request)
    lang = request_language(request)
    name = (template, lang, key)
    found = state.fragments.get(name)
    if found is not None:
        state.fragments.move_to_end(name)
        return found
    found = Markup(state.env.get_template(template).render(_values(request, state, lang, context)))
    state.fragments[name] = found
    if len(state.fragments) > FRAGMENTS_KEPT:
        state.fragments.popitem(last=False)
    return found


def json_response(value: Any, status_code: int = 200) -> JSONResponse:
    """JSON with every secret-looking string redacted (the guard redacts again)."""
    return JSONResponse(redact_value(value), status_code=status_code)


def not_modified_or(request: Request, etag: str, build: Any) -> Response:
    """304 when the client already has this ``etag``, else ``build()`` with the tag set."""
    quoted = f'"{etag}"'
    if quoted in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"ETag": quoted})
    response: Response = build()
    response.headers["ETag"] = quoted
    response.headers["Cache-Control"] = "no-cache"
    return response


def _pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@jinja2.pass_context
def when(context: Any, moment: datetime | str | None) -> Markup | str:
    """``2 Dec 2026, 01:20`` (``2026年12月2日 01:20``) in a ``<time>`` whose hover shows
    the exact ISO value: ISO strings with microseconds are unreadable at a glance."""
    moment = _as_time(moment)
    if not isinstance(moment, datetime):
        return moment  # nothing, or not a time (a relative phrase): shown as written
    stamp = escape(iso(moment))
    shown = escape(reader_time(moment, str(context.get("lang", "en"))))
    # what Markup.format would build, at a third of its cost (a page shows one a row)
    return Markup(f'<time datetime="{stamp}" title="{stamp}">{shown}</time>')


@jinja2.pass_context
def when_text(context: Any, moment: datetime | str | None) -> str:
    """The same words without the tag, where no markup may go (an ``<option>``)."""
    moment = _as_time(moment)
    if not isinstance(moment, datetime):
        return moment
    return reader_time(moment, str(context.get("lang", "en")))


ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)")


@jinja2.pass_context
def times_in(context: Any, text: str) -> str:
    """A plugin's note with every ISO time in it in the reader's terms."""
    lang = str(context.get("lang", "en"))
    return ISO_TIME.sub(lambda found: reader_time(parse_iso(found.group()), lang), text)


def reader_time(moment: datetime, lang: str) -> str:
    moment = to_utc(moment)
    clock = moment.strftime("%H:%M")
    if lang == "zh":
        return f"{moment.year}年{moment.month}月{moment.day}日 {clock}"
    return f"{moment.day} {MONTHS[moment.month - 1]} {moment.year}, {clock}"


def _as_time(moment: datetime | str | None) -> datetime | str:
    if moment is None or isinstance(moment, datetime):
        return moment or ""
    try:
        return parse_iso(moment)
    except ValueError:
        return moment


@jinja2.pass_context
def note_title(context: Any, title: str) -> str:
    return translate_note(title, str(context.get("lang", "en")))
