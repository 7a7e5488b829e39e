"""Benchmarks; a package so tests can call the fault matrix's parts (tests/test_faults.py)."""
