"""Choosing the structured-task model: the configured HTTP endpoint, else the offline one.

One rule for every caller (the CLI's commands, the plugin's background derivation, the
benchmark): ``settings`` (a harness profile's ``model:`` block, or the plugin's own) come
first, then the ``environ`` the wiring code hands over: ``STRATAGATE_BASE_URL`` +
``STRATAGATE_MODEL``, the key in the variable named by ``STRATAGATE_API_KEY_ENV`` (default
``STRATAGATE_API_KEY``), and any other ``HttpModelConfig`` field as ``STRATAGATE_<FIELD>``
(``STRATAGATE_TIMEOUT_S``, ``STRATAGATE_MAX_ATTEMPTS``, …). Core never reads the process
environment itself, so a test or an embedding program gets the offline model unless it
asks for another.

The endpoint's structured-output mode is remembered in the endpoint cache
(``endpoint_cache.py``) under the home the ``environ`` names (``STRATAGATE_HOME``, else
``~/.stratagate``), or at the path the caller gives; no ``environ``, no cache.
"""

from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from ..errors import validation_problems
from .base import ModelConfigError, StructuredModel
from .endpoint import HttpModelConfig
from .endpoint_cache import CACHE_FILE

ENV_PREFIX = "STRATAGATE_"
DEFAULT_KEY_ENV = "STRATAGATE_API_KEY"
ENDPOINT = ("base_url", "model", "api_key_env")


def resolve_model_settings(
    settings: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, object]:
    """The HTTP model's settings, field by field from ``settings`` then ``environ``; empty
    when neither names an endpoint.

    The endpoint (URL, model, key variable) is taken whole from one side: a profile's URL
    with the environment's model name would ask a server for a model it does not have, and
    a profile without ``api_key_env`` means a server that needs no key.
    """
    given = {name: value for name, value in (settings or {}).items() if value not in (None, "")}
    env = environ or {}
    if given.get("base_url") or given.get("model"):
        endpoint = {name: given.get(name) for name in ENDPOINT}
    else:
        endpoint = {name: env.get(ENV_PREFIX + name.upper()) for name in ENDPOINT}
        if endpoint["base_url"] or endpoint["model"]:
            endpoint["api_key_env"] = endpoint["api_key_env"] or DEFAULT_KEY_ENV
    if not (endpoint["base_url"] or endpoint["model"]):
        return {}
    tuning = {
        name: given.get(name, env.get(ENV_PREFIX + name.upper()))
        for name in HttpModelConfig.model_fields.keys() - set(ENDPOINT)
    }
    unknown = {name: value for name, value in given.items() if name not in tuning}
    merged = {**unknown, **tuning, **endpoint}
    return {name: value for name, value in merged.items() if value not in (None, "")}


def model_from_settings(
    settings: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    modes_path: Path | None = None,
) -> StructuredModel:
    """The endpoint ``settings`` (else ``environ``) names; nothing named → offline. Its
    mode is remembered at ``modes_path``, else in the cache of the home ``environ`` names."""
    values = resolve_model_settings(settings, environ)
    if not values:
        from .offline.model import OfflineModel

        return OfflineModel()
    if not (values.get("base_url") and values.get("model")):
        raise ModelConfigError("a model endpoint needs both a base URL and a model name")
    from .http import HttpModel

    cache = modes_path or (endpoint_cache_path(environ) if environ is not None else None)
    return HttpModel(http_config(values), modes_path=cache)


def endpoint_cache_path(environ: Mapping[str, str]) -> Path:
    """``$STRATAGATE_HOME/cache/model-endpoints.json`` for the home ``environ`` names."""
    home = environ.get("STRATAGATE_HOME") or Path.home() / ".stratagate"
    return Path(home) / CACHE_FILE


def http_config(values: Mapping[str, object]) -> HttpModelConfig:
    """``values`` validated; a mistake is one ``ModelConfigError`` line naming the field."""
    try:
        return HttpModelConfig.model_validate(values)
    except ValidationError as error:
        problems = "; ".join(validation_problems(error))
        raise ModelConfigError(f"invalid model settings: {problems}") from error
