"""OpenAI-compatible chat-completions client for structured tasks (the only module using httpx).

Works against DeepSeek, OpenAI, Ollama, vLLM and llama.cpp's server: one forced tool call per
task, JSON-in-text fallback, one validation retry with the error fed back, and one-time
adaptations when a server rejects a request feature (tools, ``max_tokens``, ``temperature``).
The API key is read from the environment per request and scrubbed from every message.
"""

import asyncio
import json
import logging
import os
import re
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NoReturn, Self

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .base import (
    ModelAuthError,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelRateLimitedError,
    ModelServerError,
    ModelTimeoutError,
    StructuredTask,
    T,
)

logger = logging.getLogger(__name__)

TOOL_PREFIX = "stratagate_"
_DETAIL_LIMIT = 300
_ECHO_LIMIT = 4000
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class HttpModelConfig(BaseModel):
    """Where and how to call the model; ``api_key_env`` names the variable holding the key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    timeout_s: float = Field(default=120, gt=0)
    max_output_tokens: int = Field(default=2048, ge=256)
    temperature: float = Field(default=0, ge=0, le=2)

    @field_validator("base_url")
    @classmethod
    def _strip_endpoint(cls, value: str) -> str:
        """Accept ``…/v1``, ``…/v1/`` and a pasted ``…/v1/chat/completions`` alike."""
        value = value.strip().rstrip("/")
        return value.removesuffix("/chat/completions").rstrip("/")


@dataclass
class _Compat:
    """Request features; each is switched off at most once, when a server rejects it."""

    tools: bool = True
    token_field: str = "max_tokens"
    temperature: bool = True

    def adapt(self, detail: str) -> str | None:
        """Drop the feature a 400 complains about; the adaptation's name, or None."""
        text = detail.lower()
        if self.tools and re.search(r"\btool|function", text):
            self.tools = False
            return "tools"
        unsupported = "support" in text
        if unsupported and self.token_field == "max_tokens" and "max_tokens" in text:
            self.token_field = "max_completion_tokens"
            return "max_completion_tokens"
        if unsupported and self.temperature and "temperature" in text:
            self.temperature = False
            return "temperature"
        return None


