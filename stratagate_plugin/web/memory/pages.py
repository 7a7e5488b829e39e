"""``MemoryPages``: what every memory view needs, bound to one running plugin.

Routes are built from view functions ``async def view(pages, request)``; ``pages`` gives
the engine, the plugin's settings and the memory space the page shows (the ``space``
query parameter, else the space chat uses in the host's directory).

An action names its space the same way (each form posts to ``…?space=``) and acts only on
an item of that space: an id of another space is refused as unknown, as the MCP gate
refuses it, so a page opened on one space can never change another's memory.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.errors import NotFound
from ...core.memory import StrataGate
from ...core.profile.spaces import display_name
from ...harness.types import HostAPI
from ..shell.templating import render

View = Callable[["MemoryPages", Request], Awaitable[Response]]
SECTION_PATH = "/memory"


class MemoryPages:
    """The engine and settings of a started memory plugin, as views use them.

    ``runtime`` is a ``memory_plugin.runtime.MemoryRuntime`` (typed loosely: the runtime
    module imports the engine's wiring, not needed here), read on every request."""

    def __init__(self, host: HostAPI, runtime: Callable[[], Any]) -> None:
        self.host = host
        self._runtime = runtime

    @property
    def runtime(self) -> Any:
        return self._runtime()

    @property
    def memory(self) -> StrataGate:
        memory: StrataGate = self.runtime.memory
        return memory

    @property
    def settings(self) -> dict[str, Any]:
        self.runtime.follow_saved_settings()  # another web process of serve may have saved
        settings: dict[str, Any] = self.runtime.settings
        return settings

    def default_space(self) -> str:
        space: str = self.runtime.default_space()
        return space

    def space(self, request: Request) -> str:
        """The space the request asks for (``?space=``), else the default one."""
        asked = request.query_params.get("space", "").strip()
        return asked or self.default_space()

    def check_space(self, request: Request, namespace: str | None, kind: str, item_id: str) -> None:
        """Refuse (404) an action on ``item_id`` unless it is in the space the action names
        (``namespace`` None: it was not found there)."""
        space = self.space(request)
        if namespace != space:
            raise NotFound(f"no {kind} {item_id!r} in memory space {display_name(space)!r}")

    async def render(
        self,
        request: Request,
        template: str,
        context: dict[str, Any],
        *,
        tab: str,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """A memory page: the shell's layout with the memory tabs (``tab`` current) and the
        space selector (every space with memory, by display name)."""
        space = self.space(request)
        names = [(name, display_name(name)) for name in await self.memory.spaces.names()]
        if space not in {space for space, _ in names}:
            if space != self.default_space():  # a typo must not look like an empty space
                raise NotFound(f"no memory space called {space!r} (`stratagate spaces` lists them)")
            names.insert(0, (space, display_name(space)))
        values = {"tab": tab, "space": space, "spaces": names, "base": SECTION_PATH, **context}
        return render(request, template, values, status_code=status_code, headers=headers)

    def route(self, path: str, view: View, methods: list[str] | None = None) -> Route:
        async def endpoint(request: Request) -> Response:
            return await view(self, request)

        endpoint.__name__ = view.__name__
        return Route(path, endpoint, methods=methods)


def int_param(request: Request, name: str, default: int, low: int = 0, high: int = 10**9) -> int:
    """An integer query parameter in ``[low, high]``; anything else is a 400 page."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise HTTPException(400, f"{name} must be between {low} and {high}")
    return value


async def form_fields(request: Request) -> dict[str, str]:
    """The posted form's text fields (files refused: no view here takes one)."""
    form = await request.form()
    fields: dict[str, str] = {}
    for key, value in form.multi_items():
        if not isinstance(value, str):
            raise HTTPException(400, f"{key}: a file is not accepted here")
        fields[key] = value
    return fields
