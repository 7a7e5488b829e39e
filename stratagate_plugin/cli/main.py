"""``stratagate`` command line: argument parsing and error translation only.

Each command group lives in its own module and calls the core façade; user mistakes
become one clear line on stderr and exit status 2, never a traceback.
"""

import argparse
import asyncio
import os
import sys
import textwrap
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, NoReturn

from ..core.errors import StrataGateError
from ..core.rebuilds import default_report, report_with
from ..core.store.units import without_passwords
from ..core.text.clean import valid_text
from . import (
    bench_command,
    block_commands,
    chat_command,
    correct_commands,
    curate_commands,
    db_command,
    demo_command,
    derive_commands,
    doctor_command,
    graph_command,
    import_command,
    ingest_command,
    jobs_command,
    mcp_command,
    plugin_command,
    profile_command,
    purge_command,
    search_command,
    serve_command,
    show_command,
    spaces_command,
    topics_command,
)
from .entry import package_version
from .progress import print_rebuild

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
DESCRIPTION = """\
StrataGate gives an agent a long-term memory that keeps the original words as evidence.
'stratagate chat' talks to the agent, which remembers across sessions; the other commands
look into what it remembers and manage it. Everything stays in one local SQLite file
($STRATAGATE_HOME/memory.db, or --db), or in a PostgreSQL database (--db postgresql://...,
the profile's database:, or $STRATAGATE_DATABASE_URL)."""
EXAMPLES = """\
examples:
  stratagate serve                            the web app: chat and memory pages
  stratagate chat --session monday            talk (Ctrl-D or /exit to leave)
  stratagate chat --message "When is the sale?"
  stratagate ingest conversation.json         record an exported conversation
  stratagate import memories.json             preview another AI's memory export (--commit)
  stratagate process                          derive summaries and events now
  stratagate events                           what memory knows, as event cards
  stratagate search "spring sale"             find what memory holds, as the agent would
  stratagate topics                           the topic catalog: chapters, sections, events
  stratagate graph Caroline --as-of 2024-05-01  what memory believed about someone then
  stratagate forget evt_…                     hide an event ('restore' brings it back)
  stratagate doctor                           check the database file
  stratagate db copy memory.db postgresql://host/team   move a memory to PostgreSQL
  stratagate mcp                              the memory tools for an MCP client (stdio)

'stratagate COMMAND --help' explains one command."""


HELP_WIDTH = 100


class Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors quote no database password (an unknown
    argument may be a ``postgresql://user:password@…`` URL typed in the wrong place)."""

    def error(self, message: str) -> NoReturn:
        super().error(without_passwords(message))


def build_parser() -> argparse.ArgumentParser:
    """Every command registered, and ``--help`` listing each of them (sub-commands too)
    from the parser itself, so a new command is never missing from it."""
    parser = Parser(
        prog="stratagate",
        usage="%(prog)s [-h] [--version] COMMAND ...",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS
    )
    for module in (
        demo_command,
        ingest_command,
        import_command,
        block_commands,
        derive_commands,
        search_command,
        graph_command,
        show_command,
        curate_commands,
        correct_commands,
        profile_command,
        jobs_command,
        bench_command,
        chat_command,
        serve_command,
        mcp_command,
        plugin_command,
        purge_command,
        doctor_command,
        db_command,
        spaces_command,
        topics_command,
    ):
        module.register(commands)
    parser.epilog = command_listing(parser) + "\n\n" + EXAMPLES
    return parser


def command_summaries(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, str]]:
    """(``name`` or ``name sub``, its one-line help) for every command the parser knows,
    depth first in the order they were registered."""
    found: list[tuple[str, str]] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if name not in helps:  # an alias
                continue
            summary = helps[name] or (sub.description or "").split("\n")[0]
            found.append((f"{prefix}{name}", " ".join(summary.split())))
            found += command_summaries(sub, f"{prefix}{name} ")
    return found


def command_listing(parser: argparse.ArgumentParser) -> str:
    """The ``commands:`` section of ``--help``: each command and its summary, wrapped."""
    summaries = command_summaries(parser)
    width = max(len(name) for name, _ in summaries) + 4
    lines = ["commands:"]
    for name, summary in summaries:
        wrapped = textwrap.wrap(summary, HELP_WIDTH - width) or [""]
        lines.append(f"  {name:<{width - 2}}{wrapped[0]}".rstrip())
        lines += [" " * width + more for more in wrapped[1:]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Arguments pass the U+FFFD rule: a non-UTF-8 byte in ``--message`` is kept as U+FFFD."""
    raw = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args([valid_text(arg) for arg in raw])
    handler: Handler = args.handler
    previous = default_report()
    report_with(print_rebuild)  # an open that rebuilds an index says so (serve, chat, all)
    try:
        code = asyncio.run(handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:  # `stratagate blocks | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (StrataGateError, OSError, ValueError) as error:
        print(f"stratagate: error: {without_passwords(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        report_with(previous)  # a command run in process (tests) leaves the default as found


if __name__ == "__main__":
    raise SystemExit(main())
