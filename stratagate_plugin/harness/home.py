"""The harness's home directory: profiles, sessions and each plugin's data live under it."""

import os
from pathlib import Path


def harness_home() -> Path:
    """``$STRATAGATE_HOME``, else ``~/.stratagate`` (the memory plugin's database lives there
    too, by the same rule, so one variable moves everything)."""
    return Path(os.environ.get("STRATAGATE_HOME") or Path.home() / ".stratagate")
