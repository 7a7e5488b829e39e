"""OpenAI-compatible chat-completions client for structured tasks (the only module using httpx).

Works against DeepSeek, OpenAI, Ollama, vLLM and llama.cpp's server: each task asks for its
schema in the endpoint's mode (``response_format`` ``json_schema``, else a forced tool call,
else the schema in the prompt; found once and remembered by ``endpoint_cache.py``), JSON in
text is read too, one validation retry feeds the error back, and a server rejecting a
request feature (``response_format``, tools, ``max_tokens``, ``temperature``) or ignoring
one (a reply with no JSON) gets the request without it from then on.
A request that a later attempt may fix (429, 5xx, a dropped connection, a timeout) is tried
again by ``retry.py``'s policy; every reply is validated by ``replies.py`` before it is read.
The API key is read from the environment per request (none set: no ``Authorization``
header, as local servers want) and scrubbed from every message.
"""

import asyncio
import json
import logging
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, Self

import httpx

from ..clock import utc_now
from ..text.clean import valid_text
from .base import (
    ModelAuthError,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelRateLimitedError,
    ModelReplyTooLargeError,
    ModelServerError,
    ModelTimeoutError,
    StructuredTask,
    T,
)
from .endpoint import HttpModelConfig as HttpModelConfig
from .endpoint_cache import RememberedMode
from .outputs import InvalidOutput, parse_output
from .replies import MalformedReply, WireChoice, WireMessage, first_choice
from .request_body import MIN_OUTPUT_TOKENS as MIN_OUTPUT_TOKENS
from .request_body import TOOL_PREFIX as TOOL_PREFIX
from .request_body import Compat, Mode, mode_of, request_body
from .request_body import output_budget as output_budget
from .retry import RETRY_STATUSES, RetryClock, retry_after_seconds, retry_delay
from .select import DEFAULT_KEY_ENV

logger = logging.getLogger(__name__)

_DETAIL_LIMIT = 300
_RETRIED_ERRORS = (
    TimeoutError,
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)

_RAW_HEADERS = ("content-encoding", "content-length", "transfer-encoding")  # of the wire body

Outcome = httpx.Response | BaseException


