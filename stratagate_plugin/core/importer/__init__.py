"""Importing memories and conversations made elsewhere."""
