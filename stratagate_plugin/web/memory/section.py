"""The memory plugin's web section: the memory page's views, navigation and texts (the
message catalogs in ``locales/``, one JSON file per language)."""

from collections.abc import Callable
from importlib.resources import files
from typing import Any

from ...harness.types import HostAPI, NavLink, WebSection
from . import (
    audit,
    blocks,
    conflicts,
    events,
    graph,
    imports,
    jobs,
    profile,
    purge,
    raw,
    settings_page,
    space_delete,
    status,
    topics,
)
from .imports import IMPORT_BODY_LIMIT, IMPORT_PATH
from .pages import SECTION_PATH, MemoryPages

PAGE_MODULES = (
    status,
    profile,
    blocks,
    events,
    graph,
    topics,
    conflicts,
    audit,
    jobs,
    settings_page,
    imports,
    raw,
    purge,
    space_delete,
)


def memory_section(host: HostAPI, runtime: Callable[[], Any]) -> WebSection:
    pages = MemoryPages(host, runtime)
    routes = [route for module in PAGE_MODULES for route in module.routes(pages)]
    return WebSection(
        id="stratagate-memory",
        path=SECTION_PATH,
        routes=routes,
        nav=[NavLink(SECTION_PATH + "/", {"en": "Memory", "zh": "记忆"})],
        catalogs=files(__package__ or __name__) / "locales",
        order=10,
        body_limits={IMPORT_PATH: IMPORT_BODY_LIMIT},
    )
