"""Retrieval: the raw, event and block channels, their fusion, and automatic recall."""
