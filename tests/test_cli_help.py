"""``stratagate --help`` lists every command the parser registers, sub-commands too, each
with its one-line summary; the list is walked here from the parser itself, so a command
added later cannot be missing from the help (issue 27)."""

import argparse
import re

import pytest

from stratagate_plugin.cli.main import build_parser, main


def registered(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, str]]:
    """Each command path and its help, from argparse's own records."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if name in helps:
                    found.append((prefix + name, helps[name] or sub.description or ""))
                    found += registered(sub, f"{prefix}{name} ")
    return found


@pytest.fixture(scope="module")
def help_text() -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    return out.getvalue()


def test_help_lists_every_registered_command_with_its_summary(help_text: str) -> None:
    commands = registered(build_parser())
    names = {name for name, _ in commands}
    assert {"correct", "conflicts", "profile", "purge", "spaces delete", "jobs retry"} <= names
    flat = " ".join(help_text.split())  # a long summary wraps
    for name, summary in commands:
        assert summary.strip(), f"{name} has no one-line summary"
        line = re.search(rf"^  {re.escape(name)}  +(\S.*)$", help_text, re.MULTILINE)
        assert line, f"{name!r} is not listed in --help"
        assert " ".join(summary.split()) in flat, name
        assert line.group(1).split()[0] == summary.split()[0], name


def test_help_keeps_its_usage_and_examples(help_text: str) -> None:
    assert help_text.startswith("usage: stratagate [-h] [--version] COMMAND ...")
    assert "examples:" in help_text and "'stratagate COMMAND --help'" in help_text
    assert help_text.index("commands:") < help_text.index("examples:")
