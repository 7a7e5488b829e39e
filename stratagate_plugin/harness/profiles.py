"""Profiles: small YAML files under ``$STRATAGATE_HOME/profiles/`` naming enabled plugins.

A profile holds the enabled plugins, each plugin's settings and, optionally, the chat model.
The ``default`` profile is created on first use with the built-in memory plugin enabled;
any other new profile starts empty.

A profile is hand-edited: a wrong value names the file, the field, the value and the rule.
A wrong model tuning value (a timeout, a retry count) is dropped with a warning so the
command still starts; a wrong endpoint, plugin list or an unknown name is refused. ``stratagate
doctor --fix-profile`` rewrites the file without what is wrong (``repaired``).
"""

import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .endpoint import ChatEndpoint
from .errors import HostError, problem_lines
from .home import harness_home

DEFAULT_PROFILE = "default"
BUILTIN_PLUGIN = "stratagate-memory"
FIX_HINT = "`stratagate doctor --fix-profile` rewrites the profile without it"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MODEL_TUNING = frozenset(
    {"timeout_s", "max_output_tokens", "context_window", "temperature", "max_attempts"}
    | {"retry_base_delay_s", "retry_max_delay_s", "retry_max_total_s"}
)
logger = logging.getLogger(__name__)
Problem = tuple[tuple[str | int, ...], str, str]  # where, pydantic's kind, "where: rule (got …)"


class Profile(BaseModel):
    """One profile file; ``name`` comes from the file name and is not stored in it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default=DEFAULT_PROFILE, exclude=True)
    plugins: list[str] = []
    settings: dict[str, dict[str, Any]] = {}
    model: ChatEndpoint | None = None
    system_prompt: str | None = None


def profiles_dir() -> Path:
    return harness_home() / "profiles"


def profile_path(name: str) -> Path:
    if not _NAME.fullmatch(name):
        raise HostError(f"invalid profile name {name!r}: use letters, digits, '.', '_' or '-'")
    return profiles_dir() / f"{name}.yml"


def load_profile(name: str) -> Profile:
    """The profile called ``name``, created (and saved) on first use."""
    path = profile_path(name)
    if not path.exists():
        plugins = [BUILTIN_PLUGIN] if name == DEFAULT_PROFILE else []
        return save_profile(Profile(name=name, plugins=plugins))
    data = read_profile_data(path)
    problems = profile_problems(data)
    refused = [line for where, kind, line in problems if not _droppable(where, kind)]
    if refused:
        raise HostError(f"invalid profile {path}: {'; '.join(refused)}; {FIX_HINT}")
    for where, _, line in problems:
        logger.warning("stratagate: warning: %s: %s; using its default; %s", path, line, FIX_HINT)
        _drop(data, where)
    return Profile.model_validate({**data, "name": name})


def read_profile_data(path: Path) -> dict[str, Any]:
    """The file's YAML mapping; bad bytes, bad YAML or another shape is a ``HostError``."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, TypeError, ValueError) as error:  # bad bytes, bad dates too
        raise HostError(f"invalid profile {path}: {error}") from error
    if not isinstance(data, dict):
        raise HostError(f"invalid profile {path}: not a mapping of settings but {data!r:.60}")
    return data


def profile_problems(data: dict[str, Any]) -> list[Problem]:
    """Each problem of a profile's data, with where it is."""
    try:
        Profile.model_validate({**data, "name": DEFAULT_PROFILE})
    except ValidationError as error:
        lines = problem_lines(error, show_input=True)
        found = zip(error.errors(), lines, strict=True)
        return [(tuple(problem["loc"]), problem["type"], line) for problem, line in found]
    return []


def repaired(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``data`` without each wrong or unknown field (its default applies), and what went."""
    removed: list[str] = []
    for _ in range(100):  # each pass removes one thing; a profile has far fewer
        problems = profile_problems(data)
        if not problems:
            break
        where, _, line = problems[0]
        _drop(data, where)
        removed.append(line)
    return data, removed


def _droppable(where: tuple[str | int, ...], kind: str) -> bool:
    """A wrong model tuning value (a timeout, a retry count): nothing else depends on it.
    An unknown name is kept an error: ``modle:`` may be the endpoint the user meant."""
    known = kind != "extra_forbidden"
    return len(where) == 2 and where[0] == "model" and where[1] in _MODEL_TUNING and known


def _drop(data: dict[str, Any], where: tuple[str | int, ...]) -> None:
    """Remove the innermost item ``where`` names, else its whole top-level entry."""
    container: Any = data.get(str(where[0])) if len(where) > 1 else None
    key = where[1] if len(where) > 1 else None
    in_dict = isinstance(container, dict) and key in container
    in_list = isinstance(container, list) and isinstance(key, int) and key < len(container)
    if in_dict or in_list:
        del container[key]
    else:
        data.pop(str(where[0]), None)


def save_profile(profile: Profile) -> Profile:
    """Write the profile atomically (temp file + rename)."""
    path = profile_path(profile.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = profile.model_dump(mode="json", exclude_none=True)
    temp = path.with_suffix(".yml.tmp")
    temp.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    os.replace(temp, path)
    return profile


def enable_plugin(profile: Profile, plugin: str) -> bool:
    """Add ``plugin``; False if it was already enabled."""
    if plugin in profile.plugins:
        return False
    profile.plugins.append(plugin)
    save_profile(profile)
    return True


def disable_plugin(profile: Profile, plugin: str) -> None:
    """Remove ``plugin``; its settings stay in the file for when it is added back."""
    if plugin not in profile.plugins:
        raise HostError(f"plugin {plugin!r} is not enabled in profile {profile.name!r}")
    profile.plugins.remove(plugin)
    save_profile(profile)
