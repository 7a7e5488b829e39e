"""Profiles: small YAML files under ``$STRATAGATE_HOME/profiles/`` naming enabled plugins.

A profile holds the enabled plugins, each plugin's settings and, optionally, the chat model.
The ``default`` profile is created on first use with the built-in memory plugin enabled;
any other new profile starts empty.
"""

import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.llm.http import HttpModelConfig
from ..core.store.db import stratagate_home
from .errors import HostError, describe

DEFAULT_PROFILE = "default"
BUILTIN_PLUGIN = "stratagate-memory"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Profile(BaseModel):
    """One profile file; ``name`` comes from the file name and is not stored in it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default=DEFAULT_PROFILE, exclude=True)
    plugins: list[str] = []
    settings: dict[str, dict[str, Any]] = {}
    model: HttpModelConfig | None = None
    system_prompt: str | None = None


def profiles_dir() -> Path:
    return stratagate_home() / "profiles"


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
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return Profile.model_validate({**data, "name": name})
    except ValidationError as error:
        raise HostError(f"invalid profile {path}: {describe(error)}") from error
    except (yaml.YAMLError, TypeError, ValueError) as error:  # bad bytes, bad dates too
        raise HostError(f"invalid profile {path}: {error}") from error


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
