"""An import or ingest file's bytes, read with a cap: never more than ``cap + 1`` bytes.

A size check on ``st_size`` trusts the file system: ``/dev/zero`` reports 0 and grows the
process past gigabytes, and a FIFO with no writer blocks ``open`` forever. So only regular
files are opened (a stream comes through stdin, named ``-``), and every read stops one byte
past the cap, which is how "too large" is known without reading the rest.
"""

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ..errors import InvalidInput

STDIN = "-"
MEGABYTE = 1024 * 1024


def read_capped(name: str | Path, cap: int, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of file ``name`` (or of ``stdin`` for ``-``), at most ``cap`` of them; a
    missing, special or larger file is one ``InvalidInput`` line naming it."""
    with opened(name, stdin) as (stream, source):
        return read_rest(stream, b"", cap, source)


@contextmanager
def opened(name: str | Path, stdin: BinaryIO | None = None) -> Iterator[tuple[BinaryIO, str]]:
    """File ``name`` (or ``stdin`` for ``-``) open for reading, and how to name it; a
    missing or special file, or a read that fails, is one ``InvalidInput`` line."""
    if str(name) == STDIN:
        if stdin is None:
            raise InvalidInput("cannot read stdin here: name a file instead of -")
        yield stdin, "stdin"
        return
    path = Path(name)
    try:
        _check_regular(path)
        with path.open("rb") as stream:
            yield stream, str(path)
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror or error}") from None


def read_rest(stream: BinaryIO, head: bytes, cap: int, source: str) -> bytes:
    """``head`` (the bytes already read) and the rest of ``stream``: at most ``cap`` in all."""
    return _bounded(stream, cap, source, head)


def size_text(cap: int) -> str:
    """``4 MB`` for a whole number of megabytes, else the bytes."""
    return f"{cap // MEGABYTE} MB" if cap % MEGABYTE == 0 else f"{cap:,} bytes"


def _check_regular(path: Path) -> None:
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(mode):
        raise InvalidInput(
            f"cannot read {path}: not a regular file (a device, FIFO or socket); "
            "to read a stream, pipe it in and give - as the file"
        )


def _bounded(stream: BinaryIO, cap: int, source: str, head: bytes = b"") -> bytes:
    data = head + stream.read(max(cap + 1 - len(head), 0))
    if len(data) > cap:
        raise InvalidInput(f"{source} is larger than {size_text(cap)}")
    return data
