"""``stratagate`` command line: argument parsing and error translation only.

Each command group lives in its own module and calls the core façade; user mistakes
become one clear line on stderr and exit status 2, never a traceback.
"""

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..core.errors import StrataGateError
from ..core.text.clean import valid_text
from . import (
    bench_command,
    block_commands,
    chat_command,
    demo_command,
    derive_commands,
    doctor_command,
    ingest_command,
    plugin_command,
    spaces_command,
)

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stratagate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (
        demo_command,
        ingest_command,
        block_commands,
        derive_commands,
        bench_command,
        chat_command,
        plugin_command,
        doctor_command,
        spaces_command,
    ):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Arguments pass the U+FFFD rule: a non-UTF-8 byte in ``--message`` is kept as U+FFFD."""
    raw = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args([valid_text(arg) for arg in raw])
    handler: Handler = args.handler
    try:
        return asyncio.run(handler(args))
    except (StrataGateError, OSError, ValueError) as error:
        print(f"stratagate: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
