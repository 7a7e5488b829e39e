"""StrataGate: local-first long-term memory for LLM agent harnesses."""

__version__ = "0.1.0"
