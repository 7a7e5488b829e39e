"""The running host: plugin manager, profile, and what plugins registered at startup."""

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pluggy

from .errors import HostError
from .home import harness_home
from .manifest import HOST_NAME, HOST_VERSION, load_plugin
from .pm import call_hook, make_plugin_manager
from .profiles import Profile, save_profile
from .tools import as_tool
from .types import HostAPI, SettingsSection, Tool


class Host:
    """One harness process. ``start()`` runs register_settings, startup, register_tools."""

    name = HOST_NAME
    version = HOST_VERSION

    def __init__(self, pm: pluggy.PluginManager, profile: Profile, cwd: Path | None = None):
        self.pm = pm
        self.profile = profile
        self.cwd = (cwd or Path.cwd()).resolve()
        self.tools: dict[str, Tool] = {}
        self.settings_sections: dict[str, SettingsSection] = {}
        self.started = False

    @classmethod
    def from_profile(cls, profile: Profile, cwd: Path | None = None) -> "Host":
        """A host with the profile's enabled plugins loaded (each checked for compatibility)."""
        plugins = [(name, new_plugin(load_plugin(name))) for name in profile.plugins]
        return cls(make_plugin_manager(plugins), profile, cwd)

    @property
    def home(self) -> Path:
        """``$STRATAGATE_HOME``: where profiles, sessions and plugin data live."""
        return harness_home()

    def settings(self, section_id: str) -> dict[str, Any]:
        """The section's defaults overlaid with the values saved in the profile."""
        section = self.settings_sections.get(section_id)
        defaults = section.defaults if section else {}
        return {**defaults, **self.profile.settings.get(section_id, {})}

    def save_settings(self, section_id: str, values: dict[str, Any]) -> dict[str, Any]:
        """Merge ``values`` into the profile's saved settings and write the profile."""
        saved = self.profile.settings.setdefault(section_id, {})
        saved.update(values)
        save_profile(self.profile)
        return self.settings(section_id)

    async def start(self) -> None:
        """Plugins that started are shut down again if a later step fails."""
        await call_hook(self.pm, "register_settings", host=self, register=self._add_settings)
        self.started = True
        try:
            await call_hook(self.pm, "startup", host=self)
            await call_hook(self.pm, "register_tools", host=self, register=self._add_tool)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Call shutdown on every plugin; one failing does not stop the others."""
        if self.started:
            self.started = False
            await call_hook(self.pm, "shutdown", host=self, isolate=True)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def _add_tool(self, item: Tool | Callable[..., Any], name: str | None = None) -> None:
        tool = as_tool(item, name)
        if tool.name in self.tools:
            raise HostError(f"two plugins register a tool named {tool.name!r}")
        self.tools[tool.name] = tool

    def _add_settings(self, section: SettingsSection) -> None:
        if section.id in self.settings_sections:
            raise HostError(f"two plugins register settings named {section.id!r}")
        self.settings_sections[section.id] = section


_HOST_OFFERS_THE_API: type[HostAPI] = Host  # mypy checks that Host keeps HostAPI's promises


def new_plugin(loaded: object) -> object:
    """A fresh instance of a plugin class, so its state belongs to one host; a module as it is."""
    return loaded() if isinstance(loaded, type) else loaded
