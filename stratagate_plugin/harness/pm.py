"""The plugin manager: specs, default plugins, and calling hooks that may be async.

pluggy calls implementations synchronously and knows nothing of coroutines, so ``call_hook``
calls each implementation itself (in pluggy's order) and awaits whatever is awaitable.
"""

import importlib
import inspect
import logging
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs

logger = logging.getLogger(__name__)

PROJECT = "stratagate"
ENTRY_POINT_GROUP = "stratagate.plugins"
DEFAULT_PLUGINS = ("stratagate_plugin.harness.builtins",)


def make_plugin_manager(
    plugins: Iterable[tuple[str, ModuleType | object]] = (),
) -> pluggy.PluginManager:
    """A manager with the specs, the default plugins and ``plugins`` (name, object) registered."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    pm.check_pending()
    return pm


async def await_me_maybe(value: Any) -> Any:
    """``value``, awaited first if it is awaitable (datasette's idiom)."""
    if inspect.isawaitable(value):
        return await value
    return value


async def call_hook(
    pm: pluggy.PluginManager, name: str, *, isolate: bool = False, **kwargs: Any
) -> list[Any]:
    """Call every implementation of hook ``name``, awaiting results; ``None`` results dropped.

    With ``isolate`` a failing implementation is logged and skipped instead of raised, so
    one plugin cannot break a turn or keep the others from running.
    """
    caller = getattr(pm.hook, name)
    _check_arguments(caller, name, kwargs)
    results = []
    for impl in reversed(caller.get_hookimpls()):
        try:
            value = impl.function(*[kwargs[arg] for arg in impl.argnames])
            result = await await_me_maybe(value)
        except Exception as error:
            if not isolate:
                raise
            logger.error("plugin %s failed in hook %s: %s", impl.plugin_name, name, error)
            logger.debug("plugin %s failed in hook %s", impl.plugin_name, name, exc_info=True)
            continue
        if result is not None:
            results.append(result)
    return results


def _check_arguments(caller: pluggy.HookCaller, name: str, kwargs: dict[str, Any]) -> None:
    """Programming mistakes fail loudly: unknown hook, missing arguments, wrappers."""
    if caller.spec is None:
        raise TypeError(f"no hookspec named {name}")
    missing = set(caller.spec.argnames) - set(kwargs)
    if missing:
        raise TypeError(f"hook {name} called without {sorted(missing)}")
    for impl in caller.get_hookimpls():
        if impl.wrapper or impl.hookwrapper:
            raise TypeError(f"{impl.plugin_name}: wrappers cannot await async hooks ({name})")
