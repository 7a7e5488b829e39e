"""The stdio transport: newline-delimited JSON-RPC on the process's stdin and stdout, each
line checked (``wire``) before the server sees it, each refusal answered at once.

The SDK's ``stdio_server`` reads lines it cannot validate into exceptions that the server
logs at DEBUG and never answers; this transport is the same loop with ``wire.check_line``
in the middle. As the SDK does, it keeps the wire to itself while serving: fd 0 reads the
null device and fd 1 writes to stderr, so a stray ``print`` or a child process can neither
steal a request nor break a frame; both are restored afterwards.
"""

import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from .wire import MAX_LINE_BYTES, Refusal, check_line, too_long

log = logging.getLogger(__name__)
DISCARD_CHUNK = 1 << 16

Inbound = SessionMessage | Exception


@asynccontextmanager
async def checked_stdio() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]
]:
    """``(read_stream, write_stream)`` for ``Server.run`` over the claimed stdio."""
    with claimed_stdio() as (wire_in, wire_out):
        inbound_writer, inbound = anyio.create_memory_object_stream[Inbound](0)
        outbound, outbound_reader = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as group:
            group.start_soon(read_lines, wire_in, inbound_writer, outbound.clone())
            group.start_soon(write_lines, wire_out, outbound_reader)
            yield inbound, outbound


async def read_lines(
    wire_in: BinaryIO,
    inbound: MemoryObjectSendStream[Inbound],
    replies: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Every line to the server, or its refusal to the client; ends at EOF."""
    async with inbound, replies:
        while True:
            # Abandoned on cancel: a read blocked on a silent client must not hold up a
            # server that is stopping for another reason.
            line, whole = await anyio.to_thread.run_sync(read_line, wire_in, abandon_on_cancel=True)
            if not line:
                return
            # Parsed off the loop too: an 8 MB line takes a while, and calls are running.
            checked = await anyio.to_thread.run_sync(check_line if whole else too_long, line)
            try:
                if isinstance(checked, Refusal):
                    log.warning("StrataGate MCP: refused a message: %s", checked.message)
                    await replies.send(checked.reply())
                elif checked is not None:
                    await inbound.send(checked)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server stopped first


def read_line(wire_in: BinaryIO) -> tuple[bytes, bool]:
    """The next line and whether it is whole; an over-long line's start only (the rest is
    read and dropped here, so memory stays bounded). ``b""`` at EOF."""
    line = wire_in.readline(MAX_LINE_BYTES + 1)
    if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
        return line, True
    rest = line
    while rest and not rest.endswith(b"\n"):
        rest = wire_in.readline(DISCARD_CHUNK)
    return line, False


async def write_lines(
    wire_out: BinaryIO, outbound: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    """Once the client has closed its end, the rest is drained unwritten: a client that exits
    while answers are on their way is a normal end, not a crash."""
    connected = True
    async with outbound:
        async for item in outbound:
            if not connected:
                continue
            frame = item.message.model_dump_json(by_alias=True, exclude_unset=True)
            data = frame.encode("utf-8", "replace") + b"\n"
            connected = await anyio.to_thread.run_sync(_write, wire_out, data)


def _write(wire_out: BinaryIO, data: bytes) -> bool:
    """False when the client has closed the pipe."""
    try:
        wire_out.write(data)
        wire_out.flush()
    except BrokenPipeError:
        return False
    return True


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Private duplicates of fd 0 and 1 for the wire; fd 0 and 1 diverted meanwhile."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    # closefd=False: a reader thread may still block on the input after a failure, and a
    # descriptor closed under it could be reused; the process ends soon after anyway.
    reader = os.fdopen(wire_in, "rb", closefd=False)
    writer = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield reader, writer
    finally:
        with suppress(OSError):  # a client gone away: nothing left to flush to
            sys.stdout.flush()
            writer.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_out)
