"""Blocks: sealed turns with six views, their decay and expansion."""
