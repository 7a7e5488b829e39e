"""Use-case groups that make up the ``StrataGate`` façade (one module per group)."""
