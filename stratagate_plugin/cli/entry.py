"""The ``stratagate`` executable's first step, before the command modules load.

Loading the engine, the web app and their rules takes seconds on a cold start (most of a
first ``serve``), and silence looks like a hang: ``serve`` says what it is loading at
once, and ``--version`` answers without loading anything.
"""

import sys
from collections.abc import Sequence
from importlib import metadata

LOADING = {"serve": "loading the engine and the web app"}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        print(f"stratagate {package_version()}")
        return 0
    if args and args[0] in LOADING and not {"-h", "--help"} & set(args):
        print(f"{LOADING[args[0]]}…", file=sys.stderr, flush=True)
    from .main import main as run

    return run(args)


def package_version() -> str:
    try:
        return metadata.version("stratagate-memory")
    except metadata.PackageNotFoundError:
        return "(not installed)"


if __name__ == "__main__":
    raise SystemExit(main())
