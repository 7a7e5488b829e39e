"""The fault matrix's scenarios (issue #13), importable by ``benchmarks/faults.py`` and the
short CI version in ``tests/test_faults.py``; each scenario returns ``results.Row`` values."""
