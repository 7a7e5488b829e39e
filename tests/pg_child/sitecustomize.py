"""A child process of a ``--backend postgresql`` test opens its memories on the server too.

tests/backend.py puts this directory first on the ``PYTHONPATH`` of such a test and names
the test's databases in ``SG_TEST_SERVER_FILES``: Python imports this module at start-up,
and the CLI, ``stratagate serve`` or an MCP server the test starts opens the same database
for a file path as the test itself (tests/server_files.py). Without the variable, nothing.
"""

import importlib.util
import os
from pathlib import Path

if os.environ.get("SG_TEST_SERVER_FILES"):
    # Loaded by its path: the tests' dir is not put on sys.path (its modules' names).
    _where = Path(__file__).resolve().parents[1] / "server_files.py"
    _spec = importlib.util.spec_from_file_location("sg_test_server_files", _where)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    _plan = _module.ServerPlan.from_environment()
    if _plan is not None:
        _module.redirect_engines(_plan)