class HttpModel:
    """A ``StructuredModel`` over ``POST {base_url}/chat/completions``.

    Use as an async context manager or call ``aclose()``; an injected client is left open.
    """

    def __init__(
        self,
        config: HttpModelConfig,
        client: httpx.AsyncClient | None = None,
        clock: RetryClock | None = None,
        *,
        modes_path: Path | None = None,
    ) -> None:
        self.config = config
        self.name = config.model
        self._client = client
        self._owns_client = client is None
        self._compat = Compat()
        self._clock = clock or RetryClock()
        self._modes = RememberedMode(modes_path, config.base_url, config.model)

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

    @property
    def shape(self) -> tuple[Mode, bool]:
        """How structured tasks ask for their schema now: the mode and its ``strict``."""
        return self._compat.mode, self._compat.strict

    def forget_mode(self) -> None:
        """Find the endpoint's mode again from the top (the settings page's test)."""
        self.use_mode("json_schema")

    def use_mode(self, mode: Mode, strict: bool = True) -> None:
        """Start in ``mode`` instead of the remembered one (what it finds is still recorded)."""
        self._compat = Compat()
        self._compat.use(mode, strict)
        self._modes.forget()

    async def complete(self, task: StructuredTask[T]) -> T:
        """Call the model in the endpoint's mode; validate; on invalid output retry once
        with the error fed back. The mode found and any error are remembered."""
        self._modes.start(self._compat)
        try:
            result = await self._complete(task)
        except ModelError as error:
            self._modes.remember(self._compat, confirmed=False, error=str(error))
            raise
        self._modes.remember(self._compat, confirmed=True)
        return result

    async def _complete(self, task: StructuredTask[T]) -> T:
        """A reply with no JSON at all means the server ignored the mode: the next mode is
        tried (at most twice in all), without spending the validation retry."""
        feedback: InvalidOutput | None = None
        attempt = 1
        while True:
            message, sent_in = await self._request(task, feedback)
            try:
                return parse_output(task, message)
            except InvalidOutput as invalid:
                if invalid.unstructured and self._fall_back(sent_in):
                    continue
                logger.warning("%s: invalid %s output (attempt %d)", self.name, task.name, attempt)
                if attempt == 2:
                    self._fail(ModelOutputError, _invalid_twice(self.config, task, invalid))
                feedback, attempt = invalid, 2

    async def _request(
        self, task: StructuredTask[Any], feedback: InvalidOutput | None
    ) -> tuple[WireMessage, Mode]:
        """The reply's message and the mode of the request that got it."""
        sent: dict[str, Any] = {}

        def body() -> dict[str, Any]:
            sent.clear()
            sent.update(request_body(self.config, self._compat, task, feedback))
            return sent

        message = self._choice_of(await self._accepted(body)).message
        return message, mode_of(sent)

    def _fall_back(self, sent_in: Mode) -> bool:
        """Whether to ask again: another request already stepped down, or this one can."""
        if self._compat.mode != sent_in:
            return True
        step = self._compat.fall_back()
        if step is not None:
            logger.info("%s sent no JSON in mode %s; trying %s", self._where(), sent_in, step)
        return step is not None

    async def _accepted(self, body: Callable[[], dict[str, Any]]) -> httpx.Response:
        """POST until the server accepts the request shape (``body`` is rebuilt after each
        adaptation); the successful response. With several requests in flight, another one
        may have adapted the shape while this one was out: it is then simply sent again."""
        for _ in range(8):  # five features to drop at most, and shapes changed meanwhile
            shape = replace(self._compat)
            sent = body()
            response = await self._post(sent)
            if response.status_code == 400 and (
                self._compat != shape or self._adapt(_error_detail(response), sent)
            ):
                continue
            self._check_status(response)
            return response
        self._fail(ModelError, f"{self._where()} kept rejecting the request (HTTP 400)")

    def _adapt(self, detail: str, sent: dict[str, Any]) -> bool:
        change = self._compat.adapt(detail, sent)
        if change is not None:
            logger.info("%s rejected a request feature; retrying with %s", self._where(), change)
        return change is not None

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        """POST, trying again while the policy allows; the response, or the typed error."""
        started, attempt = self._clock.now(), 1
        while True:
            timeout = self._attempt_timeout(started, attempt)
            outcome = await self._send(body, timeout)
            delay = self._retry_delay(outcome, attempt, started)
            if delay is None:
                return self._settle(outcome, attempt, timeout)
            logger.info("%s: %s; retry %d in %.1f s", self.name, _why(outcome), attempt, delay)
            await self._clock.sleep(delay)
            attempt += 1

    async def _send(self, body: dict[str, Any], timeout: float) -> Outcome:
        url = f"{self.config.base_url}/chat/completions"
        headers = self._headers()
        try:
            async with asyncio.timeout(timeout):
                stream = self._http().stream("POST", url, json=body, headers=headers)
                async with stream as response:
                    return await self._read_capped(response)
        except _RETRIED_ERRORS as error:
            return error
        except httpx.HTTPError as error:
            self._fail(ModelError, f"cannot reach {self._where()}: {error}", error)

    async def _read_capped(self, response: httpx.Response) -> httpx.Response:
        """The response with its body read (decoded) up to ``max_reply_bytes``: the read
        stops there and the call fails, so a runaway reply is neither held nor stored."""
        cap, body = self.config.max_reply_bytes, bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > cap:
                self._fail(ModelReplyTooLargeError, _too_large(cap))
        headers = [(k, v) for k, v in response.headers.multi_items() if k not in _RAW_HEADERS]
        status, request = response.status_code, response.request
        return httpx.Response(status, headers=headers, content=bytes(body), request=request)

    def _attempt_timeout(self, started: float, attempt: int) -> float:
        """The full ``timeout_s`` for the first request; a retry only what the budget has left."""
        if attempt == 1:
            return self.config.timeout_s
        left = self.config.retry_max_total_s - (self._clock.now() - started)
        return max(0.001, min(self.config.timeout_s, left))

    def _retry_delay(self, outcome: Outcome, attempt: int, started: float) -> float | None:
        retry_after = None
        if isinstance(outcome, httpx.Response):
            if outcome.status_code not in RETRY_STATUSES:
                return None
            retry_after = retry_after_seconds(outcome.headers.get("retry-after"), utc_now())
        elapsed = self._clock.now() - started
        policy = self.config.retry_policy
        return retry_delay(policy, attempt, elapsed, retry_after, self._clock.draw)

    def _settle(self, outcome: Outcome, attempts: int, timeout: float) -> httpx.Response:
        """The final response, or the final failure raised as its typed error."""
        tried = _attempts(attempts)
        if isinstance(outcome, httpx.Response):
            if outcome.status_code in RETRY_STATUSES:
                self._check_status(outcome, tried)
            return outcome
        if isinstance(outcome, TimeoutError | httpx.TimeoutException):
            message = f"{self._where()} did not answer within {timeout:g} s{tried}"
            self._fail(ModelTimeoutError, message, outcome)
        self._fail(ModelError, f"cannot reach {self._where()}: {outcome}{tried}", outcome)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.config.timeout_s)
        return self._client

    def _headers(self) -> dict[str, str]:
        """``Authorization`` only when a key is set: a local server (llama.cpp, Ollama,
        vLLM) needs none, and one that does answers 401, which says how to give it."""
        key = self._key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _key(self) -> str:
        env = self.config.api_key_env
        return os.environ.get(env, "").strip() if env else ""

    def _check_status(self, response: httpx.Response, tried: str = "") -> None:
        """Raise the typed error for a failed status; ``tried`` says how often it was sent."""
        status = response.status_code
        if status < 400:
            return
        detail = _error_detail(response)
        if status in (401, 403):
            self._fail(ModelAuthError, self._auth_problem(f"HTTP {status}: {detail}"))
        if status == 404:
            self._fail(
                ModelNotFoundError,
                f"{self._where()} returned 404 for model {self.config.model!r}: check base_url "
                f"(usually ends in /v1) and the model name ({detail})",
            )
        if status == 429:
            self._fail(ModelRateLimitedError, self._rate_limited(response, detail) + tried)
        if status >= 500:
            self._fail(ModelServerError, f"{self._where()} failed (HTTP {status}: {detail}){tried}")
        self._fail(ModelError, f"{self._where()} rejected the request (HTTP {status}: {detail})")

    def _auth_problem(self, why: str) -> str:
        """One line: the key that was refused, or how to give one the server wants."""
        env = self.config.api_key_env
        if self._key():
            return f"{self._where()} rejected the API key (set in ${env}) ({why})"
        wants = f"{self._where()} wants an API key ({why})"
        if env:
            return (
                f"{wants}: set ${env} to it, or name the variable holding it as api_key_env "
                "in the profile's model block"
            )
        return (
            f"{wants}: name the variable holding it as api_key_env in the profile's model "
            f"block (${DEFAULT_KEY_ENV} when STRATAGATE_BASE_URL names the endpoint)"
        )

    def _rate_limited(self, response: httpx.Response, detail: str) -> str:
        message = f"{self._where()} is rate limiting requests (HTTP 429: {detail})"
        retry_after = response.headers.get("retry-after", "").strip()
        if not retry_after:
            return message
        unit = " s" if retry_after.isdigit() else ""
        return f"{message}; retry after {retry_after}{unit}"

    def _choice_of(self, response: httpx.Response) -> WireChoice:
        """The reply's first choice, validated; a malformed one is a one-line ``ModelError``."""
        try:
            return first_choice(response.content)
        except MalformedReply as error:
            body = _truncate(" ".join(response.text.split()) or "(empty)", _DETAIL_LIMIT)
            message = f"{self._where()} sent an unexpected reply: {error} (body: {body})"
            self._fail(ModelError, message, error)

    def _where(self) -> str:
        return f"the model server at {self.config.base_url}"

    def _fail(
        self, kind: type[ModelError], message: str, cause: BaseException | None = None
    ) -> NoReturn:
        """Raise ``kind`` with the API key scrubbed from the message (and the U+FFFD rule
        applied: a provider's error body may hold lone surrogates, unprintable as UTF-8)."""
        raise kind(valid_text(self._scrub(message))) from cause

    def _scrub(self, text: str) -> str:
        key = self._key()
        return text.replace(key, "***") if key else text


