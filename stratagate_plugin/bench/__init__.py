"""Offline benchmarks (not imported by the plugin at run time)."""
