"""The settings page: block size, decay λ, agent-memory weight and the chat page's display
toggles, saved to the profile and applied to the running plugin at once; the model
endpoints, the database and the memory-space mode shown read-only.

A save is checked as the plugin checks its settings at startup (``MemorySettings``) and as
the engine checks its configuration (``MemoryConfig``), so a value either would refuse is
a 400 naming the field, with nothing saved. Both refuse ``inf`` and ``nan`` and bound every
number: an ``inf`` once saved was written as ``null``, and no command could start again.
Block size and decay are written into every space (spec §12.5). A model key is never
shown, only whether one is set.

The derivation model's profile: its endpoint, the structured-output mode found for it and
its last error (the endpoint cache), and "Test the endpoint", a POST (the shell's
cross-site check guards it like every form) that runs one small structured task and says
how long it took and whether the answer was valid.
"""

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...core.errors import validation_problems
from ...core.llm.base import ModelError
from ...core.llm.endpoint_cache import EndpointState, load_endpoint
from ...core.llm.endpoint_check import CheckResult, check_endpoint
from ...core.llm.select import endpoint_cache_path, http_config, resolve_model_settings
from ...core.text.secrets import redact_secrets
from ...memory_plugin.settings import SETTINGS_ID, MemorySettings, memory_config
from .pages import SECTION_PATH, MemoryPages, form_fields

APPLIED = ("block_turn_size", "block_decay_lambda", "agent_memory_weight")
TOGGLES = ("show_status_rows", "show_citations")
SAVED = (*APPLIED, *TOGGLES)
TRUE = ("true", "on", "1", "yes")


async def settings_page(pages: MemoryPages, request: Request) -> Response:
    saved = request.query_params.get("saved") == "1"
    return await show(pages, request, dict(pages.settings), [], saved=saved)


async def save_settings(pages: MemoryPages, request: Request) -> Response:
    fields = await form_fields(request)
    values = {name: fields[name] for name in SAVED if name in fields}
    checked, problems = checked_values(pages.settings, values)
    if problems:
        form = {**pages.settings, **values}
        return await show(pages, request, form, problems, status_code=400)
    pages.host.save_settings(SETTINGS_ID, checked)
    await pages.memory.overview.apply_settings(**{name: checked[name] for name in APPLIED})
    pages.runtime.settings.update(checked)
    query = urlencode({"space": pages.space(request), "saved": 1})
    return RedirectResponse(f"{SECTION_PATH}/settings?{query}", status_code=303)


def checked_values(
    current: Mapping[str, Any], values: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """``values`` over the running settings, checked as the plugin and the engine check
    them: the values to save (typed), or the problems, each naming its field."""
    try:
        settings = MemorySettings.model_validate({**current, **values}).model_dump()
        memory_config(settings)
    except ValidationError as error:
        return {}, validation_problems(error, show_input=True)
    return {name: settings[name] for name in SAVED}, []


async def test_endpoint(pages: MemoryPages, request: Request) -> Response:
    """Run the check task on the derivation endpoint and show the page with what it found."""
    form = dict(pages.settings)
    values = resolve_model_settings(pages.settings.get("model"), os.environ)
    if not values:
        return await show(pages, request, form, [])  # the offline model: nothing to test
    try:
        config = http_config(values)
    except ModelError as error:
        return await show(pages, request, form, [str(error)], status_code=400)
    result = await check_endpoint(config, endpoint_cache_path(os.environ))
    return await show(pages, request, form, [], check=result)


async def show(
    pages: MemoryPages,
    request: Request,
    form: dict[str, Any],
    problems: list[str],
    *,
    saved: bool = False,
    check: CheckResult | None = None,
    status_code: int = 200,
) -> Response:
    settings = pages.settings
    for name in TOGGLES:
        form[name] = str(form.get(name)).lower() in TRUE
    model = resolve_model_settings(settings.get("model"), os.environ)
    context = {
        "form": form,
        "problems": problems,
        "invalid": {problem.split(":", 1)[0] for problem in problems},
        "saved": saved,
        "derivation": endpoint(model),
        "derivation_state": endpoint_state(model),
        "check": check,
        "mode_key": mode_key,
        "chat": endpoint(chat_model(pages)),
        "database": pages.memory.overview.database_shown,
        "space_mode": settings["namespace_mode"],
    }
    return await pages.render(
        request, "memory/settings.html", context, tab="settings", status_code=status_code
    )


def chat_model(pages: MemoryPages) -> dict[str, Any] | None:
    model = pages.host.profile.model
    return None if model is None else model.model_dump()


def endpoint(model: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the page shows of a model endpoint (``None``: the offline model): its URL and
    model name, which variable holds the key and whether it is set — never the key."""
    if not model or not model.get("base_url"):
        return None
    key_env = str(model.get("api_key_env") or "")
    return {
        "base_url": redact_secrets(str(model["base_url"])),
        "model": redact_secrets(str(model.get("model") or "")),
        "key_env": key_env,
        "key_set": bool(model.get("api_key")) or bool(key_env and os.environ.get(key_env)),
    }


def endpoint_state(model: Mapping[str, Any]) -> EndpointState | None:
    """What the endpoint cache knows of the model's endpoint (its last error redacted)."""
    if not (model.get("base_url") and model.get("model")):
        return None
    path = endpoint_cache_path(os.environ)
    return load_endpoint(path, str(model["base_url"]), str(model["model"]))


def mode_key(mode: str, strict: bool) -> str:
    """The string naming a structured-output mode (``json_schema`` without strict apart)."""
    loose = ".loose" if mode == "json_schema" and not strict else ""
    return f"mem.settings.mode.{mode}{loose}"


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/settings", settings_page),
        pages.route("/settings", save_settings, methods=["POST"]),
        pages.route("/settings/test-model", test_endpoint, methods=["POST"]),
    ]
