"""The StrataGate plugin's hook implementations (filled in by the host integration)."""

PLUGIN_NAME = "stratagate-memory"
HOOKS: tuple[str, ...] = ()
TOOLS: tuple[str, ...] = ()
