"""A file that may be a chat history: sniffed from its first bytes, then a ChatGPT or
Claude export is read one conversation at a time (up to 64 MB), anything else as bytes.

Both ``import`` and ``ingest`` (and the web import page) open files here, so a big
``conversations.json`` reaches the chat-history reader whatever door it came through,
and is never held whole: decoding 60 MB of JSON at once takes several hundred MB of
objects, while one conversation, and the messages kept of the others, take a fraction.
Invalid UTF-8 is replaced (and counted) as ``decode_json`` does; lone surrogates are
replaced in what is kept (``ChatExport``), not in the metadata left out, which is most of
an export: walking all of it costs more than reading it.
"""

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InvalidInput
from ..text.clean import REPLACEMENT
from .formats import chat_exports
from .input_file import opened, read_rest, size_text
from .json_document import MAX_DEPTH, MAX_FILE_BYTES

CHUNK_BYTES = 1024 * 1024
_NOT_SPACE = re.compile("[^ \t\r\n\ufeff]")


@dataclass(frozen=True)
class SniffedFile:
    """A chat export, read (``export``), or another file's bytes (``data``)."""

    source: str
    export: chat_exports.ChatExport | None = None
    data: bytes = b""
    replaced: int = 0
    """Bytes of invalid UTF-8 in the export, replaced with U+FFFD."""

    def notes(self) -> tuple[str, ...]:
        if not self.replaced:
            return ()
        return (f"{self.source}: {self.replaced} bytes of invalid UTF-8 replaced with U+FFFD",)


def read_sniffed(name: str | Path, cap: int, stdin: BinaryIO | None = None) -> SniffedFile:
    """File ``name`` (``-``: ``stdin``): a chat export read conversation by conversation
    within ``MAX_FILE_BYTES``, else its bytes, at most ``cap`` of them."""
    with opened(name, stdin) as (stream, source):
        return read_stream(stream, source, cap)


def read_stream(stream: BinaryIO, source: str, cap: int) -> SniffedFile:
    """``read_sniffed`` for a stream already open (an upload's temporary file)."""
    head = stream.read(chat_exports.SNIFF_BYTES)
    kind = chat_exports.sniff_kind(head)
    if kind is None:
        return SniffedFile(source, data=read_rest(stream, head, cap, source))
    items = JsonListStream(stream, source, MAX_FILE_BYTES, head)
    export = chat_exports.ChatExport(kind)
    for conversation in items:  # a problem of the JSON names the file already
        try:
            export.add(conversation)
        except InvalidInput as error:
            raise InvalidInput(f"{source}: {error}; nothing was recorded") from None
    return SniffedFile(source, export=export, replaced=items.replaced)


class JsonListStream:
    """The items of the JSON list in a byte stream, decoded one at a time; reading
    stops one chunk past ``cap`` bytes with "larger than"."""

    def __init__(self, stream: BinaryIO, source: str, cap: int, head: bytes = b"") -> None:
        self.replaced = 0
        self._stream, self._source, self._cap = stream, source, cap
        self._pending, self._read, self._eof = head, 0, False
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._json = json.JSONDecoder()
        self._text, self._at, self._dropped = "", 0, 0

    def __iter__(self) -> Iterator[Any]:
        if self._peek() != "[":
            raise self._invalid("a conversations.json export is a JSON list")
        self._at += 1
        separator = "]" if self._peek() == "]" else ","
        if separator == "]":
            self._at += 1
        while separator == ",":
            yield self._item()
            separator = self._peek()
            if separator not in (",", "]"):
                raise self._invalid("expected ',' or ']' after a conversation")
            self._at += 1
        self._close()

    def _item(self) -> Any:
        """The next item, read further (twice as much each time) until it parses whole."""
        more = CHUNK_BYTES
        self._peek()
        while True:
            try:
                value, end = self._json.raw_decode(self._text, self._at)
            except RecursionError:
                too_deep = f"{self._source} is nested deeper than {MAX_DEPTH} levels"
                raise InvalidInput(too_deep) from None
            except ValueError as error:
                if self._eof:
                    raise self._invalid(getattr(error, "msg", str(error))) from None
                self._fill(more)
                more *= 2
                continue
            if end == len(self._text) and not self._eof:  # a number might go on
                self._fill(more)
                continue
            self._at = end
            return value

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            found = _NOT_SPACE.search(self._text, self._at)
            if found:
                self._at = found.start()
                return found.group()
            self._at = len(self._text)
            if self._eof:
                return ""
            self._fill(CHUNK_BYTES)

    def _close(self) -> None:
        if self._peek():
            raise self._invalid("more after the list's closing ]")

    def _fill(self, size: int) -> None:
        data = self._pending or self._stream.read(size)
        self._pending = b""
        self._read += len(data)
        if self._read > self._cap:
            raise InvalidInput(f"{self._source} is larger than {size_text(self._cap)}")
        self._eof = not data
        text = self._utf8.decode(data, final=self._eof)
        self.replaced += text.count(REPLACEMENT) - data.count(REPLACEMENT.encode())
        self._dropped += self._at
        self._text, self._at = self._text[self._at :] + text, 0

    def _invalid(self, why: str) -> InvalidInput:
        where = self._dropped + self._at
        return InvalidInput(f"{self._source} is not valid JSON: {why} (character {where})")
