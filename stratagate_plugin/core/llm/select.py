"""Choosing the structured-task model: the configured HTTP endpoint, else the offline one.

Configuration comes from the caller: a harness profile's ``settings`` and, when the wiring
code (CLI, plugin runtime) hands it over, an ``environ`` with ``STRATAGATE_BASE_URL`` +
``STRATAGATE_MODEL`` (and the key in the variable named by ``STRATAGATE_API_KEY_ENV``,
default ``STRATAGATE_API_KEY``). Core never reads the process environment itself, so a
test or an embedding program gets the offline model unless it asks for another.
"""

from collections.abc import Mapping

from .base import ModelError, StructuredModel


def model_from_settings(
    settings: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> StructuredModel:
    """The endpoint ``settings`` (else ``environ``) names; nothing named → offline."""
    values = dict(settings or {})
    env = environ or {}
    base_url = str(values.get("base_url") or env.get("STRATAGATE_BASE_URL") or "")
    model = str(values.get("model") or env.get("STRATAGATE_MODEL") or "")
    if not base_url and not model:
        from .offline.model import OfflineModel

        return OfflineModel()
    if not (base_url and model):
        raise ModelError("a model endpoint needs both a base URL and a model name")
    from .http import HttpModel, HttpModelConfig

    key_env = values.get("api_key_env") or env.get("STRATAGATE_API_KEY_ENV", "STRATAGATE_API_KEY")
    return HttpModel(HttpModelConfig(base_url=base_url, model=model, api_key_env=str(key_env)))
