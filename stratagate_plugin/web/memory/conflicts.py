"""Placeholder: filled in by the conflicts page's owner."""

from starlette.routing import Route

from .pages import MemoryPages

STRINGS: dict[str, dict[str, str]] = {"en": {}, "zh": {}}


def routes(pages: MemoryPages) -> list[Route]:
    return []
