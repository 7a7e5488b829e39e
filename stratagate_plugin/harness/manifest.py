"""Finding installed plugins (entry points) and checking their ``plugin.yml`` against the host.

A plugin's manifest is ``plugin.yml`` inside its top-level package (shipped as package data)
or, in a source checkout or editable install, next to that package. Either is accepted only
if its ``entry`` names the entry point, so a stray file of another project is never used.
"""

from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import HostError, describe
from .pm import ENTRY_POINT_GROUP

HOST_NAME = "stratagate-harness"
HOST_VERSION = "0.1.0"
MANIFEST_FILE = "plugin.yml"


class HostRequirement(BaseModel):
    """Which host the plugin runs in and which host versions it supports."""

    name: str
    compatible: str


class Manifest(BaseModel):
    """The parts of ``plugin.yml`` the host reads; other keys are kept but not checked."""

    model_config = ConfigDict(extra="allow")

    name: str
    version: str
    entry: str
    host: HostRequirement
    hooks: list[str] = []
    tools: list[str] = []


def installed_plugins() -> dict[str, EntryPoint]:
    """Installed plugins by name (the ``stratagate.plugins`` entry-point group)."""
    return {point.name: point for point in entry_points(group=ENTRY_POINT_GROUP)}


def check_plugin(name: str) -> Manifest:
    """The manifest of installed plugin ``name``, once it is known to be compatible."""
    installed = installed_plugins()
    if name not in installed:
        known = ", ".join(sorted(installed)) or "none"
        raise HostError(f"plugin {name!r} is not installed (installed plugins: {known})")
    manifest = find_manifest(installed[name])
    check_compatible(manifest)
    return manifest


def load_plugin(name: str) -> object:
    """What a compatible plugin's entry point names: a class (``Host.from_profile`` makes one
    instance per host) or a module (registered as it is)."""
    check_plugin(name)
    try:
        return installed_plugins()[name].load()
    except Exception as error:
        raise HostError(f"plugin {name!r} failed to load: {error}") from error


def find_manifest(point: EntryPoint) -> Manifest:
    """The manifest whose ``entry`` is this entry point's value."""
    candidates = manifest_candidates(point.module)
    for path in candidates:
        if path.is_file():
            manifest = read_manifest(path)
            if manifest.entry == point.value:
                return manifest
    looked = ", ".join(str(path) for path in candidates)
    raise HostError(f"plugin {point.name!r} has no {MANIFEST_FILE} for {point.value} ({looked})")


def manifest_candidates(module_name: str) -> list[Path]:
    """Inside the top-level package first, then beside it."""
    top = import_module(module_name.split(".")[0])
    if top.__file__ is None:
        return []
    package_dir = Path(top.__file__).resolve().parent
    return [package_dir / MANIFEST_FILE, package_dir.parent / MANIFEST_FILE]


def read_manifest(path: Path) -> Manifest:
    try:
        return Manifest.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except ValidationError as error:
        raise HostError(f"invalid plugin manifest {path}: {describe(error)}") from error
    except yaml.YAMLError as error:
        raise HostError(f"invalid plugin manifest {path}: {error}") from error


def check_compatible(manifest: Manifest, version: str | None = None) -> None:
    """Refuse a plugin written for another host or another host version range."""
    wanted = manifest.host
    version = version or HOST_VERSION
    if wanted.name != HOST_NAME:
        raise HostError(
            f"plugin {manifest.name!r} {manifest.version} is for host {wanted.name!r}, "
            f"not {HOST_NAME!r}"
        )
    if not version_in_range(version, wanted.compatible):
        raise HostError(
            f"plugin {manifest.name!r} {manifest.version} needs {HOST_NAME} "
            f"{wanted.compatible}, but this host is {version}; install a matching version"
        )


def version_in_range(version: str, spec: str) -> bool:
    """``spec`` is a PEP 440 range such as ``>=0.1,<0.2`` or ``~=0.1``.

    The version is the host's own, installed one, so a pre-release is judged by PEP 440
    ordering alone (``0.1.0rc1`` comes before ``0.1``) rather than excluded outright.
    """
    try:
        wanted = SpecifierSet(spec)
    except InvalidSpecifier:
        raise HostError(
            f"cannot read the compatibility range {spec!r} (use e.g. >=0.1,<0.2)"
        ) from None
    try:
        return wanted.contains(Version(version), prereleases=True)
    except InvalidVersion:
        raise HostError(f"cannot read the version {version!r}") from None
