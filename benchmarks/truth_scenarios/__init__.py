"""The memory-truth scenarios (issue 23), one module per category, English and Chinese.

A scenario is what a user does (sessions of turns on given days, imports) and what should
then be true: checks of memory's state, and the answer to a question asked in a new
session. ``benchmarks/memory_truth.py`` runs them; the world and the checks live in
``world.py`` and ``checks.py``.
"""

from dataclasses import dataclass
from typing import Literal

from .checks import Answer, Check

Lang = Literal["en", "zh"]


@dataclass(frozen=True)
class Session:
    """A session's user turns on one day; the session ends (is sealed) afterwards."""

    name: str
    day: int
    turns: tuple[str, ...]


@dataclass(frozen=True)
class Import:
    """Another memory's export imported (preview → analyse → commit) after the sessions
    before it; the events of each of ``keeps`` (user texts said before) must lose no
    detail: their content terms all still in one active event after the commit."""

    text: str
    keeps: tuple[str, ...] = ()
    fmt: str = "auto"


@dataclass(frozen=True)
class Scenario:
    id: str
    category: str
    lang: Lang
    steps: tuple[Session | Import, ...]
    checks: tuple[Check, ...] = ()
    answer: Answer | None = None
    echo: bool = False  # the question's session, sealed and derived, changes no event
    via: Literal["engine", "cli"] = "engine"


CATEGORIES = ("provenance", "no-echo", "repeat", "change-of-mind", "abstention", "merge")


def all_scenarios() -> list[Scenario]:
    from . import abstention, change_of_mind, merge, no_echo, provenance, repeat

    modules = (provenance, no_echo, repeat, change_of_mind, abstention, merge)
    return [scenario for module in modules for scenario in module.SCENARIOS]


def heldout_scenarios() -> list[Scenario]:
    """The 36 held-out scenarios (``heldout.py``), written after the rules were tuned on
    the 72 of ``all_scenarios``: what unseen scenarios get."""
    from . import heldout

    return list(heldout.SCENARIOS)


def heldout2_scenarios() -> list[Scenario]:
    """The second 36 held-out scenarios (``heldout2.py``), written once the first held-out
    set had been used for tuning: unseen again."""
    from . import heldout2

    return list(heldout2.SCENARIOS)