class _InvalidOutput(Exception):
    """The reply could not be turned into the task's output type."""

    def __init__(self, reason: str, raw: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class HttpModel:
    """A ``StructuredModel`` over ``POST {base_url}/chat/completions``.

    Use as an async context manager or call ``aclose()``; an injected client is left open.
    """

    def __init__(self, config: HttpModelConfig, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.name = config.model
        self._client = client
        self._owns_client = client is None
        self._compat = _Compat()

    def __repr__(self) -> str:
        return f"HttpModel(model={self.config.model!r}, base_url={self.config.base_url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this model opened it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def complete(self, task: StructuredTask[T]) -> T:
        """Call the model; validate; on invalid output retry once with the error fed back."""
        feedback: _InvalidOutput | None = None
        for attempt in (1, 2):
            message = await self._request(task, feedback)
            try:
                return _parse_reply(task, message)
            except _InvalidOutput as invalid:
                logger.warning("%s: invalid %s output (attempt %d)", self.name, task.name, attempt)
                feedback = invalid
        assert feedback is not None
        self._fail(
            ModelOutputError,
            f"model {self.config.model!r} returned invalid output for {task.name} twice: "
            f"{feedback.reason}",
        )

    async def _request(self, task: StructuredTask[Any], feedback: _InvalidOutput | None) -> Any:
        """POST until the server accepts the request shape; the reply's message object."""
        for _ in range(4):
            response = await self._post(_request_body(self.config, self._compat, task, feedback))
            if response.status_code == 400 and self._adapt(_error_detail(response)):
                continue
            self._check_status(response)
            return self._message_of(response)
        self._fail(ModelError, f"{self._where()} kept rejecting the request (HTTP 400)")

    def _adapt(self, detail: str) -> bool:
        change = self._compat.adapt(detail)
        if change is not None:
            logger.info("%s rejected a request feature; retrying with %s", self._where(), change)
        return change is not None

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.config.base_url}/chat/completions"
        headers = self._headers()
        try:
            async with asyncio.timeout(self.config.timeout_s):
                return await self._http().post(url, json=body, headers=headers)
        except (TimeoutError, httpx.TimeoutException) as error:
            self._fail(
                ModelTimeoutError,
                f"{self._where()} did not answer within {self.config.timeout_s:g} s",
                error,
            )
        except httpx.HTTPError as error:
            self._fail(ModelError, f"cannot reach {self._where()}: {error}", error)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.config.timeout_s)
        return self._client

    def _headers(self) -> dict[str, str]:
        env = self.config.api_key_env
        if env is None:
            return {}
        key = os.environ.get(env, "").strip()
        if not key:
            self._fail(ModelAuthError, f"no API key: environment variable ${env} is not set")
        return {"Authorization": f"Bearer {key}"}

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        detail = _error_detail(response)
        if status in (401, 403):
            self._fail(ModelAuthError, f"{self._auth_problem()} (HTTP {status}: {detail})")
        if status == 404:
            self._fail(
                ModelNotFoundError,
                f"{self._where()} returned 404 for model {self.config.model!r}: check base_url "
                f"(usually ends in /v1) and the model name ({detail})",
            )
        if status == 429:
            self._fail(ModelRateLimitedError, self._rate_limited(response, detail))
        if status >= 500:
            self._fail(ModelServerError, f"{self._where()} failed (HTTP {status}: {detail})")
        self._fail(ModelError, f"{self._where()} rejected the request (HTTP {status}: {detail})")

    def _auth_problem(self) -> str:
        env = self.config.api_key_env
        if env is None:
            return (
                f"{self._where()} requires an API key; set api_key_env to the variable holding it"
            )
        return f"{self._where()} rejected the API key (set in ${env})"

    def _rate_limited(self, response: httpx.Response, detail: str) -> str:
        message = f"{self._where()} is rate limiting requests (HTTP 429: {detail})"
        retry_after = response.headers.get("retry-after", "").strip()
        if not retry_after:
            return message
        unit = " s" if retry_after.isdigit() else ""
        return f"{message}; retry after {retry_after}{unit}"

    def _message_of(self, response: httpx.Response) -> Any:
        try:
            return response.json()["choices"][0]["message"]
        except (ValueError, LookupError, TypeError) as error:
            detail = _truncate(response.text, _DETAIL_LIMIT)
            self._fail(ModelError, f"{self._where()} sent an unexpected reply: {detail}", error)

    def _where(self) -> str:
        return f"the model server at {self.config.base_url}"

    def _fail(
        self, kind: type[ModelError], message: str, cause: BaseException | None = None
    ) -> NoReturn:
        """Raise ``kind`` with the API key scrubbed from the message."""
        raise kind(self._scrub(message)) from cause

    def _scrub(self, text: str) -> str:
        env = self.config.api_key_env
        key = os.environ.get(env, "").strip() if env else ""
        return text.replace(key, "***") if key else text


def _request_body(
    config: HttpModelConfig,
    compat: _Compat,
    task: StructuredTask[Any],
    feedback: _InvalidOutput | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": _messages(compat, task, feedback),
        compat.token_field: config.max_output_tokens,
    }
    if compat.temperature:
        body["temperature"] = config.temperature
    if compat.tools:
        tool = TOOL_PREFIX + task.name
        body["tools"] = [{"type": "function", "function": _tool_function(task)}]
        body["tool_choice"] = {"type": "function", "function": {"name": tool}}
    return body


def _tool_function(task: StructuredTask[Any]) -> dict[str, Any]:
    doc = (task.output_type.__doc__ or task.name).strip().splitlines()[0]
    return {
        "name": TOOL_PREFIX + task.name,
        "description": f"Return the result: {doc}",
        "parameters": task.json_schema(),
    }


