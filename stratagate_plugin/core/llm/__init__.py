"""Model access for structured tasks: one protocol, three implementations.

``base`` (protocol, errors, the scripted model for tests), ``offline`` (the deterministic
embedded default) and ``http`` (OpenAI-compatible; the only module importing httpx).
"""
