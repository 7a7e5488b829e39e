"""An import or ingest file's bytes, read with a cap: never more than ``cap + 1`` bytes.

A size check on ``st_size`` trusts the file system: ``/dev/zero`` reports 0 and grows the
process past gigabytes, and a FIFO with no writer blocks ``open`` forever. So only regular
files are opened (a stream comes through stdin, named ``-``), and every read stops one byte
past the cap, which is how "too large" is known without reading the rest.
"""

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..errors import InvalidInput

STDIN = "-"
MEGABYTE = 1024 * 1024


def read_capped(name: str | Path, cap: int, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of file ``name`` (or of ``stdin`` for ``-``), at most ``cap`` of them; a
    missing, special or larger file is one ``InvalidInput`` line naming it."""
    if str(name) == STDIN:
        if stdin is None:
            raise InvalidInput("cannot read stdin here: name a file instead of -")
        return _bounded(stdin, cap, "stdin")
    path = Path(name)
    try:
        _check_regular(path)
        with path.open("rb") as stream:
            return _bounded(stream, cap, str(path))
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror or error}") from None


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


def _bounded(stream: BinaryIO, cap: int, source: str) -> bytes:
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise InvalidInput(f"{source} is larger than {size_text(cap)}")
    return data