def _messages(
    compat: _Compat, task: StructuredTask[Any], feedback: _InvalidOutput | None
) -> list[dict[str, str]]:
    system = task.instructions
    if not compat.tools:
        schema = json.dumps(task.json_schema(), ensure_ascii=False)
        system += (
            "\n\nReply with exactly one JSON object and nothing else (no prose, no tool call). "
            f"It must match this JSON schema:\n{schema}"
        )
    payload = json.dumps(task.payload, ensure_ascii=False, default=str)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": payload}]
    if feedback is not None:
        messages.append({"role": "user", "content": _retry_instruction(compat, feedback)})
    return messages


def _retry_instruction(compat: _Compat, feedback: _InvalidOutput) -> str:
    how = "Call the tool again" if compat.tools else "Reply again with one JSON object"
    return (
        f"Your previous answer was invalid:\n{feedback.reason}\n\n"
        f"Previous answer:\n{_truncate(feedback.raw, _ECHO_LIMIT)}\n\n"
        f"{how} with a corrected answer that matches the schema exactly."
    )


def _parse_reply(task: StructuredTask[T], message: Any) -> T:
    """The validated output from a tool call, else from JSON found in the message text."""
    raw = _tool_arguments(message)
    if raw is None:
        raw = _message_text(message)
        found = _json_from_text(raw)
        if found is None:
            raise _InvalidOutput("the reply contained no tool call and no JSON object", raw)
        return _validate(task, found, raw)
    if isinstance(raw, dict):
        return _validate(task, raw, json.dumps(raw, ensure_ascii=False))
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError as error:
        raise _InvalidOutput(f"the tool arguments are not valid JSON: {error}", raw) from error
    return _validate(task, arguments, raw)


def _validate(task: StructuredTask[T], data: Any, raw: str) -> T:
    try:
        return task.output_type.model_validate(data)
    except ValidationError as error:
        raise _InvalidOutput(_describe(error), raw) from error


def _describe(error: ValidationError) -> str:
    """One line per problem: ``events.0.scope: Input should be 'user', 'project' or …``."""
    lines = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "(root)"
        lines.append(f"{where}: {problem['msg']}")
    return "\n".join(lines)


def _tool_arguments(message: Any) -> str | dict[str, Any] | None:
    """The first tool call's arguments (string, or a dict as some servers send), if any."""
    if not isinstance(message, dict):
        return None
    calls = message.get("tool_calls") or []
    legacy = message.get("function_call")
    functions = [call.get("function") for call in calls if isinstance(call, dict)]
    for function in [*functions, legacy]:
        if isinstance(function, dict) and isinstance(function.get("arguments"), str | dict):
            arguments: str | dict[str, Any] = function["arguments"]
            return arguments
    return None


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        parts = [part.get("text", "") for part in content if isinstance(part, dict)]
        return "".join(str(part) for part in parts)
    return content if isinstance(content, str) else ""


def _json_from_text(text: str) -> dict[str, Any] | None:
    """The first JSON object in a ```json fence, else the first ``{...}`` in the text."""
    text = _THINK.sub("", text)
    for block in _FENCE.findall(text):
        found = _first_object(block)
        if found is not None:
            return found
    return _first_object(text)


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _error_detail(response: httpx.Response) -> str:
    """The provider's error message (OpenAI, Ollama and FastAPI shapes), else the raw body."""
    try:
        data = response.json()
    except ValueError:
        return _truncate(response.text.strip() or response.reason_phrase, _DETAIL_LIMIT)
    detail: Any = data
    if isinstance(data, dict):
        detail = data.get("error") or data.get("detail") or data.get("message") or data
        if isinstance(detail, dict):
            detail = detail.get("message") or detail
    text = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    return _truncate(text, _DETAIL_LIMIT)


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
