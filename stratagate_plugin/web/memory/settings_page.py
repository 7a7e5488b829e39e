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

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.settings.title": "Memory settings",
        "mem.settings.saved": "Saved. The running memory uses the new values now.",
        "mem.settings.invalid": "Nothing was saved:",
        "mem.settings.memory": "Memory",
        "mem.settings.block_turn_size": "Turns per short-term block",
        "mem.settings.block_turn_size.hint": (
            "Applies to blocks sealed from now on, in every space."
        ),
        "mem.settings.block_decay_lambda": "Block decay λ",
        "mem.settings.block_decay_lambda.hint": (
            "How fast older blocks fold to shorter levels (0 = never)."
        ),
        "mem.settings.agent_memory_weight": "Agent-memory retrieval weight",
        "mem.settings.agent_memory_weight.hint": (
            "Share of memories the agent recorded itself in recall (0–5)."
        ),
        "mem.settings.display": "Chat page",
        "mem.settings.show_status_rows": "Show a row when a block seals or becomes ready",
        "mem.settings.show_citations": "Show the memories each answer adopted",
        "mem.settings.save": "Save",
        "mem.settings.readonly": "Set in the profile file",
        "mem.settings.derivation_model": "Memory derivation model",
        "mem.settings.chat_model": "Chat model",
        "mem.settings.offline": "the embedded offline model",
        "mem.settings.base_url": "Endpoint",
        "mem.settings.model": "Model",
        "mem.settings.api_key": "API key",
        "mem.settings.key_set": "set (hidden)",
        "mem.settings.key_set_in": "set in {name} (hidden)",
        "mem.settings.key_unset": "not set",
        "mem.settings.key_unset_in": "{name} is not set (no key is sent: local servers need none)",
        "mem.settings.mode": "Structured output",
        "mem.settings.mode.json_schema": (
            "response_format json_schema, strict (enforced by the server)"
        ),
        "mem.settings.mode.json_schema.loose": (
            "response_format json_schema (enforced by the server)"
        ),
        "mem.settings.mode.tools": "a forced tool call",
        "mem.settings.mode.prompt": "the schema in the prompt (not enforced)",
        "mem.settings.mode.unknown": "not found yet: the first call finds it",
        "mem.settings.mode.found": "found {when}",
        "mem.settings.last_error": "Last error",
        "mem.settings.last_error.none": "none",
        "mem.settings.test": "Test the endpoint",
        "mem.settings.test.hint": "Runs one small structured task and finds the mode again.",
        "mem.settings.test.valid": "Valid answer in {seconds} s, asked as {mode}.",
        "mem.settings.test.wrong": "The answer was valid but wrong (a weak model?).",
        "mem.settings.test.failed": "No valid answer after {seconds} s: {error}",
        "mem.settings.database": "Database",
        "mem.settings.space_mode": "Memory space mode",
        "mem.settings.space_mode.project": "one space per project directory",
        "mem.settings.space_mode.session": "one space per conversation",
        "mem.settings.space_mode.global": "one space for everything",
        "mem.settings.current_space": "This page's space",
    },
    "zh": {
        "mem.settings.title": "记忆设置",
        "mem.settings.saved": "已保存，正在运行的记忆已使用新值。",
        "mem.settings.invalid": "没有保存任何内容：",
        "mem.settings.memory": "记忆配置",
        "mem.settings.block_turn_size": "每个短期记忆块的轮数",
        "mem.settings.block_turn_size.hint": "对所有空间中此后封存的记忆块生效。",
        "mem.settings.block_decay_lambda": "记忆块衰减 λ",
        "mem.settings.block_decay_lambda.hint": "较早的记忆块折叠到更短层级的速度"
        "（0 表示不衰减）。",
        "mem.settings.agent_memory_weight": "助手记忆的检索权重",
        "mem.settings.agent_memory_weight.hint": "助手自己记录的记忆在召回中的份额（0–5）。",
        "mem.settings.display": "对话页面",
        "mem.settings.show_status_rows": "记忆块封存或就绪时显示一行状态",
        "mem.settings.show_citations": "显示每个回答采用的记忆",
        "mem.settings.save": "保存",
        "mem.settings.readonly": "在配置文件中设置",
        "mem.settings.derivation_model": "记忆处理模型",
        "mem.settings.chat_model": "对话模型",
        "mem.settings.offline": "内置离线模型",
        "mem.settings.base_url": "接口地址",
        "mem.settings.model": "模型",
        "mem.settings.api_key": "API 密钥",
        "mem.settings.key_set": "已设置（已隐藏）",
        "mem.settings.key_set_in": "已在 {name} 中设置（已隐藏）",
        "mem.settings.key_unset": "未设置",
        "mem.settings.key_unset_in": "{name} 未设置（不发送密钥：本地服务器不需要）",
        "mem.settings.mode": "结构化输出",
        "mem.settings.mode.json_schema": "response_format json_schema，严格模式（由服务器强制）",
        "mem.settings.mode.json_schema.loose": "response_format json_schema（由服务器强制）",
        "mem.settings.mode.tools": "强制工具调用",
        "mem.settings.mode.prompt": "提示词中的模式（不强制）",
        "mem.settings.mode.unknown": "尚未检测：第一次调用时检测",
        "mem.settings.mode.found": "检测于 {when}",
        "mem.settings.last_error": "最近的错误",
        "mem.settings.last_error.none": "无",
        "mem.settings.test": "测试接口",
        "mem.settings.test.hint": "运行一个小的结构化任务，并重新检测输出方式。",
        "mem.settings.test.valid": "{seconds} 秒内得到有效回答，方式：{mode}。",
        "mem.settings.test.wrong": "回答格式有效但内容不对（模型可能较弱）。",
        "mem.settings.test.failed": "{seconds} 秒后仍没有有效回答：{error}",
        "mem.settings.database": "数据库",
        "mem.settings.space_mode": "记忆空间模式",
        "mem.settings.space_mode.project": "每个项目目录一个空间",
        "mem.settings.space_mode.session": "每个对话一个空间",
        "mem.settings.space_mode.global": "所有内容共用一个空间",
        "mem.settings.current_space": "本页面的空间",
    },
}


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
        "database": str(pages.memory.overview.database_path),
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
