"""The resident profile and the memory spaces (namespaces) turns are recorded in."""
