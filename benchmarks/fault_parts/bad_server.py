"""A misbehaving OpenAI-compatible server on 127.0.0.1, one fault per URL.

``POST /fault/<name>/v1/chat/completions`` always answers with fault ``<name>``, so each
child process (chat turn, ``process`` run, and the derivation a chat turn starts) sees one
fault from its first request to its last, and a run's outcome can be pinned on that fault.
The server runs uvicorn in a thread with its own event loop: a hanging reply is an
``asyncio.sleep`` and blocks nobody else. Nothing here listens beyond loopback.
"""

import asyncio
import json
import socket
import threading
from collections import Counter
from collections.abc import Callable
from types import TracebackType

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

JSON = "application/json"


def _json(status: int, body: object, **headers: str) -> Response:
    return Response(json.dumps(body), status_code=status, media_type=JSON, headers=headers)


def _message(message: object) -> Response:
    return _json(200, {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


REPLIES: dict[str, Callable[[], Response]] = {
    "malformed-json": lambda: Response('{"choices": [{"message": {"content": "hi"', 200,
                                       media_type=JSON),
    "message-string": lambda: _message("just a string"),
    "no-choices": lambda: _json(200, {"choices": []}),
    "function-null": lambda: _message(
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function", "function": None}]}
    ),
    "content-number": lambda: _message({"role": "assistant", "content": 42}),
    "http-500": lambda: _json(500, {"error": {"message": "internal error"}}),
    "http-503": lambda: Response("Service Unavailable", 503, media_type="text/plain"),
    "rate-limited": lambda: _json(429, {"error": {"message": "slow down"}}, **{"Retry-After": "0"}),
    "empty-body": lambda: Response(b"", 200, media_type=JSON),
}  # fmt: skip
HANG = "hang"
FAULTS = (*REPLIES, HANG)


class BadServer:
    """``with BadServer(hang_s) as server: server.url("http-500")``; counts requests."""

    def __init__(self, hang_s: float) -> None:
        self.hang_s = hang_s
        self.requests: Counter[str] = Counter()
        self._closing = False
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def url(self, fault: str) -> str:
        return f"http://127.0.0.1:{self.port}/fault/{fault}/v1"

    def _app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            fault = request.path_params["fault"]
            self.requests[fault] += 1
            await request.body()
            if fault == HANG:
                await self._hang()
                return _json(500, {"error": {"message": "hung"}})
            reply = REPLIES.get(fault)
            return reply() if reply else _json(404, {"error": {"message": "no such fault"}})

        path = "/fault/{fault}/v1/chat/completions"
        return Starlette(routes=[Route(path, chat, methods=["POST"])])

    async def _hang(self) -> None:
        """Longer than the client's timeout, but never past the server's own shutdown."""
        loop = asyncio.get_running_loop()
        until = loop.time() + self.hang_s
        while loop.time() < until and not self._closing:
            await asyncio.sleep(0.05)

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def __enter__(self) -> "BadServer":
        self._thread.start()
        for _ in range(1000):
            if self._server.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not self._server.started:
            raise RuntimeError("the bad model server did not start")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing = True
        self._server.should_exit = self._server.force_exit = True
        self._thread.join(timeout=self.hang_s + 10)
        self._sock.close()