def _error_detail(response: httpx.Response) -> str:
    """The provider's error message (OpenAI, Ollama and FastAPI shapes), else the raw body."""
    try:
        data = response.json()
    except (ValueError, RecursionError):
        return _truncate(response.text.strip() or response.reason_phrase, _DETAIL_LIMIT)
    detail: Any = data
    if isinstance(data, dict):
        detail = data.get("error") or data.get("detail") or data.get("message") or data
        if isinstance(detail, dict):
            detail = detail.get("message") or detail
    text = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    return _truncate(text, _DETAIL_LIMIT)


def _invalid_twice(
    config: HttpModelConfig, task: StructuredTask[Any], invalid: InvalidOutput
) -> str:
    return f"model {config.model!r} returned invalid output for {task.name} twice: {invalid.reason}"


def _too_large(cap: int) -> str:
    size = f"{cap // 1024} KB" if cap % 1024 == 0 else f"{cap} bytes"
    return (
        f"model reply exceeded {size}; raise model.max_reply_bytes in the profile "
        "(or STRATAGATE_MAX_REPLY_BYTES) if such replies are expected"
    )


def _attempts(count: int) -> str:
    return f"; gave up after {count} attempt{'s' if count > 1 else ''}"


def _why(outcome: Outcome) -> str:
    if isinstance(outcome, httpx.Response):
        return f"HTTP {outcome.status_code}"
    return type(outcome).__name__


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
