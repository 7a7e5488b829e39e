"""A stand-in for a slow OpenAI-compatible model: the offline model's answers, a delay late.

Derivation against a real model is bound by how many calls are in flight, not by this
machine. This server answers each structured task the way ``core/llm/http.py`` asks for
it (``response_format`` naming the schema ``stratagate_<task>``, or a forced tool call of
that name; the payload as the user message) with the JSON text, or that tool call, that the
offline model gives for the payload, ``delay_s`` after
the request arrived; the answer is worked out meanwhile, on a thread, and remembered by
request, so the delay is the model's latency and this machine's time goes to the client.
A run against it derives the same events as the offline model in process
(``event_fingerprints`` compares two runs). It counts
requests in flight (the peak is what a concurrency test asserts on), and ``gate`` lets a
test hold every answer until it opens it.

    python -m stratagate_plugin.bench.model_server --delay 0.3   # prints its base URL

``POST /v1/stats`` returns the counts since the last call and starts them again.
"""

import argparse
import asyncio
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..core.events.cards import RELATION_LISTS, EventCard
from ..core.llm.http import TOOL_PREFIX
from ..core.llm.offline.model import OfflineModel


@dataclass
class SlowModelServer:
    """The server's state: its delay, an optional gate, and what it has seen."""

    delay_s: float = 0.0
    gate: asyncio.Event | None = None
    requests: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    computed: int = 0
    model: OfflineModel = field(default_factory=OfflineModel)
    _answers: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def app(self, base_url: str = "") -> Starlette:
        """The ASGI app (``base_url`` is accepted for ``tests/loopback.py`` and unused)."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/stats", self.stats, methods=["POST"]),
            ]
        )

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            answer, _ = await asyncio.gather(self._answer(body), asyncio.sleep(self.delay_s))
            if self.gate is not None:
                await self.gate.wait()
        except (KeyError, IndexError, TypeError, ValueError) as error:
            message = {"message": f"not a structured-task request: {error!r}"}
            return JSONResponse({"error": message}, status_code=400)
        finally:
            self.in_flight -= 1
        if "response_format" in body:
            return JSONResponse(text_reply(json.dumps(answer, ensure_ascii=False)))
        return JSONResponse(tool_call_reply(_tool_name(body), answer))

    async def stats(self, request: Request) -> Response:
        counts = {
            "requests": self.requests,
            "peak_in_flight": self.peak_in_flight,
            "computed": self.computed,
        }
        self.requests = self.peak_in_flight = self.computed = 0
        return JSONResponse(counts)

    async def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        task = _tool_name(body).removeprefix(TOOL_PREFIX)
        content = next(m["content"] for m in body["messages"] if m["role"] == "user")
        key = (task, content)
        if key not in self._answers:
            payload = json.loads(content)
            self._answers[key] = await asyncio.to_thread(self.model.answer, task, payload)
            self.computed += 1
        return self._answers[key]


def _tool_name(body: dict[str, Any]) -> str:
    if "response_format" in body:
        return str(body["response_format"]["json_schema"]["name"])
    return str(body["tool_choice"]["function"]["name"])


def text_reply(content: str) -> dict[str, Any]:
    """A chat-completions reply whose one choice is ``content`` (JSON under ``response_format``)."""
    message = {"role": "assistant", "content": content}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def tool_call_reply(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions reply whose one choice calls ``name`` with ``arguments``."""
    function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
    call = {"id": "call_0", "type": "function", "function": function}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def event_fingerprints(cards: Iterable[EventCard]) -> set[tuple[Any, ...]]:
    """What a run derived: (block, title, sources, status, links), each linked id replaced by
    the (block, title, sources) it names, so runs over copies of one file compare equal when
    they derived the same events and the same links between them."""
    cards = list(cards)
    named = {
        card.id: (card.source_block_id, card.title, *card.source_message_ids) for card in cards
    }

    def links(card: EventCard) -> tuple[tuple[str, Any], ...]:
        found = [
            (key, named.get(i, i)) for key in RELATION_LISTS for i in card.temporal.get(key, [])
        ]
        return tuple(sorted(found, key=repr))

    return {(named[card.id], card.status, links(card)) for card in cards}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.3, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", args.port))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    app = SlowModelServer(delay_s=args.delay).app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
