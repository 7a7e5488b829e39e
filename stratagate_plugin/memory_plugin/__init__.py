"""The StrataGate memory plugin: the harness's hooks and tools over the core engine."""
