"""Purging words from memory and every copy of it (issue 25)."""
