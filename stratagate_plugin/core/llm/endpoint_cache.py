"""Which structured-output mode a model endpoint takes, remembered across processes.

Finding out costs a refused request or two (a 400 naming ``response_format``, a reply with
no JSON in it), so the answer is kept per endpoint (base URL + model) in a small JSON file,
``$STRATAGATE_HOME/cache/model-endpoints.json``, with when it was found and the endpoint's
last error (one line, the key scrubbed), which the settings page shows. Core is handed the
path by the wiring (``select.py``); without one nothing is remembered.

It is a cache, not a record: written atomically (a temporary file renamed over it), a
corrupt file is ignored with a warning and rewritten by the next record, and two processes
recording at once may lose one entry, which is then simply found again.
"""

import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..clock import iso, utc_now
from ..text.clean import valid_text
from ..text.secrets import redact_secrets
from .endpoint import normal_base_url
from .request_body import TOP_MODE, Compat, Mode

CACHE_FILE = Path("cache") / "model-endpoints.json"
_ERROR_LIMIT = 300
logger = logging.getLogger(__name__)


class EndpointState(BaseModel):
    """What is known of one endpoint: its mode (None: not found yet) and its last error."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    mode: Mode | None = None
    strict: bool = True
    checked_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None


def endpoint_key(base_url: str, model: str) -> str:
    return f"{normal_base_url(base_url)} {model.strip()}"


def load_endpoint(path: Path | None, base_url: str, model: str) -> EndpointState:
    """The state remembered for ``model`` at ``base_url``; an empty one when none is."""
    if path is None:
        return EndpointState()
    return load_endpoints(path).get(endpoint_key(base_url, model), EndpointState())


def load_endpoints(path: Path) -> dict[str, EndpointState]:
    """Every remembered endpoint; a missing file is none, a corrupt one is ignored (warned)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as error:
        logger.warning(
            "stratagate: warning: ignoring the unreadable model cache %s: %s", path, error
        )
        return {}
    if not isinstance(data, dict):
        logger.warning("stratagate: warning: ignoring the model cache %s: not a mapping", path)
        return {}
    return {key: state for key, value in data.items() if (state := _state(key, value))}


def record_endpoint(
    path: Path | None,
    base_url: str,
    model: str,
    *,
    mode: tuple[Mode, bool] | None = None,
    error: str | None = None,
) -> EndpointState:
    """Remember ``mode`` (with its ``strict``) and/or the last ``error`` of an endpoint; the
    state now. A cache that cannot be written is a warning: the call itself went on."""
    key = endpoint_key(base_url, model)
    endpoints = load_endpoints(path) if path is not None else {}
    changes: dict[str, Any] = {}
    now = iso(utc_now())
    if mode is not None:
        changes |= {"mode": mode[0], "strict": mode[1], "checked_at": now}
    if error is not None:
        changes |= {"last_error": one_line(error), "last_error_at": now}
    state = endpoints.get(key, EndpointState()).model_copy(update=changes)
    if path is not None:
        endpoints[key] = state
        _write(path, {name: entry.model_dump() for name, entry in endpoints.items()})
    return state


@dataclass
class RememberedMode:
    """One model instance's use of the cache: the remembered mode applied before its first
    request, and what it finds recorded (a file write only when something changed)."""

    path: Path | None
    base_url: str
    model: str
    loaded: bool = False
    recorded: tuple[Mode, bool] | None = None

    def start(self, compat: Compat) -> None:
        """Set ``compat`` to the remembered mode, once, before the first request."""
        if self.loaded:
            return
        self.loaded = True
        state = load_endpoint(self.path, self.base_url, self.model)
        if state.mode is not None:
            compat.use(state.mode, state.strict)
            self.recorded = (state.mode, state.strict)

    def forget(self) -> None:
        """Ignore what is remembered: the mode is found again from the top."""
        self.loaded, self.recorded = True, None

    def remember(self, compat: Compat, *, confirmed: bool, error: str | None = None) -> None:
        """Record a mode that changed (or that a valid answer confirmed) and the last
        error; the top mode unconfirmed (a timeout on the first call) is no finding."""
        shape = (compat.mode, compat.strict)
        found = shape != self.recorded and (confirmed or shape != TOP_MODE)
        if self.path is None or not (found or error):
            return
        if found:
            self.recorded = shape
        mode = shape if found else None
        record_endpoint(self.path, self.base_url, self.model, mode=mode, error=error)


def one_line(text: str) -> str:
    """An error as the cache keeps it: one line, secrets redacted, at most 300 characters."""
    line = redact_secrets(" ".join(valid_text(text).split()))
    return line if len(line) <= _ERROR_LIMIT else line[: _ERROR_LIMIT - 1] + "…"


def _state(key: str, value: Any) -> EndpointState | None:
    try:
        return EndpointState.model_validate(value)
    except ValidationError:
        logger.warning("stratagate: warning: ignoring the model cache's entry for %s", key)
        return None


def _write(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    temp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, path)
    except OSError as error:
        logger.warning("stratagate: warning: cannot write the model cache %s: %s", path, error)
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
