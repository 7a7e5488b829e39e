"""Analysing an import job: its use cases live in ``service.py``, the only module here."""
